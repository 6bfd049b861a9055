"""Scrub: find objects under a prefix that no manifest references (orphans) and delete them.

Orphans come from crashes between an object put and the manifest write that would have
referenced it, or from manifest entries dropped while their objects' deletion failed. Every
object whose key parses as a segment object (layout.py) and is not named by any entry, in any
state, of its partition's manifest is an orphan; so are segment objects of a partition without
a manifest. Keys under ``P/topics/`` that the layout does not know are reported as ``unknown``
and never deleted. Objects named by a manifest but absent are reported as ``missing``.

Uploads name their objects in the manifest (COPY_STARTED) before writing them, so a scrub
running beside a live uploader does not see its objects as orphans. Synchronous (CLI, Spark).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import ManifestFormatError, parse_partition_manifest
from tiered_mq.cold.object_store import ObjectInfo, SyncObjectStore


@dataclass
class ScrubReport:
    orphans: list[ObjectInfo] = field(default_factory=list)
    unknown: list[ObjectInfo] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    bad_manifests: list[str] = field(default_factory=list)
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
    for obj in objects:
        parsed = layout.parse_key(prefix, obj.key)
        if parsed is None or parsed.kind != "manifest":
            continue
        try:
            manifest = parse_partition_manifest(store.get(obj.key)[0])
        except ManifestFormatError:
            report.bad_manifests.append(obj.key)
            broken_partitions.add((parsed.topic, parsed.partition))
            continue
        for segment in manifest.segments:
            for key in segment.objects.values():
                if key is None:
                    continue
                referenced.add(key)
                if key not in existing:
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
    if delete and report.orphans:
        store.delete_many([o.key for o in report.orphans])
        report.deleted = len(report.orphans)
    return report
