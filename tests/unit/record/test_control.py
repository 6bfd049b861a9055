"""Control batches (transaction markers) against kafka-python's ControlRecord."""

from __future__ import annotations

import struct

import crc32c
import pytest
from kafka.record.default_records import DefaultRecordBatch

from tests.unit.record.oracle import kp_build
from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.batch import CONTROL_FLAG, TRANSACTIONAL_FLAG, read_header
from tiered_mq.record.control import (
    ControlRecord,
    ControlType,
    decode_control_record,
    encode_control_batch,
)
from tiered_mq.record.records import Record, decode_batch


@pytest.mark.parametrize("commit", [True, False])
def test_control_batch_layout_and_kafka_python_view(commit: bool) -> None:
    raw = encode_control_batch(
        4242, 7, commit, coordinator_epoch=11, timestamp=1234, base_offset=90
    )
    header = read_header(raw)
    assert header.attributes & (TRANSACTIONAL_FLAG | CONTROL_FLAG) == 0x30
    assert (header.producer_id, header.producer_epoch, header.base_offset) == (4242, 7, 90)
    assert header.records_count == 1 and header.compression == 0

    _, records = decode_batch(raw)
    assert records[0].key == struct.pack(">hh", 0, 1 if commit else 0)
    assert records[0].value == struct.pack(">hi", 0, 11)
    assert records[0].offset == 90 and records[0].timestamp == 1234
    marker = decode_control_record(records[0])
    assert marker == ControlRecord(ControlType.COMMIT if commit else ControlType.ABORT, 11, 0)
    assert marker.is_commit is commit

    batch = DefaultRecordBatch(bytearray(raw))
    assert batch.validate_crc() and batch.is_control_batch and batch.is_transactional
    [kp_marker] = list(batch)
    assert (kp_marker.commit, kp_marker.abort, kp_marker.version) == (commit, not commit, 0)


def test_marker_built_independently_decodes() -> None:
    # kafka-python cannot build a control batch: build a transactional one, then set the
    # control bit and recompute the CRC by hand.
    key, value = struct.pack(">hh", 0, 0), struct.pack(">hi", 0, 3)
    raw = bytearray(
        kp_build([(0, 55, key, value, [])], transactional=True, producer_id=9, producer_epoch=1)
    )
    attributes = struct.unpack_from(">h", raw, 21)[0] | CONTROL_FLAG
    struct.pack_into(">h", raw, 21, attributes)
    struct.pack_into(">I", raw, 17, crc32c.crc32c(raw[21:]))
    header, records = decode_batch(raw)
    assert header.is_control and header.is_transactional
    assert decode_control_record(records[0]) == ControlRecord(ControlType.ABORT, 3)


def test_decode_accepts_key_value_tuple_and_newer_versions() -> None:
    assert decode_control_record((b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05")).is_commit
    newer = decode_control_record((struct.pack(">hh", 1, 0) + b"extra", struct.pack(">hi", 1, 2)))
    assert newer == ControlRecord(ControlType.ABORT, 2, 1)


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        (None, b"\x00\x00\x00\x00\x00\x00", "key of 0"),
        (b"\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", "key of 3"),
        (b"\x00\x00\x00\x01\x00", b"\x00\x00\x00\x00\x00\x00", "v0 of 5"),
        (b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x00", "version -1"),
        (b"\x00\x00\x00\x01", None, "value of 0"),
        (b"\x00\x00\x00\x01", b"\x00\x00\x00", "value of 3"),
    ],
)
def test_malformed_markers(key: bytes | None, value: bytes | None, match: str) -> None:
    with pytest.raises(CorruptRecordError, match=match):
        decode_control_record(Record(0, 0, key, value, []))


def test_unknown_control_type_is_skipped_not_corrupt() -> None:
    leader_change = decode_control_record((struct.pack(">hh", 0, 2), b"\x00\x00whatever"))
    assert leader_change == ControlRecord(ControlType.UNKNOWN, -1, 0)
    assert not leader_change.is_commit
