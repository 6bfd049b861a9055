"""Remote retention and the cleanup of unfinished copies and deletions (run by the leader).

Total retention applies to the whole log, bucket plus local disk: a remote segment is deleted
when its max timestamp is older than ``retention.ms``, or while the total size minus the
segment still reaches ``retention.bytes`` (oldest first, as Kafka does), or when it lies
wholly below the log start offset (DeleteRecords). -1 keeps forever. Only a prefix of the
oldest segments is ever deleted, so the bucket never holds a gap below data it keeps.

Deleting follows the manifest state machine (see manifest.py): one manifest write marks the
victims DELETE_STARTED and raises ``log_start_offset`` past them; then the caller's
``on_started`` runs (the uploader hands that manifest to the reader and raises the partition's
log start offset: fetches below it get OFFSET_OUT_OF_RANGE, not a read of objects being
deleted, as Kafka's RemoteLogManager updates the log start offset before it deletes); then the
objects are deleted and a second write drops the entries (DELETE_FINISHED). A crash
between the two leaves DELETE_STARTED entries, finished by ``cleanup_unfinished`` on the next
pass or by the next leader, which also removes COPY_STARTED entries no upload is working on
(copies abandoned by a crash or a deposed leader), objects first.

A manifest of another topic id (a deleted incarnation of the topic, manifest.py) is replaced
by an empty one of this topic's id (``replace_foreign_manifest``), then the objects it named
are deleted, best effort: a crash or failure in between leaves objects no manifest names,
which a scrub deletes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection

from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState
from tiered_mq.cold.manifest_writer import ManifestWriter
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.object_store import ObjectStore

log = logging.getLogger(__name__)


def retention_victims(
    manifest: PartitionManifest,
    now_ms: int,
    retention_ms: int,
    retention_bytes: int,
    local_only_bytes: int = 0,
) -> list[RemoteSegment]:
    """The oldest readable segments that total retention removes.

    ``local_only_bytes``: bytes of the local log above the bucket's data (counted in the
    total size for retention.bytes).
    """
    total = manifest.size_bytes() + local_only_bytes
    victims: list[RemoteSegment] = []
    for segment in manifest.iter_readable():  # stops at the first kept: no copy of them all
        by_start = segment.end_offset < manifest.log_start_offset
        by_time = retention_ms >= 0 and segment.max_timestamp < now_ms - retention_ms
        by_size = retention_bytes >= 0 and total - segment.size_bytes >= retention_bytes
        if not (by_start or by_time or by_size):
            break
        victims.append(segment)
        total -= segment.size_bytes
    return victims


def update_segment_states(
    manifest: PartitionManifest,
    upload_ids: Collection[str],
    from_state: SegmentState,
    to_state: SegmentState,
    now_ms: int,
) -> None:
    """Move the entries of ``upload_ids`` that are in ``from_state`` to ``to_state`` at
    ``now_ms`` (Kafka's RemoteLogSegmentState transitions; DELETE_FINISHED drops the entry).

    An entry in any other state is left alone, so a manifest mutation built on this gives the
    same result when ManifestWriter applies it again after a lost race. A transition the state
    machine forbids raises ValueError (``RemoteSegment.with_state``)."""
    for s in list(manifest.segments):
        if s.upload_id in upload_ids and s.state == from_state:
            manifest.upsert(s.with_state(to_state, now_ms))


async def delete_remote_segments(
    store: ObjectStore,
    writer: ManifestWriter,
    victims: list[RemoteSegment],
    clock: Callable[[], int],
    metrics: RemoteMetrics,
    log_start: int | None = None,
    *,
    on_started: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Delete ``victims`` following the state machine (two manifest writes), awaiting
    ``on_started`` between the first write and the first object deletion.

    The manifest's log start offset is raised past them, or to ``log_start`` when given (a
    remote log deleted whole by remote.log.delete.on.disable: past the victims it would be
    above local data that stays readable, and a remote.storage.enable=true after an
    interrupted deletion would then never upload that data again and drop it)."""
    if not victims:
        return
    ids = {v.upload_id for v in victims}
    new_start = max(v.end_offset for v in victims) + 1 if log_start is None else log_start

    def mark_started(m: PartitionManifest) -> None:
        update_segment_states(
            m, ids, SegmentState.COPY_FINISHED, SegmentState.DELETE_STARTED, clock()
        )
        m.log_start_offset = max(m.log_start_offset, new_start)

    await writer.commit(mark_started)
    if on_started is not None:
        await on_started()
    await _finish_deletes(store, writer, ids, clock, metrics)


async def _finish_deletes(
    store: ObjectStore,
    writer: ManifestWriter,
    ids: Collection[str],
    clock: Callable[[], int],
    metrics: RemoteMetrics,
) -> None:
    doomed = [s for s in writer.manifest.segments if s.upload_id in ids]
    keys = [k for s in doomed for k in s.objects.values() if k is not None]
    try:
        await store.delete_many(keys)
    except Exception:
        metrics.delete_errors.inc()
        metrics.topic(writer.tp.topic).delete_errors += 1
        raise

    def mark_finished(m: PartitionManifest) -> None:
        update_segment_states(
            m, ids, SegmentState.DELETE_STARTED, SegmentState.DELETE_FINISHED, clock()
        )

    await writer.commit(mark_finished)
    metrics.delete_segments.inc(len(doomed))
    metrics.topic(writer.tp.topic).delete_segments += len(doomed)
    log.info("%s: deleted %d remote segment(s)", writer.tp, len(doomed))


async def cleanup_unfinished(
    store: ObjectStore,
    writer: ManifestWriter,
    in_flight: Collection[str],
    clock: Callable[[], int],
    metrics: RemoteMetrics,
) -> None:
    """Finish DELETE_STARTED entries; delete COPY_STARTED entries not in ``in_flight``."""
    abandoned = {
        s.upload_id
        for s in writer.manifest.segments
        if s.state == SegmentState.COPY_STARTED and s.upload_id not in in_flight
    }
    if abandoned:

        def mark_abandoned(m: PartitionManifest) -> None:
            update_segment_states(
                m, abandoned, SegmentState.COPY_STARTED, SegmentState.DELETE_STARTED, clock()
            )

        await writer.commit(mark_abandoned)
    pending = {
        s.upload_id for s in writer.manifest.segments if s.state == SegmentState.DELETE_STARTED
    }
    if pending:
        await _finish_deletes(store, writer, pending, clock, metrics)


async def replace_foreign_manifest(store: ObjectStore, writer: ManifestWriter) -> None:
    """Write this incarnation's first manifest over ``writer.foreign`` (conditional put on its
    ETag), then delete the objects the foreign one named (module docstring)."""
    foreign = writer.foreign
    if foreign is None:
        return
    log.warning(
        "%s: manifest of topic id %s (a deleted topic of this name) replaced",
        writer.tp,
        foreign.topic_id,
    )
    await writer.commit(lambda m: None)
    keys = [k for s in foreign.segments for k in s.objects.values() if k is not None]
    try:
        await store.delete_many(keys)
    except Exception as e:
        log.info("%s: %d object(s) left to a scrub: %s", writer.tp, len(keys), e)
