from __future__ import annotations

import confluent_kafka
import pytest

from tests.unit.client.fakes import FakeMessage
from tiered_mq.client.errors import ClientError
from tiered_mq.client.record import ConsumedRecord


def test_broker_error_uses_kafka_name() -> None:
    err = confluent_kafka.KafkaError(confluent_kafka.KafkaError.UNKNOWN_TOPIC_OR_PART, "gone")
    wrapped = ClientError.wrap(confluent_kafka.KafkaException(err), "delete topic x")
    assert wrapped.name == "UNKNOWN_TOPIC_OR_PARTITION"  # librdkafka says UNKNOWN_TOPIC_OR_PART
    assert wrapped.code == 3
    assert str(wrapped) == "UNKNOWN_TOPIC_OR_PARTITION: delete topic x: gone"


def test_local_error_keeps_librdkafka_name() -> None:
    err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._TRANSPORT, "down")
    wrapped = ClientError.from_kafka_error(err)
    assert wrapped.name == "_TRANSPORT" and wrapped.code < 0


def test_a_bare_kafka_error_keeps_its_name() -> None:
    """What an admin result's ``errors`` list holds (a KafkaError, not an exception): the CLI's
    hint keys on the name, which used to come out as "KafkaError"."""
    err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._TIMED_OUT, "Local: Timed out")
    wrapped = ClientError.wrap(err, "list groups")
    assert wrapped.name == "_TIMED_OUT"
    assert str(wrapped) == "_TIMED_OUT: list groups: Local: Timed out"


def test_from_a_code_the_sdk_decoded_itself() -> None:
    err = ClientError.from_code(40, "Invalid value x for log.retention.ms", "alter configs")
    assert (err.name, err.code) == ("INVALID_CONFIG", 40)
    assert str(err) == "INVALID_CONFIG: alter configs: Invalid value x for log.retention.ms"
    assert str(ClientError.from_code(42, None, "ctx")) == "INVALID_REQUEST: ctx"
    assert ClientError.from_code(9999, "?").name == "ERROR_9999"


def test_wrap_other_exceptions() -> None:
    wrapped = ClientError.wrap(RuntimeError("x"), "ctx")
    assert str(wrapped) == "RuntimeError: ctx: x"
    same = ClientError("A", "b")
    assert ClientError.wrap(same) is same


def test_record_from_message_and_header_lookup() -> None:
    msg = FakeMessage("t", 2, 40, b"v", b"k", headers=[("a", b"1"), ("b", None), ("a", b"2")])
    rec = ConsumedRecord.from_message(msg)
    assert (rec.topic, rec.partition, rec.offset, rec.key, rec.value) == ("t", 2, 40, b"k", b"v")
    assert rec.timestamp_ms == 1040
    assert rec.header("a") == b"2"
    assert rec.header("b") is None
    assert rec.header("zz") is None
    with pytest.raises(AttributeError):
        rec.offset = 1  # type: ignore[misc]
