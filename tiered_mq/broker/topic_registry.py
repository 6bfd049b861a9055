"""TopicRegistry: topic administration on top of the Coordinator and the ReplicaManager.

Every admin API (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs, Metadata's
auto-creation) goes through here so that the checks are the same everywhere:

- names: Kafka's legal characters, length <= 249, not '.'/'..', no '.'/'_' collision;
- partitions: -1 means ``num.partitions``; otherwise >= 1; at most
  :data:`MAX_PARTITIONS_PER_REQUEST` made by one request (Kafka's POLICY_VIOLATION), so a huge
  count is refused before anything is allocated for it;
- replication factor: -1 means ``default.replication.factor``; at most the live brokers;
- manual replica assignments (CreateTopics, CreatePartitions): Kafka's
  ``validateManualPartitionAssignment`` (INVALID_REPLICA_ASSIGNMENT: no empty list, only live
  brokers, none twice, every partition with as many replicas as the others), stored as given;
- broker configs changed at runtime (broker/dynamic_config.py, ``set_broker_configs``) change
  under the same lock as topics, so a topic is always checked against the defaults it gets;
- the bucket's ``topic.json`` of a tiered topic follows each change; the request waits for that
  write at most ``TOPIC_MANIFEST_WAIT_S`` (a hung bucket never holds an admin answer; the write
  goes on in the background). A request of several resources (AlterConfigs,
  IncrementalAlterConfigs, CreatePartitions) runs in :meth:`TopicRegistry.manifest_writes`:
  the writes of all its resources start as each is changed and are waited for together, once,
  with that one bound, so the whole request waits at most ``TOPIC_MANIFEST_WAIT_S``, not that
  much per resource (four tiered topics on a hung bucket took 20 s, past clients' timeouts);
- configs: the merged topic config must pass ``LogConfig.from_properties`` (InvalidConfigError
  naming the key); on a tiered topic local retention may not exceed retention, nor be -1 while
  retention is finite (Kafka's checks, ``validate_local_retention``); a change turning a tiered
  topic's ``remote.storage.enable`` off must carry ``remote.log.delete.on.disable=true``
  (Kafka's KIP-950 check, ``set_configs``); overrides setting ``remote.storage.enable=true`` on
  a compacted topic, or on a broker without a cold tier, are refused, as in Kafka.

Order of a creation: validate -> coordinator (durable) -> open the partitions locally. A crash in
between leaves a topic whose partitions are created empty at the next start. The topics of one
CreateTopics (DeleteTopics) request are checked one by one, each answered on its own, and
written to the coordinator together: one durable write a request, not one a topic.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.dynamic_config import DynamicBrokerConfigs, Update
from tiered_mq.broker.remote_tier import tierable_topic, tiered_storage_enabled
from tiered_mq.broker.replica_manager import ReplicaManager
from tiered_mq.broker.topic_names import collision_key, validate_topic_name
from tiered_mq.coordination.base import Coordinator, NewTopic, TopicMetadata
from tiered_mq.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    KafkaError,
    PolicyViolationError,
    StorageError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.hot.log_config import (
    validate_local_retention,
    validate_no_remote_storage_for_compacted_topic,
    validate_remote_storage_only_if_system_enabled,
    validate_tiered_topic_stays_uncompacted,
    validate_turning_off_remote_storage_with_delete,
)
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

MAX_PARTITIONS_PER_REQUEST = 10_000  # Kafka's MAX_PARTITIONS_PER_BATCH
# Longest wait of an admin request (CreateTopics, CreatePartitions, AlterConfigs) for the write
# of topic.json it causes; past it the request is answered and the write goes on. Kafka's admin
# APIs never wait for remote storage: a hung bucket (S3 client timeouts and retries, minutes)
# must not hold them past the clients' request timeouts.
TOPIC_MANIFEST_WAIT_S = 5.0


@dataclass(eq=False)
class _RequestWrites:
    """The topic.json writes one admin request started (``TopicRegistry.manifest_writes``);
    ``open`` until the request waits for them (a task the request's code started inherits the
    context, and a write it starts later is not this request's)."""

    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    open: bool = True


_REQUEST_WRITES: ContextVar[_RequestWrites | None] = ContextVar(
    "topic_manifest_writes", default=None
)


def check_partitions_per_request(total: int) -> None:
    """POLICY_VIOLATION when one request would make more than 10,000 partitions."""
    if total > MAX_PARTITIONS_PER_REQUEST:
        raise PolicyViolationError(
            f"Excessively large number of partitions per request: {total} requested, "
            f"limit {MAX_PARTITIONS_PER_REQUEST}."
        )


def check_assignment(
    replicas: list[int], brokers: set[int], replication_factor: int | None
) -> None:
    """Kafka's ``validateManualPartitionAssignment`` on one partition's replica list (brokers
    in id order, so the message names the lowest offender); ``replication_factor`` is the
    replica count of the topic's other partitions, if known."""
    if not replicas:
        raise InvalidReplicaAssignmentError(
            "The manual partition assignment includes an empty replica list."
        )
    previous = None
    for broker_id in sorted(replicas):
        if broker_id not in brokers:
            raise InvalidReplicaAssignmentError(
                f"The manual partition assignment includes broker {broker_id}, but no such "
                "broker is registered."
            )
        if broker_id == previous:
            raise InvalidReplicaAssignmentError(
                f"The manual partition assignment includes the broker {broker_id} more than once."
            )
        previous = broker_id
    if replication_factor is not None and len(replicas) != replication_factor:
        raise InvalidReplicaAssignmentError(
            f"The manual partition assignment includes a partition with {len(replicas)} "
            "replica(s), but this is not consistent with previous partitions, which have "
            f"{replication_factor} replica(s)."
        )


def _check_new_name(name: str, existing: set[str], keys: dict[str, str]) -> None:
    """TOPIC_ALREADY_EXISTS, or INVALID_TOPIC when ``name`` collides ('.' and '_') with an
    existing topic; ``keys`` maps each existing name, '.' read as '_', to it. Worded as
    Kafka's ReplicationControlManager words them ("Topic 'a.b' already exists.", "Topic 'a_b'
    collides with existing topic: a.b")."""
    if name in existing:
        raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
    other = keys.get(collision_key(name))
    if other is not None and other != name:
        raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {other}")


@dataclass(frozen=True)
class TopicRequest:
    """One topic of a CreateTopics request: ``assignments`` (the replicas of partition 0, 1,
    ...), when given, replace ``partitions`` and ``replication_factor`` (-1: the broker's
    ``num.partitions`` / ``default.replication.factor``)."""

    name: str
    partitions: int = -1
    configs: dict[str, str] = field(default_factory=dict)
    replication_factor: int = -1
    assignments: list[list[int]] | None = None


@dataclass(frozen=True)
class CreatedTopic:
    name: str
    topic_id: str | None  # 32 hex digits; None for a validate_only request
    partitions: int
    replication_factor: int
    configs: dict[str, str]


class TopicRegistry:
    def __init__(
        self, config: BrokerConfig, coordinator: Coordinator, replica_manager: ReplicaManager
    ) -> None:
        self.config = config
        self.coordinator = coordinator
        self.replica_manager = replica_manager
        self._lock = asyncio.Lock()
        self.topic_manifest_wait_s = TOPIC_MANIFEST_WAIT_S
        self._publishing: set[asyncio.Task[None]] = set()  # topic.json writes gone on
        self.dynamic_configs = DynamicBrokerConfigs(
            config, coordinator, replica_manager, self._lock
        )
        # awaited with the name of each deleted topic (the group coordinator drops its offsets)
        self.on_topic_deleted: list[Callable[[str], Awaitable[None]]] = []

    @property
    def lock(self) -> asyncio.Lock:
        """The admin lock every topic change holds (broker/metadata_changes.py takes it too)."""
        return self._lock

    # reads --------------------------------------------------------------------------------------
    def list_topics(self) -> list[str]:
        return self.coordinator.list_topics()

    def get_topic(self, name: str) -> TopicMetadata | None:
        return self.coordinator.get_topic(name)

    def effective_configs(self, name: str) -> dict[str, str]:
        """Every config of topic ``name`` with the value it takes (its overrides over the
        broker's defaults), as DescribeConfigs resolves them. A topic that does not exist is
        UNKNOWN_TOPIC_OR_PARTITION raised without a message, as Kafka's ConfigHelper answers
        DescribeConfigs of one (a client shows the code's own text)."""
        meta = self.coordinator.get_topic(name)
        if meta is None:
            raise UnknownTopicOrPartitionError()
        return dict(self.replica_manager.log_config(meta.configs).to_properties())

    def resolve_partitions(self, partitions: int) -> int:
        """A requested partition count: -1 means ``num.partitions``."""
        return self.config.get_int("num.partitions") if partitions == -1 else partitions

    # validation ---------------------------------------------------------------------------------
    def validate_configs(self, configs: dict[str, str]) -> None:
        for key, value in configs.items():
            if value is None:
                raise InvalidConfigError(f"config '{key}' has a null value")
        try:
            validate_remote_storage_only_if_system_enabled(
                configs, tiered_storage_enabled(self.config)
            )
            merged = self.replica_manager.log_config(configs)
            validate_no_remote_storage_for_compacted_topic(configs, merged)
            if merged.remote_storage_enable:
                validate_local_retention(merged)
        except KafkaError:
            raise
        except (ValueError, KeyError, TypeError) as e:
            raise InvalidConfigError(str(e)) from e

    def _manual_replicas(
        self, assignments: list[list[int]], replication_factor: int | None
    ) -> list[list[int]]:
        """``assignments`` (one replica list per new partition) once each list passes
        :func:`check_assignment`."""
        brokers = {b.node_id for b in self.coordinator.brokers()} or {self.config.node_id}
        for replicas in assignments:
            check_assignment(replicas, brokers, replication_factor)
            replication_factor = len(replicas)
        return [list(replicas) for replicas in assignments]

    def _replicas(self, partitions: int, replication_factor: int) -> list[list[int]]:
        if replication_factor == -1:
            replication_factor = self.config.get_int("default.replication.factor")
        nodes = [b.node_id for b in self.coordinator.brokers()] or [self.config.node_id]
        if replication_factor <= 0:
            raise InvalidReplicationFactorError("replication factor must be larger than 0")
        if replication_factor > len(nodes):
            raise InvalidReplicationFactorError(
                f"replication factor: {replication_factor} larger than available brokers: "
                f"{len(nodes)}"
            )
        return [
            [nodes[(p + r) % len(nodes)] for r in range(replication_factor)]
            for p in range(partitions)
        ]

    # writes -------------------------------------------------------------------------------------
    async def create_topic(
        self,
        name: str,
        partitions: int = -1,
        configs: dict[str, str] | None = None,
        replication_factor: int = -1,
        validate_only: bool = False,
        internal: bool = False,
        assignments: list[list[int]] | None = None,
    ) -> CreatedTopic:
        """One topic of :meth:`create_topics`; raises its error."""
        request = TopicRequest(
            name, partitions, dict(configs or {}), replication_factor, assignments
        )
        result = (await self.create_topics([request], validate_only))[0]
        if isinstance(result, Exception):
            raise result
        return result

    async def create_topics(
        self, requests: list[TopicRequest], validate_only: bool = False
    ) -> list[CreatedTopic | Exception]:
        """Create the topics of one CreateTopics request (distinct names), each on its own:
        the result of each, in order, is what was created (or would be, with
        ``validate_only``: no topic id then, and nothing written) or its error. Every topic
        that passes the checks is registered in one coordinator write (``create_topics``),
        then the partitions of all are opened together (``ReplicaManager.open_topics``: one
        worker-thread hop, the fsyncs of the request grouped). A crash between the two leaves
        registered topics whose partitions the next start creates, empty. A registered topic
        is created (answered success) even if some of its partitions' logs fail to open: those
        are offline (``ReplicaManager.offline``: Metadata LEADER_NOT_AVAILABLE, the other APIs
        KAFKA_STORAGE_ERROR), as in Kafka, where the controller commits the topic and a
        broker's failure to create a log takes that partition offline; a retry answers
        TOPIC_ALREADY_EXISTS. A topic named
        like one created earlier in the request is checked against it (TOPIC_ALREADY_EXISTS,
        or INVALID_TOPIC for a '.'/'_' collision), as if created before."""
        results: list[CreatedTopic | Exception | None] = [None] * len(requests)
        planned: dict[int, tuple[CreatedTopic, list[list[int]]]] = {}
        for i, request in enumerate(requests):
            try:
                planned[i] = self._plan(request)
            except Exception as e:
                results[i] = e
        opened: dict[int, str] = {}
        async with self._lock:
            existing = set(self.coordinator.list_topics())
            keys = {collision_key(topic): topic for topic in existing}
            batch: dict[int, NewTopic] = {}
            for i, (created, replicas) in planned.items():
                try:
                    self.validate_configs(created.configs)  # under the lock: current defaults
                    _check_new_name(created.name, existing, keys)
                except Exception as e:
                    results[i] = e
                    continue
                existing.add(created.name)
                keys[collision_key(created.name)] = created.name
                results[i] = created
                if not validate_only:
                    batch[i] = NewTopic(created.name, created.partitions, created.configs, replicas)
            if batch:
                written: Mapping[str, TopicMetadata | Exception]
                try:
                    written = await self.coordinator.create_topics(list(batch.values()))
                except Exception as e:  # nothing of the batch written (embedded)
                    written = dict.fromkeys((t.name for t in batch.values()), e)
                registered: dict[int, TopicMetadata] = {}
                for i, topic in batch.items():
                    outcome = written[topic.name]
                    if isinstance(outcome, Exception):
                        results[i] = outcome
                    else:
                        registered[i] = outcome
                # a partition whose log fails to open is offline (ReplicaManager.offline), its
                # topic created all the same: Kafka's controller answers once the topic is
                # committed; the broker's log dir failure takes the partition offline apart
                await self.replica_manager.open_topics(
                    [(m.name, range(m.partitions), m.configs) for m in registered.values()]
                )
                for i, meta in registered.items():
                    results[i] = replace(planned[i][0], topic_id=meta.topic_id)
                    opened[i] = meta.name
        published = await asyncio.gather(
            *(self._publish_within(self.publish_topic_manifest(n)) for n in opened.values()),
            return_exceptions=True,
        )
        for i, late in zip(opened, published, strict=True):
            if isinstance(late, Exception):
                results[i] = late
        return [r if r is not None else RuntimeError("not created") for r in results]

    def _plan(self, request: TopicRequest) -> tuple[CreatedTopic, list[list[int]]]:
        """The checks of a new topic that need no lock: its name, partition count and
        replicas; returns what it would be and the replicas of each partition."""
        validate_topic_name(request.name)
        partitions = request.partitions
        if request.assignments:
            partitions = len(request.assignments)
        partitions = self.resolve_partitions(partitions)
        if partitions <= 0:
            raise InvalidPartitionsError("number of partitions must be larger than 0")
        check_partitions_per_request(partitions)
        if request.assignments:
            replicas = self._manual_replicas(request.assignments, None)
        else:
            replicas = self._replicas(partitions, request.replication_factor)
        configs = dict(request.configs)
        return CreatedTopic(request.name, None, partitions, len(replicas[0]), configs), replicas

    async def delete_topic(self, name: str) -> None:
        """One topic of :meth:`delete_topics`; raises its error."""
        error = (await self.delete_topics([name]))[name]
        if error is not None:
            raise error

    async def delete_topics(self, names: list[str]) -> dict[str, Exception | None]:
        """Delete the topics of one DeleteTopics request (distinct names), each on its own, as
        Kafka does: a topic is deleted (None) once the coordinator has forgotten it, which it
        does for the whole request in one write (``delete_topics``); else its error.

        The cold tier journals the deletion of each topic's id first, all in one write (a
        crash later resumes it; the journal unwritten, none of the topics is deleted), then
        deletes the bucket's objects of that id in the background, with retries: an
        unreachable bucket never fails the request (cold/topic_deletion.py). The
        ``on_topic_deleted`` listeners (the group coordinator drops the topic's committed
        offsets) run whenever the coordinator's deletion happened, even if the local partitions
        could not be renamed for deletion. Their directories are renamed ``-delete`` before
        this returns and removed in the background (ReplicaManager.delete_partitions); one
        that a crash or a failed rename leaves under its own name is a stray, removed at the
        next start (stray_partitions.py)."""
        results: dict[str, Exception | None] = {}
        deleted: list[str] = []
        try:
            async with self._lock:
                ids: dict[str, str] = {}
                rlm = self.replica_manager.remote_log_manager
                for name in names:
                    meta = self.coordinator.get_topic(name)
                    if meta is None:
                        results[name] = UnknownTopicOrPartitionError(
                            f"topic '{name}' does not exist"
                        )
                    else:
                        ids[name] = meta.topic_id
                if rlm is not None:
                    try:
                        await rlm.record_topic_deletions(list(ids.items()))
                    except Exception as e:  # no journal: none of them is deleted
                        results.update(dict.fromkeys(ids, e))
                        ids = {}
                gone: Mapping[str, Exception | None]
                try:
                    gone = await self.coordinator.delete_topics(list(ids))
                except Exception as e:  # nothing of the batch deleted (embedded)
                    gone = dict.fromkeys(ids, e)
                for name, error in gone.items():
                    results[name] = error
                    if error is not None:
                        continue
                    deleted.append(name)
                    try:
                        await self.replica_manager.delete_partitions(name)
                    except Exception as e:
                        results[name] = e
                    if rlm is not None:
                        try:
                            await rlm.delete_topic(name, ids[name])
                        except Exception as e:
                            results[name] = e
        finally:
            for name in deleted:
                await self._topic_deleted(name)
        return {name: results[name] for name in names}

    async def _topic_deleted(self, name: str) -> None:
        for listener in self.on_topic_deleted:
            try:
                await listener(name)
            except Exception:  # the topic is gone either way; its offsets expire later
                log.exception("topic %s deleted, but a deletion listener failed", name)

    async def create_partitions(
        self,
        name: str,
        total: int,
        validate_only: bool = False,
        assignments: list[list[int]] | None = None,
    ) -> None:
        """Grow ``name`` to ``total`` partitions; ``assignments``, when given, hold the replicas
        of each new partition (exactly one list per new partition, as Kafka requires). A new
        partition whose log fails to open is offline, and the growth succeeds (as in Kafka).

        The refusals are Kafka's (ReplicationControlManager.createPartitions): an unknown topic
        is UNKNOWN_TOPIC_OR_PARTITION raised without a message (Kafka answers none, so clients
        show the code's default text), a smaller count "The topic <name> currently has <n>
        partition(s); <count> would not be an increase.", the same count "Topic already has <n>
        partition(s)." (both INVALID_PARTITIONS)."""
        async with self._lock:
            meta = self.coordinator.get_topic(name)
            if meta is None:
                raise UnknownTopicOrPartitionError()
            if total < meta.partitions:
                raise InvalidPartitionsError(
                    f"The topic {name} currently has {meta.partitions} partition(s); {total} "
                    "would not be an increase."
                )
            if total == meta.partitions:
                raise InvalidPartitionsError(f"Topic already has {total} partition(s).")
            added = total - meta.partitions
            check_partitions_per_request(added)
            if assignments is None:
                replicas = self._replicas(added, -1)
            elif len(assignments) != added:
                raise InvalidReplicaAssignmentError(
                    f"Attempted to add {added} additional partition(s), but only "
                    f"{len(assignments)} assignment(s) were specified."
                )
            else:
                state = self.coordinator.partition_state(TopicPartition(name, 0))
                existing_rf = len(state.replicas) if state is not None else None
                replicas = self._manual_replicas(assignments, existing_rf)
            if validate_only:
                return
            await self.coordinator.add_partitions(name, total, replicas)
            # a new partition whose log fails to open is offline, the growth stands (as above)
            await self.replica_manager.open_topics(
                [(name, range(meta.partitions, total), meta.configs)]
            )
        await self._publish_within(self.publish_topic_manifest(name))

    async def set_configs(self, name: str, configs: dict[str, str], validate_only: bool) -> None:
        """Replace the topic's overrides with ``configs`` (AlterConfigs semantics); a topic that
        does not exist is UNKNOWN_TOPIC_OR_PARTITION "The topic 'x' does not exist." (Kafka's
        ConfigurationControlManager)."""
        async with self._lock:
            self.validate_configs(configs)
            meta = self.coordinator.get_topic(name)
            if meta is None:
                raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
            old, new = map(self.replica_manager.log_config, (meta.configs, configs))
            was_tiered = old.remote_storage_enable and tierable_topic(name, old.cleanup_policy)
            validate_turning_off_remote_storage_with_delete(new, was_tiered)
            validate_tiered_topic_stays_uncompacted(new, was_tiered)
            if validate_only:
                return
            await self.coordinator.set_topic_configs(name, configs)
            await self.replica_manager.reconfigure_topic(name, configs)
        await self._publish_within(self.publish_topic_manifest(name))

    async def set_broker_configs(self, entity: str, update: Update, validate_only: bool) -> None:
        """Replace the dynamic broker configs of ``entity`` (``<default>`` or this broker's id)
        with ``update(current)``; every topic without its own override takes the new values at
        once."""
        await self.dynamic_configs.alter(entity, update, validate_only)
        if not validate_only:
            await self.publish_topic_manifests()  # they carry the effective configs

    # the bucket's copy of topic metadata ------------------------------------------------------
    @contextlib.asynccontextmanager
    async def manifest_writes(self) -> AsyncIterator[None]:
        """The scope of one admin request of several resources: the topic.json writes its
        changes cause (:meth:`_publish_within`) start at once and are not waited for one by
        one; on leaving, the request waits for all of them together at most
        ``topic_manifest_wait_s`` (one deadline), then they go on in the background. A failed
        write is logged, never the resource's error (the change stands, as
        :meth:`publish_topic_manifest` says). Nested scopes are the outer one's."""
        if _REQUEST_WRITES.get() is not None:
            yield
            return
        writes = _RequestWrites()
        token = _REQUEST_WRITES.set(writes)
        try:
            yield
        finally:
            writes.open = False
            _REQUEST_WRITES.reset(token)
            await self._wait_for(writes.tasks)

    async def _publish_within(self, publish: Coroutine[Any, Any, None]) -> None:
        """Run ``publish`` (topic.json writes of an admin change), waiting for it at most
        ``topic_manifest_wait_s``: past it the admin request is answered and the write goes on
        in the background (a hung bucket; later writes of the same topic queue behind it in
        order, RemoteLogManager's per-topic lock). Raises what ``publish`` raises when it ends
        within the wait. Inside :meth:`manifest_writes` it only starts ``publish``: the scope
        waits."""
        task = asyncio.ensure_future(publish)
        self._publishing.add(task)  # referenced until it ends, even if this request is not
        task.add_done_callback(self._publishing.discard)
        writes = _REQUEST_WRITES.get()
        if writes is not None and writes.open:
            task.add_done_callback(self._log_failure)
            writes.tasks.append(task)
            return
        if await self._wait_for([task]):
            task.result()
        else:
            task.add_done_callback(self._log_failure)

    async def _wait_for(self, tasks: list[asyncio.Task[None]]) -> bool:
        """Wait for ``tasks`` together at most ``topic_manifest_wait_s`` (one deadline); True
        if all ended. Those still running go on in the background."""
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=self.topic_manifest_wait_s)
        if pending:
            log.warning(
                "%d topic manifest write(s) still waiting for the bucket after %.1fs; the admin "
                "change is answered, the writes go on",
                len(pending),
                self.topic_manifest_wait_s,
            )
        return not pending

    @staticmethod
    def _log_failure(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("topic manifest write failed", exc_info=task.exception())

    async def publish_topic_manifest(self, name: str) -> None:
        """Write ``topic.json`` (partition count, effective configs) of a tiered topic.

        The bucket alone then says how to restore or replay the topic. A topic whose remote
        storage was turned off with ``remote.log.delete.on.disable=true`` has nothing left to
        restore once its segments are deleted: its topic.json is removed then (kept while a
        segment object remains; ``remote_log_deleted`` asks again when a partition's deletion
        ends), as a topic that never was tiered has none. Best effort: with the bucket
        unreachable the admin change still stands, and the next change or broker start writes
        (or removes) the manifest again.
        """
        rlm = self.replica_manager.remote_log_manager
        meta = self.coordinator.get_topic(name)
        if rlm is None or meta is None or name.startswith("__"):
            return
        configs = self.effective_configs(name)
        try:
            if configs.get("remote.storage.enable") == "true":
                await rlm.write_topic_manifest(name, meta.partitions, configs, meta.topic_id)
            elif configs.get("remote.log.delete.on.disable") == "true" and (
                await rlm.remove_topic_manifest(name)
            ):
                log.info("topic manifest of %s removed: no remote data left", name)
        except (StorageError, OSError) as exc:
            log.warning(
                "topic manifest of %s not updated (retried on the next change): %s", name, exc
            )

    async def remote_log_deleted(self, tp: TopicPartition) -> None:
        """The cold tier deleted ``tp``'s remote log (remote storage turned off): the topic's
        manifest follows, under the admin lock so a concurrent AlterConfigs that turns remote
        storage on again is seen (it then writes topic.json after this)."""
        async with self._lock:
            await self.publish_topic_manifest(tp.topic)

    async def publish_topic_manifests(self) -> None:
        """Rewrite every tiered topic's ``topic.json`` (at broker start, and after a change of
        broker configs), waiting at most ``topic_manifest_wait_s``: a hung bucket never holds
        the start (the writes go on in the background)."""
        await self._publish_within(self._publish_all())

    async def _publish_all(self) -> None:
        for name in self.list_topics():
            await self.publish_topic_manifest(name)
