"""Topic changes made in the cluster metadata by other tools, applied to what this broker hosts.

With ``zookeeper.connect``, other tools may write Kafka's znodes while the broker runs (Kafka's
ZooKeeper tools, kazoo; coordination/znodes.py). Kafka's brokers follow such changes through
the controller's watches; here the coordinator calls :meth:`MetadataChanges.notify` after any
topic change (coordination/base.py ``add_change_listener``) and a task then reconciles, under
the admin lock of the TopicRegistry (so never in the middle of a CreateTopics or AlterConfigs):

- a partition assigned to this broker, with its partition state, that it does not host yet is
  opened (created empty), as a Kafka broker does on LeaderAndIsr; one whose log fails to open
  is offline (ReplicaManager.offline: Metadata answers LEADER_NOT_AVAILABLE) and tried again at
  each later change, and the other topics are reconciled all the same;
- a hosted partition whose state's leader epoch rose (another tool's leader election) takes the
  new epoch, as Kafka's ``Partition.makeLeader``: later batches carry it, Metadata answers it,
  and requests with the older one are fenced (broker/leader_epochs.py); a lower one is ignored;
- a hosted partition whose state, in its leader epoch or a later one, names another ISR or
  replica set (another tool's ISR shrink or expansion, or ``kafka-reassign-partitions`` writing
  a new assignment) takes them, as ``Partition.makeLeader`` takes the LeaderAndIsr's: acks=all
  is judged by the new ISR against ``min.insync.replicas`` capped at the new replica count, and
  the under-replicated and under-min-ISR gauges count them. A state of an older epoch is stale
  and ignored;
- a hosted topic whose config overrides changed: its logs take the new ones, as after
  AlterConfigs (Kafka's topic config change handler);
- dynamic broker configs changed (``/config/brokers/<default>``, ``/<id>``; Kafka's
  ``kafka-configs.sh --zookeeper --entity-type brokers``): they are loaded again as at start
  (DynamicBrokerConfigs.load: a bad value is logged and left out) and every log whose config
  they change takes it, as Kafka's DynamicConfigManager applies them;
- a topic named under ``/admin/delete_topics`` is deleted as DeleteTopics deletes it (cold tier,
  committed offsets, local directories); the request goes with it (Kafka's TopicDeletionManager),
  or alone when there is no such topic. A request for a topic not completed yet waits for it;
- a hosted topic gone from the metadata without such a request (its ``/brokers/topics/<t>``
  removed by another tool; an unreadable znode is not gone) stops being served and its local
  directories are renamed ``-delete`` and removed in the background, as the broker's next start
  would remove them as strays (stray_partitions.py). Its cold-tier objects and committed offsets
  are left, as at that start. Kafka's controller only forgets such a topic
  (``processTopicChange``: ``controllerContext.removeTopic``, no StopReplica): its brokers go on
  serving the partitions their Metadata no longer lists until they restart, and then keep the
  logs on disk for good; here Metadata, Produce and Fetch agree at once.

Changes made through this broker are seen too and find nothing left to do. Several
notifications while a reconciliation runs make one more. A failure is logged; the next change
(or the broker's next start) tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from tiered_mq.broker.config import DEFAULT_BROKER_ENTITY
from tiered_mq.broker.topic_registry import TopicRegistry
from tiered_mq.errors import UnknownTopicOrPartitionError
from tiered_mq.topic_partition import TopicPartition

if TYPE_CHECKING:
    from tiered_mq.broker.partition import Partition
    from tiered_mq.coordination.base import PartitionState

log = logging.getLogger(__name__)


class MetadataChanges:
    """Reconciles the hosted partitions with the metadata (the module docstring)."""

    def __init__(self, registry: TopicRegistry) -> None:
        self.registry = registry
        self._pending = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._broker_configs: dict[str, dict[str, str]] = {}  # as last loaded ({}: load again)

    def _stored_broker_configs(self) -> dict[str, dict[str, str]]:
        entities = (DEFAULT_BROKER_ENTITY, str(self.registry.config.node_id))
        return {e: self.registry.coordinator.broker_configs(e) for e in entities}

    def start(self) -> None:
        """Listen to the coordinator and reconcile once now (call on the event loop)."""
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name="metadata-changes")
        self.registry.coordinator.add_change_listener(self.notify)
        self._pending.set()

    def notify(self) -> None:
        """The metadata changed (any thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._pending.set)

    async def close(self) -> None:
        self._loop = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await self._pending.wait()
            self._pending.clear()
            try:
                await self.reconcile()
            except Exception:
                log.exception("applying metadata changes failed; retried at the next change")

    async def reconcile(self) -> None:
        registry = self.registry
        coordinator, rm = registry.coordinator, registry.replica_manager
        node_id = registry.config.node_id
        for name in coordinator.topics_to_delete():
            if name in coordinator.unreadable_topics():  # once completed (coordination/znodes.py)
                continue
            log.info("deleting topic %s, as /admin/delete_topics asks", name)
            with contextlib.suppress(UnknownTopicOrPartitionError):  # its request went too
                if coordinator.get_topic(name) is None:  # no such topic: only the request goes
                    await coordinator.delete_topic(name)
                else:
                    await registry.delete_topic(name)
        async with registry.lock:
            unreadable = coordinator.unreadable_topics()
            for name in sorted({tp.topic for tp in [*rm.partitions, *rm.offline]}):
                if coordinator.get_topic(name) is None and name not in unreadable:
                    log.warning(
                        "topic %s is no longer in the metadata (removed by another tool): its "
                        "local partitions stop and their directories are deleted",
                        name,
                    )
                    await rm.delete_partitions(name)
            stored = self._stored_broker_configs()
            if stored != self._broker_configs:
                log.info("dynamic broker configs now %s", stored)
                self._broker_configs = stored
                registry.dynamic_configs.load()  # the logs follow below
            hosted = {tp.topic: partition for tp, partition in rm.partitions.items()}  # one each
            for name in coordinator.list_topics():
                meta = coordinator.get_topic(name)
                if meta is None:
                    continue
                some = hosted.get(name)
                if some is not None and some.log.config != rm.log_config(meta.configs):
                    log.info("topic %s: config overrides now %s", name, meta.configs)
                    await rm.reconfigure_topic(name, meta.configs)
                missing = []
                for p in range(meta.partitions):
                    tp = TopicPartition(name, p)
                    state = coordinator.partition_state(tp)
                    partition = rm.partitions.get(tp)
                    if partition is not None:
                        if state is not None and _changed(partition, state):
                            await _take_state(partition, state)
                        continue
                    if state is not None and node_id in state.replicas:
                        missing.append(p)
                if missing:
                    log.info("topic %s: hosting partitions %s", name, missing)
                    for start, stop in _runs(missing):
                        try:
                            await rm.open_partitions(name, range(start, stop), meta.configs)
                        except Exception:  # offline (rm.offline, logged): retried next change
                            continue


def _changed(partition: Partition, state: PartitionState) -> bool:
    """``state`` is news for ``partition``: a higher leader epoch, or in its epoch or a later
    one another ISR or replica set (an older epoch's state is stale)."""
    if state.leader_epoch > partition.leader_epoch:
        return True
    return state.leader_epoch == partition.leader_epoch and (
        state.isr != partition.isr or state.replicas != partition.replicas
    )


async def _take_state(partition: Partition, state: PartitionState) -> None:
    """A hosted partition takes its state's leader epoch, ISR and replicas (under the partition
    lock, so no append straddles the change). Batches appended from now on carry the epoch;
    clients still sending an older one are answered FENCED_LEADER_EPOCH (leader_epochs.py);
    acks=all appends are judged by the new ISR and replica count (Partition.effective_min_isr)."""
    async with partition.lock:
        if state.leader_epoch != partition.leader_epoch:
            log.info(
                "%s: leader epoch %d -> %d",
                partition.tp,
                partition.leader_epoch,
                state.leader_epoch,
            )
            partition.leader_epoch = state.leader_epoch
        if (state.isr, state.replicas) != (partition.isr, partition.replicas):
            log.info(
                "%s: ISR %s -> %s, replicas %s -> %s",
                partition.tp,
                list(partition.isr),
                list(state.isr),
                list(partition.replicas),
                list(state.replicas),
            )
            partition.isr = state.isr
            partition.replicas = state.replicas


def _runs(indexes: list[int]) -> list[tuple[int, int]]:
    """Sorted ``indexes`` as ``[start, stop)`` runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for i in indexes:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs
