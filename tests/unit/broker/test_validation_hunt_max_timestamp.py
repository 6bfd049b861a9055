"""Where produce decodes records (here a compacted topic, and topics with
``message.timestamp.before.max.ms``), a CreateTime batch is stored with its records' highest
timestamp as maxTimestamp, as Kafka's LogValidator sets it, whatever the producer wrote there
(elsewhere the hot path stays per-batch and trusts the header: handlers/produce.py). Before,
the header was trusted there too: a maxTimestamp an hour ahead of the records moved the
partition's max timestamp (ListOffsets MAX_TIMESTAMP, the time index, time retention) there,
and records beyond ``message.timestamp.after.max.ms`` passed under a maxTimestamp that hid
them."""

from __future__ import annotations

import struct
import time

import crc32c

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_record_checks import create, produce
from tiered_mq.errors import InvalidTimestampError
from tiered_mq.record.compression import LZ4
from tiered_mq.record.records import decode_batches, encode_batch

FETCH, LIST_OFFSETS, MAX_TIMESTAMP = 1, 2, -3
HOUR = 3_600_000


def claiming(max_timestamp: int, stamps: list[int], codec: int = 0) -> bytes:
    """A batch of records at ``stamps`` whose header says ``max_timestamp`` (CRC valid)."""
    out = bytearray(encode_batch([(b"k", b"v", [], t) for t in stamps], compression=codec))
    struct.pack_into(">q", out, 35, max_timestamp)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


async def test_the_records_highest_timestamp_is_stored(client: Client) -> None:
    await create(client, "t", **{"cleanup.policy": "compact"})
    now = int(time.time() * 1000)
    stamps = [now - 10, now - 5, now - 7]
    assert (await produce(client, "t", claiming(now + HOUR // 2, stamps)))["error_code"] == 0
    assert (await produce(client, "t", claiming(now - 10, stamps, LZ4)))["error_code"] == 0
    data = (await client.call(FETCH, 11, fetch_body("t", 0)))["responses"][0]["partitions"][0]
    assert [h.max_timestamp for h, _ in decode_batches(data["records"])] == [now - 5] * 2
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -3}]}],
    }
    answer = (await client.call(LIST_OFFSETS, 7, body))["topics"][0]["partitions"][0]
    assert (answer["timestamp"], answer["offset"]) == (now - 5, 1)


async def test_a_record_past_the_window_is_refused_under_a_lying_header(client: Client) -> None:
    window = {
        "message.timestamp.before.max.ms": str(HOUR),
        "message.timestamp.after.max.ms": str(HOUR),
    }
    await create(client, "w", **window)
    now = int(time.time() * 1000)
    hidden = claiming(now, [now, now + 5 * HOUR])
    assert (await produce(client, "w", hidden))["error_code"] == InvalidTimestampError.errno


async def test_one_old_record_under_a_recent_base_timestamp_is_refused(client: Client) -> None:
    # its timestamp is baseTimestamp + timestampDelta: only the record's own one counts
    await create(client, "b", **{"message.timestamp.before.max.ms": str(HOUR)})
    now = int(time.time() * 1000)
    old = bytearray(encode_batch([(b"k", b"v", [], now - 5 * HOUR)], base_timestamp=now))
    struct.pack_into(">q", old, 35, now)  # the header's max agrees with its base
    struct.pack_into(">I", old, 17, crc32c.crc32c(bytes(old[21:])))
    assert (await produce(client, "b", bytes(old)))["error_code"] == InvalidTimestampError.errno
