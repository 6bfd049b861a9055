"""Scrub: find objects under a prefix that no manifest references (orphans) and delete them.

Orphans come from crashes between an object put and the manifest write that would have
referenced it, or from manifest entries dropped while their objects' deletion failed. Every
object whose key parses as a segment object (layout.py) and is not named by any entry, in any
state, of its partition's manifest is an orphan; so are segment objects of a partition without
a manifest. Keys under ``P/topics/`` that the layout does not know are reported as ``unknown``
and never deleted. Objects of a COPY_FINISHED segment (one readers serve) that are absent are
reported as ``missing``: that is lost data. A COPY_STARTED segment's objects may be absent (an
upload in flight, or one a crash cut short: the next leader uploads the range again), and so
may a DELETE_STARTED one's (a deletion in flight), so neither is reported.

A partition manifest whose ``topic_id`` differs from its topic.json's (manifest.py) belongs
to a deleted incarnation of the topic (one whose deletion did not reach the bucket: the
broker died first, or its data dir was lost) and is reported as ``stale``; the objects only
it names are orphans. With ``delete``, orphans go first, then stale manifests. A manifest
without a topic id, or a topic without topic.json, is judged by references only.

Uploads name their objects in the manifest (COPY_STARTED) before writing them, so a scrub
running beside a live uploader does not see its objects as orphans; the partition manifests
are read before topic.json, and an incarnation writes its topic.json before its first
partition manifest, so a live manifest is never judged stale. The listing comes before the
manifests, so a segment that finished uploading in between is absent from the listing though
present: a missing candidate is checked with a HEAD before it is reported. Synchronous (CLI,
Spark).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import (
    ManifestFormatError,
    PartitionManifest,
    SegmentState,
    TopicManifest,
    is_foreign,
    parse_partition_manifest,
    parse_topic_manifest,
)
from tiered_mq.cold.object_store import ObjectInfo, SyncObjectStore
from tiered_mq.errors import ObjectNotFoundError


@dataclass
class ScrubReport:
    orphans: list[ObjectInfo] = field(default_factory=list)
    unknown: list[ObjectInfo] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    bad_manifests: list[str] = field(default_factory=list)
    stale_manifests: list[str] = field(default_factory=list)
    deleted: int = 0

    @property
    def orphan_bytes(self) -> int:
        return sum(o.size for o in self.orphans)


def scrub(store: SyncObjectStore, prefix: str, *, delete: bool = False) -> ScrubReport:
    prefix = prefix.strip("/")
    objects = store.list(layout.topics_prefix(prefix))
    report = ScrubReport()
    referenced: set[str] = set()
    existing = {o.key for o in objects}
    broken_partitions: set[tuple[str, int]] = set()
    manifests: list[tuple[str, str, PartitionManifest]] = []  # key, topic, manifest
    for obj in objects:
        parsed = layout.parse_key(prefix, obj.key)
        if parsed is None or parsed.kind != "manifest":
            continue
        try:
            manifest = parse_partition_manifest(store.get(obj.key)[0])
            manifests.append((obj.key, parsed.topic, manifest))
        except ObjectNotFoundError:  # deleted meanwhile: its partition is not judged
            broken_partitions.add((parsed.topic, parsed.partition))
        except ManifestFormatError:
            report.bad_manifests.append(obj.key)
            broken_partitions.add((parsed.topic, parsed.partition))
    topic_ids = _topic_ids(store, prefix, objects)  # after the partition manifests
    for manifest_key, topic, manifest in manifests:
        if is_foreign(manifest.topic_id, topic_ids.get(topic)):
            report.stale_manifests.append(manifest_key)
            continue
        for segment in manifest.segments:
            served = segment.state == SegmentState.COPY_FINISHED
            for key in segment.objects.values():
                if key is None:
                    continue
                referenced.add(key)
                if served and key not in existing and store.head(key) is None:
                    report.missing.append(key)
    for obj in objects:
        parsed = layout.parse_key(prefix, obj.key)
        if parsed is None:
            report.unknown.append(obj)
        elif (
            parsed.kind == "segment"
            and obj.key not in referenced
            and (parsed.topic, parsed.partition) not in broken_partitions
        ):
            report.orphans.append(obj)
    if delete and (report.orphans or report.stale_manifests):
        store.delete_many([o.key for o in report.orphans])
        store.delete_many(report.stale_manifests)
        report.deleted = len(report.orphans) + len(report.stale_manifests)
    return report


def read_topic_manifest(store: SyncObjectStore, prefix: str, topic: str) -> TopicManifest | None:
    """``topic``'s topic.json (None: none, or unreadable)."""
    try:
        return parse_topic_manifest(store.get(layout.topic_manifest_key(prefix, topic))[0])
    except (ObjectNotFoundError, ManifestFormatError):
        return None


def _topic_ids(
    store: SyncObjectStore, prefix: str, objects: list[ObjectInfo]
) -> dict[str, str | None]:
    """The topic id of each topic.json among ``objects`` (None: none, or unreadable)."""
    found: dict[str, str | None] = {}
    for obj in objects:
        parsed = layout.parse_key(prefix, obj.key)
        if parsed is not None and parsed.kind == "topic":
            manifest = read_topic_manifest(store, prefix, parsed.topic)
            found[parsed.topic] = None if manifest is None else manifest.topic_id
    return found
