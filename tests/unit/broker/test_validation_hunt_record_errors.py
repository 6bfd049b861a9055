"""Produce v8 names the refused records (KIP-467 ``record_errors``, as Kafka's
RecordValidationException does): every record without a key on a compacted topic
(INVALID_RECORD) and every record outside the timestamp window or stamped LogAppendTime by the
producer on a LogAppendTime topic (INVALID_TIMESTAMP), with Kafka's summary as
``error_message``. Before, ``record_errors`` was always empty. Nothing is appended."""

from __future__ import annotations

import time

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_record_checks import create, produce
from tiered_mq.errors import InvalidRecordError, InvalidTimestampError
from tiered_mq.record.compression import LZ4
from tiered_mq.record.records import encode_batch

DAY = 86_400_000


def indices(answer: dict[str, object]) -> list[int]:
    return [e["batch_index"] for e in answer["record_errors"]]  # type: ignore[attr-defined]


async def test_records_without_key_on_a_compacted_topic(client: Client) -> None:
    await create(client, "c", **{"cleanup.policy": "compact"})
    records = [(b"a", b"1", [], None), (None, b"2", [], None), (None, b"3", [], None)]
    answer = await produce(client, "c", encode_batch(records, compression=LZ4))
    assert answer["error_code"] == InvalidRecordError.errno
    assert indices(answer) == [1, 2]
    assert "without key" in answer["record_errors"][0]["batch_index_error_message"]
    assert answer["error_message"].startswith("One or more records have been rejected due to 2")
    assert (await produce(client, "c", encode_batch([(b"a", b"1", [], None)])))["base_offset"] == 0


async def test_records_outside_the_timestamp_window(client: Client) -> None:
    await create(client, "w", **{"message.timestamp.before.max.ms": str(DAY)})
    now = int(time.time() * 1000)
    stamps = [now, now - 2 * DAY, now, now - 3 * DAY]
    answer = await produce(client, "w", encode_batch([(b"k", b"v", [], t) for t in stamps]))
    assert answer["error_code"] == InvalidTimestampError.errno
    assert indices(answer) == [1, 3]
    one_old = encode_batch([(b"k", b"v", [], now - 2 * DAY)])
    assert indices(await produce(client, "w", one_old)) == [0]


async def test_log_append_time_from_a_producer_on_a_log_append_time_topic(client: Client) -> None:
    await create(client, "l", **{"message.timestamp.type": "LogAppendTime"})
    stamped = encode_batch([(b"k", b"v", [], None)] * 2, log_append_time=True)
    answer = await produce(client, "l", stamped)
    assert answer["error_code"] == InvalidTimestampError.errno
    assert indices(answer) == [0, 1]
    assert (await produce(client, "l", encode_batch([(b"k", b"v", [], None)])))["base_offset"] == 0
