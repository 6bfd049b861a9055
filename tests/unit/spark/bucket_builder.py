"""Writes a tiered-mq bucket layout the way the broker's uploader does, for Spark tests and the
benchmark: ``.log`` (batches v2 back to back), ``.index`` / ``.timeindex`` (Kafka's formats,
one entry per ``index_interval`` bytes, for the batch's last offset), optional ``.txnindex``
and producer ``.snapshot`` (the state at the segment's end, as the broker's), the partition
manifest (cold.manifest) and the topic manifest. Batches of a producer id get consecutive
sequence numbers, as an idempotent producer's do.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tiered_mq.broker.producer_state import ProducerStateManager
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState, TopicManifest
from tiered_mq.cold.object_store import SyncObjectStore
from tiered_mq.cold.remote_index import summarize_log
from tiered_mq.record.batch import iter_batches, read_header
from tiered_mq.record.control import encode_control_batch
from tiered_mq.record.records import encode_batch
from tiered_mq.spark.transactions import AbortedTxn, encode_txn_index

Row = tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]], int]


def indexes(log: bytes, base_offset: int, interval: int) -> tuple[bytes, bytes]:
    """Offset and time index bytes for ``log`` (entries as hot/ writes them: at most one per
    ``interval`` bytes; the time index holds the greatest max timestamp so far and the last
    offset of the batch that has it, only when it grew)."""
    index = bytearray()
    timeindex = bytearray()
    since = 0
    max_ts, max_ts_rel, last_entry_ts = -1, 0, -1
    for pos, header in iter_batches(log, validate=False):
        if header.max_timestamp > max_ts:  # greatest so far, and its batch's last offset
            max_ts, max_ts_rel = header.max_timestamp, header.last_offset - base_offset
        since += header.size
        if since > interval:
            rel = header.last_offset - base_offset
            index += rel.to_bytes(4, "big") + pos.to_bytes(4, "big")
            if max_ts > last_entry_ts:
                timeindex += max_ts.to_bytes(8, "big", signed=True) + max_ts_rel.to_bytes(4, "big")
                last_entry_ts = max_ts
            since = 0
    return bytes(index), bytes(timeindex)


@dataclass
class PartitionWriter:
    """Appends batches to a partition's segments; ``roll()`` uploads the current one."""

    store: SyncObjectStore
    prefix: str
    topic: str
    partition: int
    index_interval: int = 4096
    next_offset: int = 0
    batches: list[bytes] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)
    manifest: PartitionManifest | None = None
    producers: ProducerStateManager = field(default_factory=lambda: ProducerStateManager(Path()))
    sequences: dict[int, int] = field(default_factory=dict)

    def append(self, rows: Sequence[Row], **batch_args: Any) -> tuple[int, int]:
        """One batch of ``rows`` at the log end; returns its (base, last) offsets."""
        base = self.next_offset
        pid = batch_args.get("producer_id", -1)
        if pid >= 0 and "base_sequence" not in batch_args:
            batch_args["base_sequence"] = self.sequences.get(pid, 0)
            self.sequences[pid] = batch_args["base_sequence"] + len(rows)
        self._add(encode_batch(list(rows), base_offset=base, **batch_args))
        return base, self.next_offset - 1

    def _add(self, batch: bytes) -> None:
        header = read_header(batch)
        self.batches.append(batch)
        self.producers.update(header, header.base_offset)
        self.next_offset = header.last_offset + 1

    def control(self, producer_id: int, commit: bool, timestamp: int, first_offset: int) -> None:
        """A COMMIT/ABORT marker; an ABORT also goes into this segment's txnindex."""
        offset = self.next_offset
        self._add(encode_control_batch(producer_id, 0, commit, 0, timestamp, base_offset=offset))
        if not commit:
            self.aborted.append(AbortedTxn(producer_id, first_offset, offset))

    def roll(
        self, epoch: int = 0, with_txnindex: bool = True, with_snapshot: bool = True
    ) -> RemoteSegment:
        log = b"".join(self.batches)
        summary = summarize_log(log)
        upload = uuid.uuid4().hex[:12]

        def key(suffix: str) -> str:
            return layout.segment_key(
                self.prefix, self.topic, self.partition, summary.base_offset, epoch, upload, suffix
            )

        index, timeindex = indexes(log, summary.base_offset, self.index_interval)
        objects: dict[str, str | None] = {
            layout.LOG: key(layout.LOG),
            layout.INDEX: key(layout.INDEX),
            layout.TIME_INDEX: key(layout.TIME_INDEX),
            layout.SNAPSHOT: None,
            layout.TXN_INDEX: None,
        }
        self.store.put(key(layout.LOG), log)
        self.store.put(key(layout.INDEX), index)
        self.store.put(key(layout.TIME_INDEX), timeindex)
        if with_snapshot:
            objects[layout.SNAPSHOT] = key(layout.SNAPSHOT)
            self.store.put(key(layout.SNAPSHOT), self.producers.encode_snapshot())
        if self.aborted and with_txnindex:
            objects[layout.TXN_INDEX] = key(layout.TXN_INDEX)
            self.store.put(key(layout.TXN_INDEX), encode_txn_index(self.aborted))
        segment = RemoteSegment.from_summary(
            summary,
            upload_id=upload,
            uploader_epoch=epoch,
            objects=objects,
            state=SegmentState.COPY_FINISHED,
            state_ms=int(time.time() * 1000),
        )
        if self.manifest is None:
            self.manifest = PartitionManifest(self.topic, self.partition)
        self.manifest.upsert(segment)
        self.store.put(
            layout.manifest_key(self.prefix, self.topic, self.partition), self.manifest.to_json()
        )
        self.batches, self.aborted = [], []
        return segment


def write_topic_manifest(store: SyncObjectStore, prefix: str, topic: str, partitions: int) -> None:
    store.put(layout.topic_manifest_key(prefix, topic), TopicManifest(topic, partitions).to_json())
