"""Control records: the transaction markers a coordinator writes into each partition.

A control batch has the transactional (bit 4) and control (bit 5) attribute bits set and
holds exactly one record, uncompressed, whose key and value are::

    key    version i16 (0)   type i16 (0 ABORT, 1 COMMIT)
    value  version i16 (0)   coordinator_epoch i32

Consumers never see control records; they use them to end a producer's open transaction
(read_committed drops the records of aborted transactions). Decoding accepts key versions
above 0 with trailing bytes (forward compatibility, as Kafka does), maps a type other
than ABORT or COMMIT to UNKNOWN (its value unread; callers skip it, as Kafka's consumers do),
and raises CorruptRecordError for a short key, a negative version or a short marker value.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from tiered_mq.errors import CorruptRecordError
from tiered_mq.record.records import Record, encode_batch

_KEY: Final = struct.Struct(">hh")
_VALUE: Final = struct.Struct(">hi")
CONTROL_VERSION: Final = 0


class ControlType(IntEnum):
    UNKNOWN = -1  # a type this broker does not know (e.g. KRaft's LEADER_CHANGE): ignored
    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A decoded transaction marker."""

    type: ControlType
    coordinator_epoch: int
    version: int = CONTROL_VERSION

    @property
    def is_commit(self) -> bool:
        return self.type is ControlType.COMMIT


def control_key(commit: bool) -> bytes:
    return _KEY.pack(CONTROL_VERSION, ControlType.COMMIT if commit else ControlType.ABORT)


def control_value(coordinator_epoch: int) -> bytes:
    return _VALUE.pack(CONTROL_VERSION, coordinator_epoch)


def encode_control_batch(
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """One control batch holding a COMMIT or ABORT marker for ``producer_id``."""
    return encode_batch(
        [(control_key(commit), control_value(coordinator_epoch), (), timestamp)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def decode_control_record(record: Record | tuple[bytes | None, bytes | None]) -> ControlRecord:
    """Decode the marker of a control batch's record (a Record or its ``(key, value)``)."""
    key, value = (record.key, record.value) if isinstance(record, Record) else record
    if key is None or len(key) < _KEY.size:
        raise CorruptRecordError(f"control record key of {0 if key is None else len(key)} bytes")
    version, type_id = _KEY.unpack_from(key)
    if version < 0:
        raise CorruptRecordError(f"control record key version {version}")
    if version == CONTROL_VERSION and len(key) != _KEY.size:
        raise CorruptRecordError(f"control record key v0 of {len(key)} bytes")
    if type_id not in (ControlType.ABORT, ControlType.COMMIT):
        return ControlRecord(ControlType.UNKNOWN, -1, version)
    control_type = ControlType(type_id)
    if value is None or len(value) < _VALUE.size:
        raise CorruptRecordError(
            f"control record value of {0 if value is None else len(value)} bytes"
        )
    _value_version, coordinator_epoch = _VALUE.unpack_from(value)
    return ControlRecord(control_type, coordinator_epoch, version)
