"""ZooKeeper coordinator: cluster metadata in ZooKeeper through kazoo, in Kafka's znode layout.

Selected by the broker config ``zookeeper.connect`` (``host:port[,host:port...][/chroot]``; the
chroot is created if missing), with ``zookeeper.session.timeout.ms`` (Kafka's default 18000) and
``zookeeper.connection.timeout.ms`` (default: the session timeout). The znodes and their JSON are
declared in :mod:`tiered_mq.coordination.znodes`.

Reads come from an in-memory view that watches keep fresh (zk_view.py). Writes run kazoo's
blocking calls in a worker thread and update the view themselves before returning, so a broker
reads its own writes at once; other processes see them when their watches fire. While
ZooKeeper is unreachable reads serve the last view and writes fail with REQUEST_TIMED_OUT.

The parts, one module each:

- zk_session.py: the session (connection, REQUEST_TIMED_OUT, the ephemeral broker registration
  and controller election, redone in a new session after an expiry);
- zk_topics.py: topics, partitions and partition states (one multi-op per admin change, so a
  crash or a concurrent admin never leaves half a topic; the topics of one CreateTopics or
  DeleteTopics request go together, their multi-ops sent at once);
- zk_configs.py: users' SCRAM credentials (one conditional multi-op over every user changed)
  and dynamic broker configs;
- zk_ops.py: the kazoo write primitives they share.

Producer id blocks are claimed here with a conditional set on ``/latest_producer_id_block``
(retried on a concurrent claim), so no id is handed out twice by any broker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from tiered_mq.coordination import zk_configs, zk_topics, znodes
from tiered_mq.coordination.base import (
    BrokerInfo,
    NewTopic,
    PartitionState,
    TopicMetadata,
    scram_entries,
)
from tiered_mq.coordination.zk_ops import compare_and_set
from tiered_mq.coordination.zk_session import ZooKeeperSession
from tiered_mq.errors import KafkaError, UnknownTopicOrPartitionError
from tiered_mq.topic_partition import TopicPartition


class ZooKeeperCoordinator:
    """The :class:`~tiered_mq.coordination.base.Coordinator` of a broker with
    ``zookeeper.connect``."""

    def __init__(
        self,
        connect: str,
        node_id: int,
        session_timeout_ms: int = 18000,
        connection_timeout_ms: int | None = None,
    ) -> None:
        self.connect = connect
        self._session = ZooKeeperSession(
            connect, node_id, session_timeout_ms, connection_timeout_ms
        )
        self._view = self._session.view

    @property
    def cluster_id(self) -> str:
        return self._session.cluster_id

    # lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        await self._session.start()

    async def close(self) -> None:
        """Close the session (zk_session.py): ZooKeeper drops the ephemeral znodes at once."""
        await self._session.close()

    # topics ---------------------------------------------------------------------------------
    def list_topics(self) -> list[str]:
        return self._view.list_topics()

    def get_topic(self, name: str) -> TopicMetadata | None:
        return self._view.get_topic(name)

    def unreadable_topics(self) -> frozenset[str]:
        return self._view.unreadable_topics()

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        self._view.add_listener(listener)

    def topics_to_delete(self) -> list[str]:
        return self._view.delete_requests()

    async def create_topic(
        self, name: str, partitions: int, configs: dict[str, str], replicas: list[list[int]]
    ) -> TopicMetadata:
        s = self._session
        topic_id = uuid.uuid4().hex
        assignment = {p: zk_topics.replicas_for(s, replicas, p) for p in range(partitions)}
        await s.call(lambda: zk_topics.create_topic(s, name, topic_id, assignment, configs))
        meta = self.get_topic(name)
        assert meta is not None
        return meta

    async def delete_topic(self, name: str) -> None:
        await self._session.call(lambda: zk_topics.delete_topic(self._session, name))
        self._view.set_assignment(name, None)
        self._view.set_configs(name, None)

    async def create_topics(self, topics: list[NewTopic]) -> dict[str, TopicMetadata | KafkaError]:
        """One multi-op per topic, all sent at once (zk_topics.py)."""
        s = self._session
        batch = [
            (
                t.name,
                uuid.uuid4().hex,
                {p: zk_topics.replicas_for(s, t.replicas, p) for p in range(t.partitions)},
                t.configs,
            )
            for t in topics
        ]
        errors = await s.call(lambda: zk_topics.create_topics(s, batch))
        results: dict[str, TopicMetadata | KafkaError] = {}
        for t in topics:
            error, meta = errors[t.name], self.get_topic(t.name)
            if error is None and meta is not None:
                results[t.name] = meta
            else:
                results[t.name] = error or UnknownTopicOrPartitionError(f"topic '{t.name}' gone")
        return results

    async def delete_topics(self, names: list[str]) -> dict[str, KafkaError | None]:
        """One multi-op per topic, all sent at once (zk_topics.py)."""
        s = self._session
        results = await s.call(lambda: zk_topics.delete_topics(s, names))
        for name, error in results.items():
            if error is None:
                self._view.set_assignment(name, None)
                self._view.set_configs(name, None)
        return results

    async def add_partitions(self, name: str, total: int, replicas: list[list[int]]) -> None:
        s = self._session
        await s.call(lambda: zk_topics.add_partitions(s, name, total, replicas))

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        s = self._session
        await s.call(lambda: zk_topics.set_topic_configs(s, name, configs))
        self._view.set_configs(name, dict(configs))

    # brokers --------------------------------------------------------------------------------
    async def register_broker(self, info: BrokerInfo) -> None:
        """Create the ephemeral ``/brokers/ids/<id>`` and take part in the controller election.
        Raises RuntimeError if a live broker of another session holds the id past the session
        timeout."""
        await self._session.register_broker(info)

    def brokers(self) -> list[BrokerInfo]:
        return self._view.brokers()

    def controller_id(self) -> int:
        return self._view.controller_id()

    # partition state ------------------------------------------------------------------------
    def partition_state(self, tp: TopicPartition) -> PartitionState | None:
        return self._view.partition_state(tp)

    async def set_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        s = self._session
        await s.call(lambda: zk_topics.set_partition_state(s, tp, state))
        self._view.set_state(tp, state)

    # producer ids ---------------------------------------------------------------------------
    async def allocate_producer_id_block(self, size: int) -> tuple[int, int]:
        """Claim ``[start, start + size)`` after the last block any broker claimed (a
        conditional set: a concurrent claim makes this one retry)."""
        s = self._session

        def claim(data: bytes | None) -> tuple[bytes, tuple[int, int]]:
            start = znodes.decode_producer_id_block_end(data)
            block = znodes.encode_producer_id_block(s.node_id, start, start + size)
            return block, (start, start + size)

        return await s.call(lambda: compare_and_set(s.client, znodes.PRODUCER_ID_BLOCK, claim))

    # SCRAM credentials ----------------------------------------------------------------------
    def scram_users(self) -> list[str]:
        return [u for u in self._view.users() if self.scram_credentials(u)]

    def scram_credentials(self, user: str) -> dict[str, str]:
        return scram_entries(self._view.user_config(user))

    async def alter_scram_credentials(self, changes: dict[str, dict[str, str | None]]) -> None:
        """All users' changes in one conditional multi-op (zk_configs.py)."""
        s = self._session
        written = await s.call(lambda: zk_configs.alter_scram_credentials(s.client, changes))
        for user, config in written.items():
            self._view.set_user_config(user, config)

    # dynamic broker configs -----------------------------------------------------------------
    def broker_configs(self, entity: str) -> dict[str, str]:
        return self._view.broker_configs(entity)

    async def set_broker_configs(self, entity: str, configs: dict[str, str]) -> None:
        s = self._session
        await s.call(lambda: zk_configs.set_broker_configs(s.client, entity, configs))
        self._view.set_broker_configs(entity, dict(configs))
