"""ManifestWriter: the leader's optimistic-concurrency loop on a partition manifest.

A commit applies a *mutation* (a function editing the manifest; it must give the same result
when applied again, e.g. an upsert by upload id) to the last manifest read and writes it
with ``put_if_match`` on the ETag read (``put_if_absent`` while none exists). When the put
loses, the writer reads the manifest again:

- written by a later leader epoch -> ``FencedError``: this broker is a deposed leader; it must
  stop uploading for the partition (its successor owns the manifest now);
- written by this or an earlier epoch (a deposed leader that has not noticed yet, or this
  writer's own put whose answer was lost) -> the mutation is applied to what was read and the
  put retried; the older leader's next put then loses and it finds itself fenced.

After an ambiguous failure (timeout, connection reset: the put may or may not have happened)
the next commit starts by reading the manifest again, so the bucket stays the truth.

Topic ids (manifest.py): a writer given its topic's id stamps it on every write. A manifest
of another topic id (a deleted incarnation of the same name) is never adopted, whatever its
leader epoch: until this writer's first successful put, ``load`` keeps it aside as
``foreign`` and starts from an empty manifest whose first put replaces it (``put_if_match`` on
the foreign manifest's ETag, so a concurrent writer is still detected); after that put, a
foreign manifest means another incarnation took the key over and this writer is fenced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, is_foreign, parse_partition_manifest
from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.errors import ObjectNotFoundError, PreconditionFailedError
from tiered_mq.topic_partition import TopicPartition

_MAX_RACES = 10


class FencedError(PreconditionFailedError):
    """The manifest belongs to a later leader epoch than this writer's, or to another
    incarnation of the topic (topic id)."""


#: a manifest at least this large is parsed in a worker thread, not on the event loop: a
#: partition kept for months holds thousands of entries (about 0.4 KiB of JSON each), tens of
#: milliseconds of parsing; a smaller one parses faster than a thread hop
PARSE_IN_THREAD_BYTES = 64 * 1024


async def load_manifest(
    store: ObjectStore, prefix: str, tp: TopicPartition
) -> tuple[PartitionManifest | None, str | None]:
    """The partition manifest and its ETag, (None, None) when there is none."""
    key = layout.manifest_key(prefix, tp.topic, tp.partition)
    try:
        data, etag = await store.get(key)
    except ObjectNotFoundError:
        return None, None
    if len(data) < PARSE_IN_THREAD_BYTES:
        return parse_partition_manifest(data), etag
    return await asyncio.to_thread(_parse_and_index, data), etag


def _encode_and_index(candidate: PartitionManifest) -> bytes:
    """A commit's manifest as JSON, its readable-segment index built too (in a worker thread:
    the candidate is not shared until the put succeeded)."""
    data = candidate.to_json()
    candidate.readable_segments()
    return data


def _parse_and_index(data: bytes) -> PartitionManifest:
    """A manifest parsed, its readable-segment index built too (in a worker thread: the
    object is not shared yet)."""
    manifest = parse_partition_manifest(data)
    manifest.readable_segments()
    return manifest


class ManifestWriter:
    def __init__(
        self,
        store: ObjectStore,
        prefix: str,
        tp: TopicPartition,
        leader_epoch: int,
        topic_id: str | None = None,
    ) -> None:
        self.store = store
        self.prefix = prefix
        self.tp = tp
        self.leader_epoch = leader_epoch
        self.topic_id = topic_id
        self.key = layout.manifest_key(prefix, tp.topic, tp.partition)
        self.manifest = PartitionManifest(tp.topic, tp.partition, leader_epoch, topic_id=topic_id)
        self.etag: str | None = None
        # the manifest of another incarnation found by ``load``, until a put replaces it
        self.foreign: PartitionManifest | None = None
        self._stale = True
        self._written = False  # a put of this writer succeeded: the key is this topic's

    async def load(self) -> PartitionManifest:
        """Read the manifest from the bucket (raises FencedError if a later epoch, or once
        this writer has written, another incarnation wrote it)."""
        found, etag = await load_manifest(self.store, self.prefix, self.tp)
        self.foreign = None
        if found is not None and is_foreign(found.topic_id, self.topic_id):
            if self._written:
                raise FencedError(self.key, f"manifest taken over by topic id {found.topic_id}")
            self.foreign, found = found, None  # replaced by the next put, on its ETag
        if found is not None and found.leader_epoch > self.leader_epoch:
            raise FencedError(
                self.key,
                f"manifest written by leader epoch {found.leader_epoch}, "
                f"this leader has epoch {self.leader_epoch}",
            )
        self.manifest = found or PartitionManifest(
            self.tp.topic, self.tp.partition, topic_id=self.topic_id
        )
        self.etag = etag
        self._stale = False
        return self.manifest

    async def commit(self, mutate: Callable[[PartitionManifest], None]) -> PartitionManifest:
        if self._stale:
            await self.load()
        for _ in range(_MAX_RACES):
            candidate = self.manifest.copy()
            mutate(candidate)
            candidate.leader_epoch = max(candidate.leader_epoch, self.leader_epoch)
            candidate.topic_id = self.topic_id or candidate.topic_id
            # in a worker thread: entries read from the bucket are encoded on their first write
            # (about 0.5 s at 15,000), and ``candidate`` is this commit's own copy of them; its
            # query index is built there too (6 ms at 10,000 entries, on the loop at the first
            # query of every new version before)
            data = await asyncio.to_thread(_encode_and_index, candidate)
            try:
                if self.etag is None:
                    etag = await self.store.put_if_absent(self.key, data)
                else:
                    etag = await self.store.put_if_match(self.key, data, self.etag)
            except PreconditionFailedError:
                await self.load()  # raises FencedError if a successor wrote it
                continue
            except ObjectNotFoundError:
                # If-Match on a manifest deleted meanwhile (topic deletion): start over.
                await self.load()
                continue
            except BaseException:
                self._stale = True
                raise
            self.manifest, self.etag = candidate, etag
            self.foreign, self._written = None, True
            return candidate
        raise PreconditionFailedError(self.key, f"lost {_MAX_RACES} races in a row")
