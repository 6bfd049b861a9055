"""Deleting a deleted topic's objects from the bucket: in the background, with retries, by
topic id, and resumed after a crash.

Kafka answers DeleteTopics once the metadata is gone and deletes the remote segments
asynchronously (RemoteLogManager.stopPartitions with deleteRemoteLog); they are keyed by topic
id, so a topic created again with the same name never sees them. Here keys carry the name only
(layout.py), so what belongs to the deleted incarnation is told by the ``topic_id`` of the
manifests (manifest.py).

Order of a deletion (TopicRegistry.delete_topic):

1. ``record(topic, topic_id)``: the pending deletion is written to the journal (below) and
   fsynced, before the coordinator forgets the topic (``record_many``: the topics of one
   DeleteTopics request in one write);
2. the coordinator deletes the topic, the local partitions go, their uploaders are stopped;
3. ``schedule(topic, topic_id)``: a task (``delete-remote-{topic}``) runs
   :func:`delete_topic_objects` until it succeeds (retried with the uploader's backoff,
   ``UploaderSettings.retry_delay``), then drops the journal entry.

A crash anywhere leaves the entry: ``start()`` resumes it, unless the coordinator still has a
topic of that name and id (the crash came before step 2: the topic lives). Uploaders of a
topic of the same name wait for its pending deletions (``wait``) before they read their
manifest, so a deletion never races the new incarnation's writer on the manifest key (a
deletion that never succeeds thus holds the new topic's uploads back; the copy lag shows it).
A wiped data dir loses the journal: the new incarnation's uploaders then replace the old
manifests (uploader.py) and a scrub finds what is left (scrub.py).

Journal, ``<data_dir>/remote-log-deletions.json``, replaced atomically (write, fsync, rename)::

    {"version": 1, "deletions": [{"topic": "orders", "topic_id": "5f1c..."}, ...]}
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import (
    ManifestFormatError,
    parse_partition_manifest,
    parse_topic_manifest,
)
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.durable_file import replace_durably
from tiered_mq.errors import ObjectNotFoundError

log = logging.getLogger(__name__)

JOURNAL_NAME = "remote-log-deletions.json"
_VERSION = 1

Deletion = tuple[str, str]  # (topic, topic_id)


async def delete_topic_objects(store: ObjectStore, prefix: str, topic: str, topic_id: str) -> int:
    """One attempt: delete the objects of incarnation ``topic_id`` of ``topic``; how many.

    Under the topic's prefix: every partition manifest of ``topic_id`` or without a topic id
    (written before ids: no live topic writes one) goes, with topic.json if it is of the same
    kind; manifests of another id (a newer incarnation) stay, with the objects they name.
    Every other segment object goes: no kept manifest names it (uploads name their objects in
    the manifest before writing them, and the listing comes first, so an object listed and
    not named when the manifest is read afterwards is no live upload's). A partition whose
    manifest does not parse is left whole (a scrub reports it). Segment objects go before the
    manifests: a failure in between leaves manifests for the next attempt, never objects no
    manifest names. Idempotent."""
    objects = await store.list(layout.topic_prefix(prefix, topic))
    kept: set[str] = set()  # object keys named by a manifest of another incarnation
    broken: set[int] = set()
    doomed_manifests: list[str] = []
    parsed_keys = [(o.key, layout.parse_key(prefix, o.key)) for o in objects]
    for key, parsed in parsed_keys:
        if parsed is None or parsed.kind not in ("manifest", "topic"):
            continue
        try:
            data, _ = await store.get(key)
            if parsed.kind == "topic":
                owner = parse_topic_manifest(data).topic_id
            else:
                manifest = parse_partition_manifest(data)
                owner = manifest.topic_id
        except ObjectNotFoundError:
            continue
        except ManifestFormatError as e:
            log.warning("%s: unreadable manifest left to a scrub: %s", key, e)
            if parsed.kind == "manifest":
                broken.add(parsed.partition)
            continue
        if owner in (topic_id, None):
            doomed_manifests.append(key)
        elif parsed.kind == "manifest":
            kept.update(k for s in manifest.segments for k in s.objects.values() if k)
    segments = [
        key
        for key, parsed in parsed_keys
        if parsed is not None
        and parsed.kind == "segment"
        and key not in kept
        and parsed.partition not in broken
    ]
    await store.delete_many(segments)
    await store.delete_many(doomed_manifests)
    return len(segments) + len(doomed_manifests)


class DeletionJournal:
    """The pending deletions file (module docstring); blocking: call from a worker thread."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[Deletion]:
        try:
            doc = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return []
        if doc.get("version") != _VERSION:
            raise ValueError(f"{self.path}: unsupported version {doc.get('version')!r}")
        return [(str(d["topic"]), str(d["topic_id"])) for d in doc["deletions"]]

    def _write(self, deletions: list[Deletion]) -> None:
        entries = [{"topic": topic, "topic_id": topic_id} for topic, topic_id in deletions]
        doc = {"version": _VERSION, "deletions": entries}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_durably(self.path, json.dumps(doc, sort_keys=True).encode())

    def add(self, deletion: Deletion) -> None:
        self.add_many([deletion])

    def add_many(self, deletions: list[Deletion]) -> None:
        """Add every one of ``deletions`` not there yet, in one durable write."""
        current = self.load()
        new = [d for d in dict.fromkeys(deletions) if d not in current]
        if new:
            self._write([*current, *new])

    def remove(self, deletion: Deletion) -> None:
        current = self.load()
        if deletion in current:
            self._write([d for d in current if d != deletion])


class RemoteTopicDeleter:
    """Runs the pending deletions of one broker (module docstring). ``topic_ids`` gives the
    coordinator's id of a live topic (None: no such topic)."""

    def __init__(
        self,
        store: ObjectStore,
        prefix: str,
        journal: DeletionJournal | None,
        topic_ids: Callable[[str], str | None],
        *,
        retry_delay: Callable[[int], float],
        on_deleted: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.prefix = prefix
        self.journal = journal
        self.topic_ids = topic_ids
        self.retry_delay = retry_delay  # failures in a row -> seconds (UploaderSettings')
        self.on_deleted = on_deleted
        self._tasks: dict[Deletion, asyncio.Task[None]] = {}
        self._journal_lock = asyncio.Lock()  # one load-modify-write of the file at a time

    async def _journal(self, change: Callable[[Deletion], None], deletion: Deletion) -> None:
        async with self._journal_lock:
            await asyncio.to_thread(change, deletion)

    async def start(self) -> None:
        """Resume the journal's deletions; drop those whose topic still lives."""
        if self.journal is None:
            return
        for topic, topic_id in await asyncio.to_thread(self.journal.load):
            if self.topic_ids(topic) == topic_id:  # crashed before the metadata went
                await self._journal(self.journal.remove, (topic, topic_id))
            else:
                self.schedule(topic, topic_id)

    async def close(self) -> None:
        """Cancel the running deletions (their journal entries stay for the next start)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

    async def record(self, topic: str, topic_id: str) -> None:
        await self.record_many([(topic, topic_id)])

    async def record_many(self, deletions: list[Deletion]) -> None:
        """Journal ``deletions`` (those of one DeleteTopics request) in one durable write."""
        if self.journal is not None and deletions:
            journal = self.journal
            async with self._journal_lock:
                await asyncio.to_thread(journal.add_many, deletions)

    def schedule(self, topic: str, topic_id: str) -> None:
        deletion = (topic, topic_id)
        if deletion not in self._tasks:
            self._tasks[deletion] = asyncio.create_task(
                self._delete_routine(deletion), name=f"delete-remote-{topic}"
            )

    def pending(self, topic: str) -> bool:
        return any(t == topic for t, _ in self._tasks)

    async def wait(self, topic: str) -> None:
        """Until no deletion of a topic named ``topic`` is pending (shielded: a cancelled
        waiter does not cancel the deletion)."""
        while True:
            tasks = [task for (t, _), task in self._tasks.items() if t == topic]
            if not tasks:
                return
            await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))

    async def _delete_routine(self, deletion: Deletion) -> None:
        topic, topic_id = deletion
        failures = 0
        try:
            while True:
                if self.topic_ids(topic) == topic_id:  # never a live topic's data
                    log.warning("%s: not deleting the objects of a live topic", topic)
                    break
                try:
                    count = await delete_topic_objects(self.store, self.prefix, topic, topic_id)
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    failures += 1
                    delay = self.retry_delay(failures)
                    log.warning(
                        "deletion of topic %s's objects failed (retry in %.1fs): %s",
                        topic,
                        delay,
                        e,
                    )
                    await asyncio.sleep(delay)
                    continue
                log.info("deleted %d objects of deleted topic %s (id %s)", count, topic, topic_id)
                break
            if self.on_deleted is not None:
                self.on_deleted(topic)
            if self.journal is not None:
                try:
                    await self._journal(self.journal.remove, deletion)
                except OSError as e:  # the next start deletes again: idempotent
                    log.warning("%s: journal not updated: %s", self.journal.path, e)
        finally:
            self._tasks.pop(deletion, None)
