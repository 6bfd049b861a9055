"""Records of the compacted internal topic ``__transaction_state`` (Kafka's v0 formats).

Key (TransactionLogKey v0), big-endian::

    version           i16 = 0
    transactional_id  string (i16 length + UTF-8)

Value (TransactionLogValue v0); a null value (tombstone) removes the transactional id::

    version                     i16 = 0
    producer_id                 i64
    producer_epoch              i16
    transaction_timeout_ms      i32
    transaction_status          i8   (TxnState: 0 Empty .. 7 PrepareEpochFence)
    transaction_partitions      array (i32 count, -1 null) of
        topic                   string
        partition_ids           array of i32
    last_update_timestamp_ms    i64
    start_timestamp_ms          i64

The partition of ``__transaction_state`` holding a transactional id is Kafka's
``abs(java hashCode) % transaction.state.log.num.partitions``. Decoders raise ValueError on a
short or unknown-version record (the loader skips it).
"""

from __future__ import annotations

import struct
from collections import defaultdict
from typing import Final

from tiered_mq.broker.group.log_format import java_string_hash
from tiered_mq.broker.schema_codec import SchemaReader, write_str
from tiered_mq.broker.txn.state import TxnMetadata, TxnState
from tiered_mq.topic_partition import TopicPartition

TRANSACTION_STATE_TOPIC: Final = "__transaction_state"
VERSION: Final = 0
_VALUE_HEAD = struct.Struct(">hqhib")
_TAIL = struct.Struct(">qq")


def partition_for(transactional_id: str, num_partitions: int) -> int:
    return abs(java_string_hash(transactional_id)) % num_partitions


def encode_key(transactional_id: str) -> bytes:
    return struct.pack(">h", VERSION) + write_str(transactional_id)


def encode_value(meta: TxnMetadata) -> bytes:
    out = bytearray(
        _VALUE_HEAD.pack(
            VERSION, meta.producer_id, meta.producer_epoch, meta.timeout_ms, int(meta.state)
        )
    )
    by_topic: dict[str, list[int]] = defaultdict(list)
    for tp in sorted(meta.partitions):
        by_topic[tp.topic].append(tp.partition)
    out += struct.pack(">i", len(by_topic))
    for topic, parts in by_topic.items():
        out += write_str(topic) + struct.pack(f">i{len(parts)}i", len(parts), *parts)
    out += _TAIL.pack(meta.last_update_ms, meta.start_ms)
    return bytes(out)


def decode_key(data: bytes) -> str:
    r = SchemaReader(data)
    (version,) = r.take(">h")
    if version != VERSION:
        raise ValueError(f"transaction log key version {version}")
    return r.str()


def decode_value(transactional_id: str, data: bytes) -> TxnMetadata:
    r = SchemaReader(data)
    version, pid, epoch, timeout, status = r.take(">hqhib")
    if version != VERSION:
        raise ValueError(f"transaction log value version {version}")
    partitions: set[TopicPartition] = set()
    (n_topics,) = r.take(">i")
    for _ in range(max(n_topics, 0)):
        topic = r.str()
        (n,) = r.take(">i")
        for p in r.take(f">{max(n, 0)}i"):
            partitions.add(TopicPartition(topic, p))
    last_update, start = r.take(">qq")
    return TxnMetadata(
        transactional_id, pid, epoch, timeout, TxnState(status), partitions, start, last_update
    )
