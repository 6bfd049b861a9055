"""Broker: wires the services of one broker process together and runs them.

Start order: data dir lock -> coordinator -> dynamic broker configs (kept by the coordinator,
broker/dynamic_config.py) -> cold tier (remote_tier.py; an uploader starts as each tiered
partition opens) -> replica manager (opens and recovers every partition) -> TCP
server (binds; port 0 picks a free one) -> broker registration -> group coordinator ->
transaction coordinator (loads ``__transaction_state``) -> metrics endpoint. ``close()`` runs it
backwards: stop accepting and drop connections, close the transaction and group coordinators,
stop the cold tier's uploaders, then flush every log, snapshot producer state and close the
logs, then the coordinator. A second broker on the same data dir fails at start
(``<data_dir>/.lock``, flock), and so does a second broker in the same ZooKeeper chroot (there is
no replication yet to share partitions between brokers), and a data dir whose ``meta.properties``
records another cluster id than the coordinator's, or another broker.id than the configured one
(meta_properties.py: before any partition directory is opened or, as a stray, deleted), or
whose tiered partitions were uploaded to another cold tier than the configured one
(cold_tier_record.py: before the cold tier starts), and a start with tiered storage off while
topics have ``remote.storage.enable=true`` (tiering_off.py, as Kafka: before the same point).
"""

from __future__ import annotations

import asyncio
import fcntl
import importlib
import importlib.util
import logging
import os
from collections.abc import Callable
from typing import Any

from tiered_mq.broker import cold_tier_record, meta_properties, tiering_off
from tiered_mq.broker.acl.authorizer import Authorizer
from tiered_mq.broker.acl.store import FileAclStore
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.handlers import Handler, discover
from tiered_mq.broker.listener import Listener, listeners
from tiered_mq.broker.metadata_changes import MetadataChanges
from tiered_mq.broker.metrics import BrokerMetrics
from tiered_mq.broker.open_files import raise_open_files_limit
from tiered_mq.broker.producer_ids import ProducerIdManager
from tiered_mq.broker.remote_tier import (
    start_remote_tier,
    stop_remote_tier,
    tierable_topic,
    tiered_storage_enabled,
)
from tiered_mq.broker.replica_manager import ReplicaManager
from tiered_mq.broker.sasl import SaslConfig
from tiered_mq.broker.scram_credentials import managed_lookup
from tiered_mq.broker.server import KafkaServer
from tiered_mq.broker.tls import ssl_context
from tiered_mq.broker.topic_registry import TopicRegistry
from tiered_mq.broker.txn.coordinator import TransactionCoordinator
from tiered_mq.coordination.base import BrokerInfo, Coordinator
from tiered_mq.coordination.embedded import EmbeddedCoordinator
from tiered_mq.coordination.zookeeper import ZooKeeperCoordinator
from tiered_mq.errors import InvalidConfigError
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

GROUP_COORDINATOR_MODULE = "tiered_mq.broker.group.coordinator"


def _load_group_coordinator(replica_manager: ReplicaManager, config: BrokerConfig) -> Any:
    try:
        if importlib.util.find_spec(GROUP_COORDINATOR_MODULE) is None:
            return None
    except ModuleNotFoundError:
        return None
    module = importlib.import_module(GROUP_COORDINATOR_MODULE)
    return module.GroupCoordinator(replica_manager, config)


def _coordinator(config: BrokerConfig) -> Coordinator:
    """ZooKeeper with ``zookeeper.connect``, else the data dir's cluster.json."""
    connect = config.get("zookeeper.connect") or ""
    if not connect:
        return EmbeddedCoordinator(config.data_dir, config.node_id)
    timeout_key = "zookeeper.connection.timeout.ms"  # empty: the session timeout
    return ZooKeeperCoordinator(
        connect,
        config.node_id,
        session_timeout_ms=config.get_int("zookeeper.session.timeout.ms"),
        connection_timeout_ms=config.get_int(timeout_key) if config.get(timeout_key) else None,
    )


class Broker:
    def __init__(
        self,
        config: BrokerConfig,
        coordinator: Coordinator | None = None,
        metrics_port: int = 0,
    ) -> None:
        config.check_values()  # ValueError: num.partitions=abc, auto.create.topics.enable=yes
        if config.unused:
            log.warning(
                "these Kafka settings are accepted but not used by this broker (one node, no "
                "replication): %s",
                ", ".join(config.unused),
            )
        self.config = config
        self.metrics_port = metrics_port
        self.coordinator: Coordinator = coordinator or _coordinator(config)
        self.metrics = BrokerMetrics()
        self.replica_manager = ReplicaManager(config, self.coordinator)
        self.replica_manager.metrics_registry = self.metrics.registry
        self.metrics.watch_partitions(lambda: self.replica_manager.partitions)
        self.metrics.watch_topics(
            lambda: self.replica_manager.partitions, self.coordinator, config.node_id
        )
        self.replica_manager.on_topic_deleted = self.metrics.forget_topic
        self.topic_registry = TopicRegistry(config, self.coordinator, self.replica_manager)
        self.replica_manager.topic_registry = self.topic_registry
        self.metadata_changes = MetadataChanges(self.topic_registry)
        self.producer_id_manager = ProducerIdManager(
            self.coordinator, config.get_int("producer.id.block.size")
        )
        self.remote_log_manager: Any = None
        self.group_coordinator: Any = None
        self.txn_coordinator: TransactionCoordinator | None = None
        self.handlers: dict[int, Handler] = discover()
        # ValueError: a bad listeners/ssl.*/sasl.* setting
        self.servers = [KafkaServer(self, self.handlers, li) for li in listeners(config)]
        self._sasl = {
            s.listener.name: SaslConfig.from_config(
                config, s.listener.name, managed_lookup(self.coordinator)
            )
            for s in self.servers
            if s.listener.sasl
        }
        self.metrics_bound_port: int | None = None
        self.authorizer: Authorizer | None = None  # set at start, from the data dir's ACLs
        self._lock_fd: int | None = None

    @property
    def server(self) -> KafkaServer:
        """The first listener's server."""
        return self.servers[0]

    @property
    def listeners(self) -> list[Listener]:
        """Every listener, with its bound port once started."""
        return [s.listener for s in self.servers]

    @property
    def port(self) -> int:
        """The first listener's bound port."""
        return self.server.listener.port

    @property
    def advertised_host(self) -> str:
        """The first listener's advertised host."""
        return self.server.listener.endpoint[0]

    @property
    def cluster_id(self) -> str:
        return self.coordinator.cluster_id

    def _refuse_other_brokers(self) -> None:
        """Until replication lands, a cluster has one broker: a second broker in the same
        ZooKeeper chroot would lead partitions the first one leads too."""
        others = sorted(
            b.node_id for b in self.coordinator.brokers() if b.node_id != self.config.node_id
        )
        if others and self.config.get("zookeeper.connect"):
            raise RuntimeError(
                f"broker(s) {others} already registered at zookeeper.connect="
                f"{self.config.get('zookeeper.connect')}: a cluster has one broker until "
                "replication is built; give each broker its own chroot (host:port/name)"
            )

    def _topic_id(self, name: str) -> str | None:
        meta = self.coordinator.get_topic(name)
        return None if meta is None else meta.topic_id

    def _tiered_partitions(self) -> Callable[[TopicPartition], bool]:
        """Whether the metadata makes a partition one of a tiered topic (its effective
        ``remote.storage.enable``; never an internal or compacted topic), for one pass over
        the data dir's partition directories (cold_tier_record.check): each topic's config is
        merged and parsed once in the pass, not once per directory."""
        topics: dict[str, bool] = {}

        def tiered(tp: TopicPartition) -> bool:
            meta = self.coordinator.get_topic(tp.topic)
            if meta is None or not meta.has_partition(tp.partition):
                return False
            known = topics.get(tp.topic)
            if known is None:
                known = topics[tp.topic] = self._tiered_topic(tp.topic, meta.configs)
            return known

        return tiered

    def _tiered_topic(self, name: str, overrides: dict[str, str]) -> bool:
        try:
            config = self.replica_manager.log_config(overrides)
        except InvalidConfigError:  # its open fails later, naming the key
            return overrides.get("remote.storage.enable", "").strip().lower() == "true"
        return config.remote_storage_enable and tierable_topic(name, config.cleanup_policy)

    def _refuse_tiering_off(self, metadata: str) -> None:
        """Raises TieredStorageDisabledError when tiered storage is off but topics are tiered."""
        tiering_off.check(
            self.config.data_dir,
            metadata,
            self.config.topic_defaults,
            tiering_off.tiered_topics(self.coordinator, self.replica_manager.log_config),
            cold_tier_record.recorded_url(self.config.data_dir),
        )

    def _lock_data_dir(self) -> None:
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.config.data_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RuntimeError(f"{self.config.data_dir} is in use by another broker") from None
        self._lock_fd = fd

    async def start(self) -> None:
        LogConfig.from_properties(self.config.topic_defaults)  # fail fast on bad defaults
        raise_open_files_limit()  # as Kafka's JVM does: a file or more per partition
        self._lock_data_dir()
        self.authorizer = Authorizer.from_config(self.config, FileAclStore(self.config.data_dir))
        await self.coordinator.start()
        self._refuse_other_brokers()
        connect = self.config.get("zookeeper.connect")
        metadata = f"zookeeper.connect={connect}" if connect else "the embedded cluster.json"
        identified = await asyncio.to_thread(
            meta_properties.check_cluster_id,
            self.config.data_dir,
            self.cluster_id,
            metadata,
            self.config.node_id,
        )
        self.topic_registry.dynamic_configs.load()
        cold_url = self.config.cold_url if tiered_storage_enabled(self.config) else None
        if cold_url is None:  # Kafka refuses it while topics are tiered (tiering_off.py)
            await asyncio.to_thread(self._refuse_tiering_off, metadata)
        record_cold_url = await asyncio.to_thread(
            cold_tier_record.check, self.config.data_dir, cold_url, self._tiered_partitions()
        )
        self.remote_log_manager = await start_remote_tier(
            self.config, self.metrics.registry, self._topic_id
        )
        if self.remote_log_manager is not None:  # topic.json follows a deleted remote log
            self.remote_log_manager.on_remote_log_deleted = self.topic_registry.remote_log_deleted
            self.remote_log_manager.on_topic_manifest_needed = (
                self.topic_registry.publish_topic_manifest
            )
        self.replica_manager.remote_log_manager = self.remote_log_manager
        await self.replica_manager.start(delete_strays=identified)
        # a new data dir or one from before meta.properties (no stray in it), or a new cold URL
        if not identified or record_cold_url is not None:
            await asyncio.to_thread(
                meta_properties.write,
                self.config.data_dir,
                self.config.node_id,
                self.cluster_id,
                {cold_tier_record.KEY: record_cold_url} if record_cold_url is not None else None,
            )
        await self.topic_registry.publish_topic_manifests()
        self.metadata_changes.start()  # changes by other tools (ZooKeeper) from now on
        self.metrics_bound_port = self.metrics.serve(self.config.host, self.metrics_port)
        self.group_coordinator = _load_group_coordinator(self.replica_manager, self.config)
        if self.group_coordinator is not None:
            await self.group_coordinator.start()
            self.topic_registry.on_topic_deleted.append(self.group_coordinator.on_topic_deleted)
            self.metrics.watch_consumer_groups(
                self.group_coordinator, lambda: self.replica_manager.partitions
            )
        txn_coordinator = TransactionCoordinator(
            self.replica_manager, self.config, self.producer_id_manager, self.group_coordinator
        )
        await txn_coordinator.start()
        self.txn_coordinator = txn_coordinator
        # the listener opens last: a client that can connect finds every part ready
        for server in self.servers:
            name = server.listener.name
            tls = ssl_context(self.config, name) if server.listener.tls else None
            await server.start(tls, self._sasl.get(name))
        host, port = self.server.listener.endpoint  # the address of the first listener
        endpoints = tuple(
            (s.listener.name, s.listener.protocol, *s.listener.endpoint) for s in self.servers
        )
        rack = self.config.get("broker.rack") or None  # registered as Kafka's "rack"
        info = BrokerInfo(self.config.node_id, host, port, rack, endpoints)
        await self.coordinator.register_broker(info)
        names = ", ".join(map(str, self.listeners))
        log.info("broker %d listening on %s", self.config.node_id, names)

    async def close(self) -> None:
        for server in self.servers:
            await server.stop()
        if self.txn_coordinator is not None:
            await self.txn_coordinator.close()
        if self.group_coordinator is not None:
            try:
                await self.group_coordinator.close()
            except Exception:
                log.exception("group coordinator close failed")
        await self.metadata_changes.close()
        try:
            await stop_remote_tier(self.remote_log_manager)  # uploaders end before logs close
        except Exception:
            log.exception("cold tier close failed")
        await self.replica_manager.close()
        await self.coordinator.close()
        self.metrics.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
