"""What a consumer reads after a hand-written producer sent broken batches to a topic whose
records the broker decodes (``compression.type=gzip``: it re-encodes them): only the good
records. Before, a CRC-valid batch holding one record more than its count, or a second record
with a broken length, was accepted (only its first record was looked at); librdkafka then read
an offset past the high watermark and reset, or silently lost the records after the break."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess
from tests.integration.client_helpers import produce_values, read_partition
from tests.integration.test_broker_bad_input import produce
from tests.unit.broker.test_produce_record_checks import record
from tests.unit.broker.test_validation_hunt_records import batch

pytestmark = pytest.mark.integration
INVALID_RECORD = 87


@pytest.mark.parametrize("codec", [0, 3])
def test_refused_batches_leave_only_good_records(shared_broker: BrokerProcess, codec: int) -> None:
    topic = f"hunt-{codec}"
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    new = NewTopic(topic, 1, 1, config={"compression.type": "gzip"})
    admin.create_topics([new])[topic].result(30)
    a, b, c = record(b"a", 0), record(b"b", 1), record(b"c", 2)
    for bad in (batch([a, b, c], 2, codec), batch([a, b"\x7f" + b[1:], c], 3, codec)):
        assert produce(shared_broker, topic, bad)["error_code"] == INVALID_RECORD
    produce_values(shared_broker.bootstrap, topic, b"x", b"y")
    assert read_partition(shared_broker.bootstrap, topic) == [b"x", b"y"]
