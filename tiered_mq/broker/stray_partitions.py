"""Stray partition directories: logs in the data dir that the cluster metadata does not own.

A directory ``<data_dir>/<topic>-<partition>`` is a stray when its topic is unknown, when the
topic has no such partition, or when its ``partition.metadata`` (hot/partition_metadata.py)
names another topic id than the registered topic's: a topic of that name was deleted and
created again. Strays come from a crash during topic deletion (the topic left the metadata,
the broker died before renaming the directory ``-delete``) and, in ZooKeeper mode, from a topic
deleted or recreated while this broker was down. As Kafka does with the strays it finds, the
broker logs each one, renames it ``<topic>-<partition>.<uniqueId>-delete`` (durably) and removes
it in the background; it is never opened, so none of its records reaches a client, and a topic
created later under that name starts from an empty directory.

:func:`find_strays` runs at start, before any partition opens, once the coordinator's view of
the topics is loaded; :func:`claim_dirs` runs before partitions open (at start and when a
topic or partition is created, for all the partitions opened together): a directory of another
topic id is set aside the same way, and one without the file (written before it existed, or a
crash before :func:`record_claims` wrote it) adopts the registered topic's id, Kafka's upgrade
path. A ``partition.metadata`` that cannot be read in the directory of a registered
topic fails the open with an error naming the file (Kafka takes the log dir offline): nothing is
deleted on a guess.

A topic the metadata lists but cannot read (a ZooKeeper topic znode that is not Kafka's JSON,
``Coordinator.unreadable_topics``) is not gone: its directories are logged and left alone.

Entries that are not partition directories (``cluster.json``, ``.remote-cache``, ``-delete``
directories, names whose topic part is not a legal topic name) are left alone.

Crash behaviour: the rename is the decision. A crash before it finds the stray again at the next
start; one after it leaves a ``-delete`` directory, removed at the next start
(hot/log_dir_deletion.py).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tiered_mq.broker.topic_names import validate_topic_name
from tiered_mq.coordination.base import TopicMetadata
from tiered_mq.errors import InvalidTopicError
from tiered_mq.hot import log_dir_deletion, partition_metadata
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

_PARTITION_DIR: Final = re.compile(r"(.+)-(0|[1-9][0-9]*)")


class StrayPartitionError(RuntimeError):
    """A stray that cannot be kept aside: the broker stops."""


@dataclass(frozen=True, slots=True)
class Stray:
    dir: Path
    reason: str


def parse_partition_dir(name: str) -> TopicPartition | None:
    """The partition whose directory is named ``name`` (``<topic>-<partition>``, Kafka's
    layout), None for any other entry of a data dir."""
    match = _PARTITION_DIR.fullmatch(name)
    if match is None:
        return None
    try:
        validate_topic_name(match[1])
    except InvalidTopicError:
        return None
    return TopicPartition(match[1], int(match[2]))


def stray_reason(dir: Path, tp: TopicPartition, meta: TopicMetadata | None) -> str | None:
    """Why ``dir`` (the directory of ``tp``) is a stray, None when it belongs to ``meta``."""
    if meta is None:
        return f"topic '{tp.topic}' does not exist"
    if tp.partition >= meta.partitions:
        return f"topic '{tp.topic}' has {meta.partitions} partition(s)"
    recorded = partition_metadata.read(dir)
    if recorded is not None and recorded != meta.topic_id:
        return f"topic id {recorded}, topic '{tp.topic}' has id {meta.topic_id}"
    return None


def find_strays(
    data_dir: Path,
    topic: Callable[[str], TopicMetadata | None],
    unreadable: frozenset[str] = frozenset(),
) -> list[Stray]:
    """The stray partition directories in ``data_dir`` (sorted), ``topic`` giving a registered
    topic by name. The directories of an ``unreadable`` topic (listed by the metadata, its
    record not readable) are no strays: they are logged and left alone. Blocking (reads each
    ``partition.metadata``): run it off the event loop."""
    try:
        entries = list(os.scandir(data_dir))
    except FileNotFoundError:
        return []
    strays = []
    for entry in sorted(entries, key=lambda e: e.name):
        tp = parse_partition_dir(entry.name)
        if tp is None or not entry.is_dir(follow_symlinks=False):
            continue
        meta = topic(tp.topic)
        if meta is None and tp.topic in unreadable:
            log.warning(
                "%s: the metadata of topic '%s' cannot be read; left alone", entry.path, tp.topic
            )
            continue
        reason = stray_reason(Path(entry.path), tp, meta)
        if reason is not None:
            strays.append(Stray(Path(entry.path), reason))
    return strays


def set_aside(strays: list[Stray]) -> list[Path]:
    """Rename each stray ``-delete`` (durably) and return the new paths, for the caller to
    remove in the background. Raises OSError when a rename fails: the broker must not start
    with a stray under a partition's name."""
    renamed = []
    for stray in strays:
        log.warning("found stray partition directory %s (%s): deleting it", stray.dir, stray.reason)
        path = log_dir_deletion.rename_for_deletion(stray.dir)
        if path is not None:
            renamed.append(path)
    return renamed


def refuse_unidentified(strays: list[Stray]) -> None:
    """Raise StrayPartitionError naming ``strays`` (if any) for a data dir that records no
    cluster id (meta.properties): nothing tells stale directories from metadata that is not this
    data dir's own (a lost ``cluster.json``, another ZooKeeper chroot), so the broker changes
    nothing and stops; the operator deletes the stale ones or fixes the metadata."""
    if not strays:
        return
    shown = "; ".join(f"{s.dir} ({s.reason})" for s in strays[:5])
    more = f" and {len(strays) - 5} more" if len(strays) > 5 else ""
    raise StrayPartitionError(
        f"this data dir records no cluster id (meta.properties) and holds {len(strays)} "
        f"partition directories its metadata does not own: {shown}{more}. Delete them if "
        f"they are stale, or point the broker at its own metadata; nothing was changed."
    )


@dataclass(frozen=True, slots=True)
class Claims:
    """What :func:`claim_dirs` did: the strays it renamed ``-delete`` (for the caller to remove
    in the background), the directories that record no topic id yet with the id to record
    (:func:`record_claims`), and the parents of the directories it created."""

    strays: list[Path]
    unrecorded: list[tuple[Path, str]]
    created_in: set[Path]


def claim_dirs(claims: Sequence[tuple[Path, str]]) -> Claims:
    """Make each ``(dir, topic id)`` of ``claims`` a partition directory of that topic id
    before it opens, first step: a directory recording another id is a stray, renamed
    ``-delete`` (durably); a missing directory is created. Nothing else is fsynced: the ids
    are recorded, and the new directories made durable, by :func:`record_claims`, called once
    the logs are open (so that one round of directory fsyncs also covers the files a new log
    creates). A crash between the two leaves directories without ``partition.metadata``,
    which take the registered id at the next open (the upgrade path above); no record is in
    them, as the partitions serve nothing before :func:`record_claims` returned. Blocking."""
    strays: list[Path] = []
    unrecorded: list[tuple[Path, str]] = []
    created_in: set[Path] = set()
    for dir, topic_id in claims:
        recorded = partition_metadata.read(dir)
        if recorded is not None and recorded != topic_id:
            strays += set_aside([Stray(dir, f"topic id {recorded}, the topic's is {topic_id}")])
            recorded = None
        if recorded is None:
            try:
                dir.mkdir(parents=True)
                created_in.add(dir.parent)
            except FileExistsError:
                pass
            unrecorded.append((dir, topic_id))
    return Claims(strays, unrecorded, created_in)


def record_claims(claims: Claims, dirs: Iterable[Path] = ()) -> None:
    """Second step of :func:`claim_dirs`: record the topic ids (``partition.metadata``, the
    fsyncs of all grouped: partition_metadata.write_many) and fsync, with their directories,
    ``dirs`` and the parents of the created directories. When it returns, every claimed
    directory exists and records its topic id, durably. Blocking."""
    partition_metadata.write_many(claims.unrecorded, [*dirs, *claims.created_in])
