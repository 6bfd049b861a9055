"""The znode data formats: Kafka's JSON, and ids in Kafka's base64 form."""

from __future__ import annotations

import json

from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import BrokerInfo, PartitionState


def test_ids_use_kafkas_uuid_text() -> None:
    hex_id = bytes(range(16)).hex()
    assert znodes.uuid_to_kafka(hex_id) == "AAECAwQFBgcICQoLDA0ODw"  # Kafka's Uuid.toString
    assert znodes.uuid_from_kafka("AAECAwQFBgcICQoLDA0ODw") == hex_id
    assert len(znodes.new_cluster_id()) == 22


def test_topic_and_partition_state_round_trip() -> None:
    data = znodes.encode_topic("ab" * 16, {1: [2, 3], 0: [3, 2]})
    obj = json.loads(data)
    assert obj["partitions"] == {"0": [3, 2], "1": [2, 3]}
    assert znodes.decode_topic(data) == ("ab" * 16, {0: [3, 2], 1: [2, 3]})
    state = znodes.encode_partition_state(PartitionState(3, 7, (3, 2), (3, 2)), 4)
    assert json.loads(state) == {
        "version": 1,
        "leader": 3,
        "leader_epoch": 7,
        "isr": [3, 2],
        "controller_epoch": 4,
    }
    assert znodes.decode_partition_state(state) == PartitionState(3, 7, (3, 2), ())


def test_producer_id_block_end_is_inclusive_as_in_kafka() -> None:
    data = znodes.encode_producer_id_block(1, 1000, 2000)
    assert json.loads(data)["block_end"] == "1999"
    assert znodes.decode_producer_id_block_end(data) == 2000
    assert znodes.decode_producer_id_block_end(None) == 0


def test_broker_registration_carries_its_endpoint() -> None:
    data = znodes.encode_broker(BrokerInfo(2, "b2", 9093, rack="r1"))
    assert json.loads(data)["endpoints"] == ["PLAINTEXT://b2:9093"]
    assert znodes.decode_broker(2, data) == BrokerInfo(2, "b2", 9093, "r1")
    assert znodes.decode_controller(znodes.encode_controller(2)) == 2
    assert znodes.decode_controller(None) == -1


def test_broker_registration_lists_every_listener_as_kafka_does() -> None:
    """Kafka's BrokerIdZNode: every advertised listener in ``endpoints``, their protocols in
    ``listener_security_protocol_map``, host/port of the first PLAINTEXT one (null, -1 if
    none)."""
    sasl = ("EXTERNAL", "SASL_SSL", "kafka.example.com", 9092)
    inside = ("INTERNAL", "PLAINTEXT", "broker-1", 29093)
    obj = json.loads(znodes.encode_broker(BrokerInfo(1, "x", 1, endpoints=(sasl, inside))))
    assert obj["endpoints"] == ["EXTERNAL://kafka.example.com:9092", "INTERNAL://broker-1:29093"]
    assert obj["listener_security_protocol_map"] == {
        "EXTERNAL": "SASL_SSL",
        "INTERNAL": "PLAINTEXT",
    }
    assert (obj["host"], obj["port"]) == ("broker-1", 29093)
    only_tls = znodes.encode_broker(
        BrokerInfo(1, "::1", 9094, endpoints=(("S", "SSL", "::1", 9094),))
    )
    assert (json.loads(only_tls)["host"], json.loads(only_tls)["port"]) == (None, -1)
    assert json.loads(only_tls)["endpoints"] == ["S://[::1]:9094"]
    assert znodes.decode_broker(1, only_tls) == BrokerInfo(1, "::1", 9094)
