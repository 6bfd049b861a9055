"""Records of the internal topic ``__consumer_offsets``, in Kafka's formats.

Every record has a key and a value, each starting with an int16 version; strings are int16
length + UTF-8 (length -1 = null), bytes are int32 length + data, all big-endian.

Offset commit (key versions 0 and 1 are the same layout; written as 1)::

    key   v1  group string, topic string, partition int32
    value v3  offset int64, leader_epoch int32 (-1 = none), metadata string, commit_timestamp int64
          v1  offset int64, metadata string, commit_timestamp int64, expire_timestamp int64
              (written only for commits with an explicit retention time)
          v0/v2 offset int64, metadata string, commit_timestamp int64 (read only)

Group metadata (written by the coordinator when a generation becomes Stable or Empty)::

    key   v2  group string
    value v3  protocol_type string, generation int32, protocol nullable string,
              leader nullable string, current_state_timestamp int64,
              members [int32 count] of
                member_id string, group_instance_id nullable string, client_id string,
                client_host string, rebalance_timeout int32, session_timeout int32,
                subscription bytes, assignment bytes
          v0-v2 read too (v0 lacks rebalance_timeout and the timestamp, v1 lacks the timestamp,
              v0-v2 lack group_instance_id)

A null value is a tombstone: the offset (or the group) is deleted; compaction keeps only the
last record per key, so loading replays the log and the last value per key wins.

Partitioning: a group's records live in partition ``abs(java_hash(group_id)) % n`` where
``java_hash`` is ``String.hashCode`` (over UTF-16 code units, int32 overflow) and ``abs`` maps
Integer.MIN_VALUE to 0, as Kafka's ``Utils.abs``; a Kafka client computing it agrees with us.

Decoding raises ValueError on a malformed or unknown-version record; the loader logs and skips
such a record rather than refusing to start.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field
from typing import Final

from tiered_mq.broker.schema_codec import SchemaReader, write_bytes, write_str

OFFSET_COMMIT_KEY_VERSION: Final = 1
GROUP_METADATA_KEY_VERSION: Final = 2
OFFSET_COMMIT_VALUE_VERSION: Final = 3
GROUP_METADATA_VALUE_VERSION: Final = 3

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_INT_MIN: Final = -(2**31)


@functools.lru_cache(maxsize=4096)
def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: 31*h + c over UTF-16 code units, as a signed int32.
    Remembered for the last 4096 strings: every request of a group (a heartbeat each
    ``heartbeat.interval.ms`` per member) looks up its ``__consumer_offsets`` partition, and
    the loop costs a microsecond per character."""
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """The ``__consumer_offsets`` partition holding ``group_id`` (Kafka's partitionFor)."""
    h = java_string_hash(group_id)
    return (0 if h == _INT_MIN else abs(h)) % num_partitions


# -- record types ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    group: str


@dataclass(frozen=True, slots=True)
class OffsetValue:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1  # only from v1 records (explicit retention)


@dataclass(frozen=True, slots=True)
class MemberValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: list[MemberValue] = field(default_factory=list)


# -- writer ----------------------------------------------------------------------------------


def encode_offset_key(key: OffsetKey) -> bytes:
    return (
        _I16.pack(OFFSET_COMMIT_KEY_VERSION)
        + write_str(key.group)
        + write_str(key.topic)
        + _I32.pack(key.partition)
    )


def encode_offset_value(value: OffsetValue) -> bytes:
    """Version 3, or version 1 when the commit carries an expire timestamp (explicit retention,
    OffsetCommit v2-4), the only version that can hold one."""
    if value.expire_timestamp >= 0:
        return (
            _I16.pack(1)
            + _I64.pack(value.offset)
            + write_str(value.metadata)
            + _I64.pack(value.commit_timestamp)
            + _I64.pack(value.expire_timestamp)
        )
    return (
        _I16.pack(OFFSET_COMMIT_VALUE_VERSION)
        + _I64.pack(value.offset)
        + _I32.pack(value.leader_epoch)
        + write_str(value.metadata)
        + _I64.pack(value.commit_timestamp)
    )


def encode_group_key(key: GroupKey) -> bytes:
    return _I16.pack(GROUP_METADATA_KEY_VERSION) + write_str(key.group)


def encode_group_value(value: GroupValue) -> bytes:
    parts = [
        _I16.pack(GROUP_METADATA_VALUE_VERSION),
        write_str(value.protocol_type),
        _I32.pack(value.generation),
        write_str(value.protocol),
        write_str(value.leader),
        _I64.pack(value.current_state_timestamp),
        _I32.pack(len(value.members)),
    ]
    for m in value.members:
        parts += [
            write_str(m.member_id),
            write_str(m.group_instance_id),
            write_str(m.client_id),
            write_str(m.client_host),
            _I32.pack(m.rebalance_timeout_ms),
            _I32.pack(m.session_timeout_ms),
            write_bytes(m.subscription),
            write_bytes(m.assignment),
        ]
    return b"".join(parts)


def decode_key(data: bytes) -> OffsetKey | GroupKey:
    """The key of a ``__consumer_offsets`` record; ValueError for versions we do not know."""
    r = SchemaReader(data)
    version = r.i16()
    if version in (0, 1):
        return OffsetKey(r.str(), r.str(), r.i32())
    if version == 2:
        return GroupKey(r.str())
    raise ValueError(f"unknown __consumer_offsets key version {version}")


def decode_offset_value(data: bytes) -> OffsetValue:
    r = SchemaReader(data)
    version = r.i16()
    if version in (0, 2):
        return OffsetValue(r.i64(), -1, r.str(), r.i64())
    if version == 1:
        return OffsetValue(r.i64(), -1, r.str(), r.i64(), r.i64())
    if version == 3:
        return OffsetValue(r.i64(), r.i32(), r.str(), r.i64())
    raise ValueError(f"unknown offset commit value version {version}")


def decode_group_value(data: bytes) -> GroupValue:
    r = SchemaReader(data)
    version = r.i16()
    if not 0 <= version <= 3:
        raise ValueError(f"unknown group metadata value version {version}")
    protocol_type = r.str()
    generation = r.i32()
    protocol = r.nullable_str()
    leader = r.nullable_str()
    timestamp = r.i64() if version >= 2 else -1
    members = []
    for _ in range(r.i32()):
        member_id = r.str()
        instance_id = r.nullable_str() if version >= 3 else None
        client_id = r.str()
        client_host = r.str()
        rebalance_timeout = r.i32() if version >= 1 else -1
        session_timeout = r.i32()
        if rebalance_timeout < 0:
            rebalance_timeout = session_timeout
        members.append(
            MemberValue(
                member_id,
                instance_id,
                client_id,
                client_host,
                rebalance_timeout,
                session_timeout,
                r.bytes(),
                r.bytes(),
            )
        )
    return GroupValue(protocol_type, generation, protocol, leader, timestamp, members)
