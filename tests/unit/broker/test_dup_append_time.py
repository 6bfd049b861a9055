"""A retried idempotent batch (a duplicate: same producer, epoch and sequences as a batch the
partition holds) is answered as Kafka's UnifiedLog.append answers it: the original batch's
offsets and, as ``log_append_time_ms``, the timestamp its producer state recorded for it (the
batch's max timestamp), whatever the topic's ``message.timestamp.type``. Kafka sets
``appendInfo.setLogAppendTime(duplicate.timestamp)`` unconditionally, so a Java producer's
retried send reports the batch's timestamp, not -1. Before, a CreateTime topic answered -1."""

from __future__ import annotations

import time

import pytest

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_record_checks import create, produce
from tiered_mq.record.records import encode_batch

INIT_PRODUCER_ID = 22


async def producer_id(client: Client) -> tuple[int, int]:
    body = {"transactional_id": None, "transaction_timeout_ms": 60000}
    r = await client.call(INIT_PRODUCER_ID, 1, body)
    assert r["error_code"] == 0
    return r["producer_id"], r["producer_epoch"]


@pytest.mark.parametrize("timestamp_type", ["CreateTime", "LogAppendTime"])
async def test_a_duplicate_answers_the_recorded_timestamp(
    client: Client, timestamp_type: str
) -> None:
    await create(client, "t", **{"message.timestamp.type": timestamp_type})
    pid, epoch = await producer_id(client)
    now = int(time.time() * 1000)
    stamps = [now - 300, now - 100, now - 200]

    def batch(seq: int) -> bytes:
        records = [(b"k", b"v", [], t) for t in stamps]
        return encode_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)

    await produce(client, "t", batch(0))  # offsets 0-2
    first = await produce(client, "t", batch(3))  # offsets 3-5
    assert (first["error_code"], first["base_offset"]) == (0, 3)
    # what the original answer said about time: the broker's clock, or none for CreateTime
    recorded = first["log_append_time_ms"] if timestamp_type == "LogAppendTime" else now - 100
    if timestamp_type == "CreateTime":
        assert first["log_append_time_ms"] == -1

    retried = await produce(client, "t", batch(3))  # the answer was lost: the producer retries
    assert (retried["error_code"], retried["base_offset"]) == (0, 3)
    assert retried["log_append_time_ms"] == recorded
    again = await produce(client, "t", batch(3))
    assert again["log_append_time_ms"] == recorded
