"""Turning a topic's remote storage off with its remote data deleted (KIP-950:
``remote.storage.enable=false,remote.log.delete.on.disable=true``): the log start offset of each
local partition goes to its local log start offset inside the config change, before the change
is answered, as Kafka's ``TopicConfigHandler.maybeUpdateRemoteLogComponents`` calls
``maybeIncrementLogStartOffset(localLogStartOffset)`` on the leader logs before it hands the
partitions to ``RemoteLogManager.stopPartitions`` to delete their remote segments.

Why not leave it to the uploader's pass (cold/uploader.py, which raises it again and then
deletes the bucket's copies): a pass already running (an upload to a slow or hung bucket, one
held by ``remote.log.manager.copy.max.bytes.per.second``) takes the change only when it ends,
and meanwhile the answered change was not in force: ListOffsets EARLIEST answered an offset
only the bucket held, and a consumer there was served by, or waited on, a cold tier the topic
no longer has.

Which partitions (:func:`turned_off_with_delete`): those whose config was tiered (its
``remote.storage.enable`` true on a tierable topic, remote_tier.tierable_topic) and now has it
false with ``remote.log.delete.on.disable=true``; every hosted partition is a leader here. A
change that keeps the topic off, or turns it off without the delete (refused by validation
anyway), moves nothing.

Crash behaviour: the new log start offset is checkpointed (``log-start-offset-checkpoint``,
written atomically: LocalLog.set_log_start_offset) before the change is answered, so a broker
killed right after it restarts with it, tiering on or off. A crash before that (the topic config
stored, a checkpoint still old) is covered by the log's open, which for a topic without remote
storage takes the log start offset as at least the first local segment's base (recovery.py,
Kafka's LogLoader); the uploader of the restarted broker, with tiering on, then deletes the
remote segments left (each pass redoes what is left). With tiering off they stay in the bucket
until a broker with tiering on starts (the start is not refused: the topic is not tiered).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from tiered_mq.broker.partition import Partition
from tiered_mq.broker.remote_tier import tierable_topic
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)


def turned_off_with_delete(topic: str, old: LogConfig, new: LogConfig) -> bool:
    """Whether a change from ``old`` to ``new`` turns ``topic``'s remote storage off with its
    remote data deleted (Kafka: was remote log enabled, is not, and delete on disable)."""
    was_tiered = old.remote_storage_enable and tierable_topic(topic, old.cleanup_policy)
    return was_tiered and not new.remote_storage_enable and new.remote_log_delete_on_disable


async def raise_log_starts(topic: str, hosted: Mapping[TopicPartition, Partition]) -> None:
    """Set the log start offset of each of ``topic``'s partitions in ``hosted`` (the replica
    manager's) to its local log start offset, durably (a checkpoint write each, in a worker
    thread, under the partition's lock; one closed meanwhile, its topic deleted, is skipped).
    A partition whose checkpoint cannot be written is logged and left to the uploader's pass
    and the next open (module docstring); the others go on."""
    for tp, partition in list(hosted.items()):
        if tp.topic != topic:
            continue
        async with partition.lock:
            if hosted.get(tp) is not partition:
                continue
            local_log = partition.log
            before = local_log.log_start_offset
            try:
                await asyncio.to_thread(
                    local_log.set_log_start_offset, local_log.local_log_start_offset
                )
            except Exception:
                log.exception("%s: log start offset not raised", tp)
                continue
            if local_log.log_start_offset != before:
                log.info(
                    "%s: remote storage disabled, log start offset %d -> %d (local log start)",
                    tp,
                    before,
                    local_log.log_start_offset,
                )
