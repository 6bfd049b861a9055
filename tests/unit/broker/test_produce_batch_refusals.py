"""Produce refuses what Kafka's ProduceRequest.validateRecords and LogValidator.validateBatch
refuse with InvalidRecordException: no batch at all, a batch of magic other than 2, a control
batch, and a batch with a producer id but no sequence. That is INVALID_RECORD from v8 (a Java
producer fails the send at once) and CORRUPT_MESSAGE before; a batch whose CRC does not match
stays CORRUPT_MESSAGE, as in Kafka. Nothing is appended."""

from __future__ import annotations

import pytest

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_record_checks import create, produce
from tiered_mq.errors import CorruptRecordError, InvalidRecordError
from tiered_mq.record.batch import CRC_START
from tiered_mq.record.records import encode_batch

ONE = encode_batch([(b"k", b"v", [], 1_000)])


def _magic(value: int) -> bytes:
    out = bytearray(ONE)
    out[16] = value  # not under the CRC
    return bytes(out)


def _bad_crc() -> bytes:
    out = bytearray(ONE)
    out[CRC_START + 10] ^= 0xFF
    return bytes(out)


REFUSED = {
    "no batch": b"",
    "magic 1": _magic(1),
    "control batch": encode_batch([(b"\x00\x00\x00\x01", b"", [], 1_000)], is_control=True),
    "producer id without sequence": encode_batch(
        [(b"k", b"v", [], 1_000)], producer_id=77, producer_epoch=0, base_sequence=-1
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_invalid_batches_are_invalid_record(client: Client, case: str) -> None:
    await create(client, "t")
    records = REFUSED[case]
    assert (await produce(client, "t", records))["error_code"] == InvalidRecordError.errno
    assert (await produce(client, "t", records, version=7))["error_code"] == (
        CorruptRecordError.errno
    )
    assert (await produce(client, "t", ONE))["base_offset"] == 0  # nothing was appended


async def test_a_bad_crc_stays_corrupt_message(client: Client) -> None:
    await create(client, "t")
    for version in (7, 8):
        answer = await produce(client, "t", _bad_crc(), version=version)
        assert answer["error_code"] == CorruptRecordError.errno
    assert (await produce(client, "t", ONE))["base_offset"] == 0
