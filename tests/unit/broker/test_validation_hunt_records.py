"""Where produce decodes records (a compacted topic, a ``compression.type`` that re-encodes, a
topic with ``message.timestamp.before.max.ms``), it reads every record of a batch first, as
Kafka's LogValidator does, in every codec.

Before, only the first record's start was looked at: a CRC-valid batch whose later records
were broken, with bytes after the last record, more records than its count, or offset deltas
other than 0..n-1 was stored. Consumers then silently lost records, failed the fetch (Java:
"records still remaining") or, for an offset past the high watermark, reset and re-read the
partition forever. Now each is INVALID_RECORD (CORRUPT_MESSAGE before v8) and nothing is
appended. So is a 32-bit varint (a length) longer than the 5 bytes Java's readers accept. On a
topic whose records need no decoding, the hot path stays per-batch (handlers/produce.py)."""

from __future__ import annotations

import struct

import crc32c
import pytest

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_record_checks import create, produce, record
from tiered_mq.errors import CorruptRecordError, InvalidRecordError
from tiered_mq.record.batch import HEADER
from tiered_mq.record.compression import compress
from tiered_mq.record.records import decode_batches

FETCH = 1
A, B, C = record(b"a", 0), record(b"b", 1), record(b"c", 2)
CASES = {  # records, recordsCount (lastOffsetDelta agrees: count - 1)
    "deltas 0,2,4": ([A, record(b"b", 2), record(b"c", 4)], 3),
    "deltas 0,1,1": ([A, B, record(b"c", 1)], 3),
    "three records, count 2": ([A, B, C], 2),
    "bytes after the last record": ([A, B, C, bytes(8)], 3),
    "second record's length too long": ([A, b"\x7f" + B[1:], C], 3),
    "second record's length negative": ([A, b"\x03" + B[1:], C], 3),
    # Java's readVarint takes at most 5 bytes: a consumer would fail on it
    "second record's length in 8 bytes": ([A, bytes([B[0] | 0x80, *[0x80] * 6, 0]) + B[1:], C], 3),
}


def batch(records: list[bytes], count: int, codec: int) -> bytes:
    payload = b"".join(records)
    if codec:
        payload = compress(codec, payload, None)
    size = HEADER.size - 12 + len(payload)
    header = HEADER.pack(0, size, -1, 2, 0, codec, count - 1, 0, 0, -1, -1, -1, count)
    out = bytearray(header + payload)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


DECODING = {  # topic configs under which produce decodes records
    "compacted": {"cleanup.policy": "compact"},
    "re-encoded": {"compression.type": "zstd"},  # batches in codec 4 are kept: compact below
    "timestamp window": {"message.timestamp.before.max.ms": str(2**62)},  # records of 1970
}


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("topic", sorted(DECODING))
async def test_broken_records_are_refused(
    client: Client, case: str, codec: int, topic: str
) -> None:
    configs = DECODING[topic] if (topic, codec) != ("re-encoded", 4) else DECODING["compacted"]
    await create(client, "t", **configs)
    bad = batch(*CASES[case], codec)
    answer = await produce(client, "t", bad)
    assert answer["error_code"] == InvalidRecordError.errno, answer
    assert (await produce(client, "t", bad, version=7))["error_code"] == CorruptRecordError.errno
    good = batch([A, B, C], 3, codec)
    assert (await produce(client, "t", good))["base_offset"] == 0  # nothing was appended
    body = fetch_body("t", 0)
    fetched = (await client.call(FETCH, 11, body))["responses"][0]["partitions"][0]["records"]
    got = [(r.offset, r.key) for _, records in decode_batches(fetched) for r in records]
    assert got == [(0, b"a"), (1, b"b"), (2, b"c")]


async def test_a_base_offset_other_than_0_is_refused(client: Client) -> None:
    # Kafka's UnifiedLog: a client's v2 batch starts at offset 0; before, it was stored anyway
    await create(client, "t")
    moved = bytearray(batch([A, B, C], 3, 0))
    moved[0:8] = (5).to_bytes(8, "big")  # outside the CRC
    answer = await produce(client, "t", bytes(moved))
    assert answer["error_code"] == InvalidRecordError.errno, answer
    assert "should be 0, but it is 5" in answer["error_message"]
    assert (await produce(client, "t", batch([A, B, C], 3, 0)))["base_offset"] == 0
