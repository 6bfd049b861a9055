"""ZooKeeper coordinator: cluster metadata in ZooKeeper through kazoo, in Kafka's znode layout.

Selected by the broker config ``zookeeper.connect`` (``host:port[,host:port...][/chroot]``; the
chroot is created if missing), with ``zookeeper.session.timeout.ms`` (Kafka's default 18000) and
``zookeeper.connection.timeout.ms`` (default: the session timeout). The znodes and their JSON are
declared in :mod:`tiered_mq.coordination.znodes`.

Reads come from an in-memory view that watches keep fresh (zk_view.py). Writes run kazoo's
blocking calls in a worker thread and update the view themselves before returning, so a broker
reads its own writes at once; other processes see them when their watches fire.

Atomicity: a topic is created (assignment, partition states, config) and deleted in one
ZooKeeper multi-op transaction, and partitions are added in one transaction that checks the
assignment's version, so a crash or a concurrent admin never leaves half a topic. Producer id
blocks are claimed with a conditional set on ``/latest_producer_id_block`` (retried on a
concurrent claim), so no id is handed out twice by any broker. SCRAM credentials of several
users change in one transaction that checks each user znode's version (read-modify-write of
its config, retried on a concurrent change). Dynamic broker configs replace their entity's
znode (``/config/brokers/<default>`` or ``/<id>``) in one write.

Sessions: the broker registration ``/brokers/ids/<id>`` and ``/controller`` are ephemeral. The
first broker to create ``/controller`` is the controller, and bumps ``/controller_epoch``; when
the controller's session ends its znode goes and the others race again. When this client's
session expires (ZooKeeper unreachable for longer than the session timeout) kazoo reconnects
with a new session and the registration and election are done again. A registration that finds
the node owned by an older session of the same id (a broker restarted after a crash) waits up to
the session timeout for ZooKeeper to expire it. While ZooKeeper is unreachable reads serve the
last view and writes fail with REQUEST_TIMED_OUT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NodeExistsError,
    NoNodeError,
    RolledBackError,
)
from kazoo.handlers.threading import KazooTimeoutError

from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import (
    BrokerInfo,
    PartitionState,
    TopicMetadata,
    apply_scram_changes,
    scram_entries,
)
from tiered_mq.coordination.zk_view import MetadataView
from tiered_mq.errors import (
    InvalidPartitionsError,
    KafkaError,
    RequestTimedOutError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)
T = TypeVar("T")
_ALTER_ATTEMPTS = 20
_CONCURRENT = (BadVersionError, NodeExistsError, NoNodeError)  # a multi-op lost a race


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
        hosts, slash, chroot = connect.partition("/")
        self.connect = connect
        self._chroot = slash + chroot if chroot else ""
        self._hosts = hosts
        self._node_id = node_id
        self._session_timeout = session_timeout_ms / 1000
        self._connection_timeout = (connection_timeout_ms or session_timeout_ms) / 1000
        self._client = KazooClient(hosts=connect, timeout=self._session_timeout)
        self._registered: BrokerInfo | None = None
        self._cluster_id = ""
        self._controller_epoch = 0
        self._lost = False
        self._closing = False
        self._view = MetadataView(self._client, self._on_controller_gone)

    @property
    def cluster_id(self) -> str:
        return self._cluster_id

    # lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        await asyncio.to_thread(self._start)

    def _start(self) -> None:
        if self._chroot:  # Kafka creates a missing chroot too
            root = KazooClient(hosts=self._hosts, timeout=self._session_timeout)
            self._connect(root)
            try:
                root.ensure_path(self._chroot)
            finally:
                root.stop()
                root.close()
        self._connect(self._client)
        self._client.add_listener(self._on_state)
        for path in znodes.PERSISTENT_PARENTS:
            self._client.ensure_path(path)
        with contextlib.suppress(NodeExistsError):  # the first broker ever names the cluster
            cluster_id = znodes.new_cluster_id()
            self._client.create(znodes.CLUSTER_ID, znodes.encode_cluster_id(cluster_id))
        self._cluster_id = znodes.decode_cluster_id(self._client.get(znodes.CLUSTER_ID)[0])
        self._view.watch()

    def _connect(self, client: KazooClient) -> None:
        try:
            client.start(timeout=self._connection_timeout)
        except KazooTimeoutError:
            client.stop()
            client.close()
            raise RuntimeError(
                f"cannot reach ZooKeeper at {self.connect} within "
                f"{self._connection_timeout:g} s (zookeeper.connection.timeout.ms)"
            ) from None

    async def close(self) -> None:
        """Close the session: ZooKeeper drops this broker's registration (and the controller
        znode, if it was the controller) at once. With ZooKeeper unreachable it gives up after
        the connection timeout (the session then expires on its own)."""
        try:
            await asyncio.wait_for(asyncio.to_thread(self._close), self._connection_timeout)
        except TimeoutError:
            log.warning("ZooKeeper session not closed: %s unreachable", self.connect)

    def _close(self) -> None:
        self._closing = True
        self._client.remove_listener(self._on_state)
        self._client.stop()
        self._client.close()

    def _on_state(self, state: str) -> None:
        """kazoo's connection listener (must not block): redo the ephemeral znodes once a new
        session replaces an expired one."""
        if state == KazooState.LOST:
            self._lost = True
            log.warning("ZooKeeper session expired; reconnecting with a new session")
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            self._client.handler.spawn(self._reregister)

    def _reregister(self) -> None:
        if self._closing:
            return
        try:
            if self._registered is not None:
                self._register(self._registered)
            self._elect()
            log.info("registered again in the new ZooKeeper session")
        except (KazooException, RuntimeError):  # RuntimeError: another broker took the id
            log.exception("re-registration after session expiry failed: not registered now")

    async def _call(self, fn: Callable[[], T], bounded: bool = True) -> T:
        """Run blocking kazoo work in a thread. ZooKeeper unreachable (kazoo reconnecting, or
        no answer within the session timeout when ``bounded``) is REQUEST_TIMED_OUT; work that
        timed out may still be applied once the connection is back, as in Kafka."""
        if not self._client.connected:
            raise RequestTimedOutError(f"ZooKeeper at {self.connect} is unreachable (reconnecting)")
        try:
            work = asyncio.to_thread(fn)
            return await (asyncio.wait_for(work, self._session_timeout) if bounded else work)
        except KafkaError:
            raise
        except TimeoutError:
            raise RequestTimedOutError(
                f"ZooKeeper at {self.connect} did not answer in {self._session_timeout:g} s"
            ) from None
        except KazooException as e:
            raise RequestTimedOutError(
                f"ZooKeeper at {self.connect}: {type(e).__name__} {e}"
            ) from e

    def _on_controller_gone(self) -> None:
        """The view saw ``/controller`` go (kazoo's callback thread): stand for election."""
        if self._registered is not None and not self._closing:
            self._client.handler.spawn(self._reelect)

    def _reelect(self) -> None:
        try:
            self._elect()
        except KazooException as e:  # the session is going: the next one elects
            log.info("controller election failed: %s", e)

    # topics ---------------------------------------------------------------------------------
    def list_topics(self) -> list[str]:
        return self._view.list_topics()

    def get_topic(self, name: str) -> TopicMetadata | None:
        return self._view.get_topic(name)

    async def create_topic(
        self, name: str, partitions: int, configs: dict[str, str], replicas: list[list[int]]
    ) -> TopicMetadata:
        topic_id = uuid.uuid4().hex
        assignment = {p: self._replicas_for(replicas, p) for p in range(partitions)}

        def create() -> None:
            txn = self._client.transaction()
            txn.create(znodes.topic(name), znodes.encode_topic(topic_id, assignment))
            txn.create(znodes.partitions(name))
            for p, nodes in assignment.items():
                txn.create(znodes.partition(name, p))
                txn.create(znodes.partition_state(name, p), self._initial_state(nodes))
            if self._client.exists(znodes.topic_config(name)) is None:
                txn.create(znodes.topic_config(name), znodes.encode_entity_config(configs))
            else:  # left by a crashed delete of an older topic of that name
                txn.set_data(znodes.topic_config(name), znodes.encode_entity_config(configs))
            _commit(txn, f"topic '{name}'")
            self._view.set_configs(name, dict(configs))
            for p, nodes in assignment.items():
                self._view.set_state(TopicPartition(name, p), PartitionState.initial(nodes))
            self._view.set_assignment(name, (topic_id, assignment))  # arms watches: blocking

        await self._call(create)
        meta = self.get_topic(name)
        assert meta is not None
        return meta

    async def delete_topic(self, name: str) -> None:
        def delete() -> None:
            if self._client.exists(znodes.topic(name)) is None:
                raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
            txn = self._client.transaction()
            for child in _subtree(self._client, znodes.topic(name)):
                txn.delete(child)
            if self._client.exists(znodes.topic_config(name)) is not None:
                txn.delete(znodes.topic_config(name))
            _commit(txn, f"topic '{name}'")

        await self._call(delete)
        self._view.set_assignment(name, None)
        self._view.set_configs(name, None)

    async def add_partitions(self, name: str, total: int, replicas: list[list[int]]) -> None:
        def add() -> None:
            try:
                data, stat = self._client.get(znodes.topic(name))
            except NoNodeError:
                raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist") from None
            topic_id, assignment = znodes.decode_topic(data)
            if total <= len(assignment):
                raise InvalidPartitionsError(
                    f"topic has {len(assignment)} partitions, cannot change to {total}"
                )
            first = len(assignment)
            added = {p: self._replicas_for(replicas, p - first) for p in range(first, total)}
            assignment.update(added)
            txn = self._client.transaction()
            txn.set_data(
                znodes.topic(name), znodes.encode_topic(topic_id, assignment), stat.version
            )
            for p, nodes in added.items():
                txn.create(znodes.partition(name, p))
                txn.create(znodes.partition_state(name, p), self._initial_state(nodes))
            _commit(txn, f"topic '{name}'")
            for p, nodes in added.items():
                self._view.set_state(TopicPartition(name, p), PartitionState.initial(nodes))
            self._view.set_assignment(name, (topic_id, assignment))  # arms watches: blocking

        await self._call(add)

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        def write() -> None:
            if self._client.exists(znodes.topic(name)) is None:
                raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
            self._set_or_create(znodes.topic_config(name), znodes.encode_entity_config(configs))

        await self._call(write)
        self._view.set_configs(name, dict(configs))

    # brokers --------------------------------------------------------------------------------
    async def register_broker(self, info: BrokerInfo) -> None:
        """Create the ephemeral ``/brokers/ids/<id>`` and take part in the controller election.
        Raises RuntimeError if a live broker of another session holds the id past the session
        timeout."""
        await self._call(lambda: self._register(info), bounded=False)  # bounded by itself
        self._registered = info
        await self._call(self._elect)

    def _register(self, info: BrokerInfo) -> None:
        path = znodes.broker(info.node_id)
        deadline = time.monotonic() + self._session_timeout + 2
        while True:
            try:
                self._client.create(path, znodes.encode_broker(info), ephemeral=True)
                break
            except NodeExistsError:
                stat = self._client.exists(path)
                if stat is not None and stat.ephemeralOwner == self._client.client_id[0]:
                    self._client.set(path, znodes.encode_broker(info))
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"broker.id {info.node_id} is registered in ZooKeeper by another live "
                        f"broker ({path} at {self.connect})"
                    ) from None
                log.info("%s is held by an older session; waiting for it to expire", path)
                time.sleep(0.5)
        self._view.set_broker(info)

    def _elect(self) -> None:
        """Become the controller if there is none (``/controller`` is ephemeral)."""
        try:
            self._client.create(
                znodes.CONTROLLER, znodes.encode_controller(self._node_id), ephemeral=True
            )
        except NodeExistsError:
            data, _ = self._client.get(znodes.CONTROLLER)
            self._view.set_controller(znodes.decode_controller(data))
            return
        self._controller_epoch = self._bump_controller_epoch()
        self._view.set_controller(self._node_id)
        log.info("broker %d is the controller (epoch %d)", self._node_id, self._controller_epoch)

    def _bump_controller_epoch(self) -> int:
        def bump(data: bytes | None) -> tuple[bytes, int]:
            epoch = int(data) + 1 if data is not None else 1
            return str(epoch).encode(), epoch

        return self._compare_and_set(znodes.CONTROLLER_EPOCH, bump)

    def _compare_and_set(self, path: str, update: Callable[[bytes | None], tuple[bytes, T]]) -> T:
        """Replace ``path``'s data (None: the znode is missing) with ``update``'s, conditional
        on the version read; a concurrent writer makes it read again. Returns ``update``'s
        second value for the data that was written."""
        while True:
            try:
                data, stat = self._client.get(path)
            except NoNodeError:
                new, result = update(None)
                try:
                    self._client.create(path, new)
                    return result
                except NodeExistsError:
                    continue
            new, result = update(data)
            try:
                self._client.set(path, new, stat.version)
                return result
            except BadVersionError:
                continue

    def brokers(self) -> list[BrokerInfo]:
        return self._view.brokers()

    def controller_id(self) -> int:
        return self._view.controller_id()

    # partition state ------------------------------------------------------------------------
    def partition_state(self, tp: TopicPartition) -> PartitionState | None:
        return self._view.partition_state(tp)

    async def set_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        def write() -> None:
            if self._client.exists(znodes.topic(tp.topic)) is None:
                raise UnknownTopicOrPartitionError(f"topic '{tp.topic}' does not exist")
            data = znodes.encode_partition_state(state, self._controller_epoch)
            self._set_or_create(znodes.partition_state(tp.topic, tp.partition), data)

        await self._call(write)
        self._view.set_state(tp, state)

    # producer ids ---------------------------------------------------------------------------
    async def allocate_producer_id_block(self, size: int) -> tuple[int, int]:
        """Claim ``[start, start + size)`` after the last block any broker claimed (a
        conditional set: a concurrent claim makes this one retry)."""

        def claim(data: bytes | None) -> tuple[bytes, tuple[int, int]]:
            start = znodes.decode_producer_id_block_end(data)
            block = znodes.encode_producer_id_block(self._node_id, start, start + size)
            return block, (start, start + size)

        return await self._call(lambda: self._compare_and_set(znodes.PRODUCER_ID_BLOCK, claim))

    # SCRAM credentials ----------------------------------------------------------------------
    def scram_users(self) -> list[str]:
        return [u for u in self._view.users() if self.scram_credentials(u)]

    def scram_credentials(self, user: str) -> dict[str, str]:
        return scram_entries(self._view.user_config(user))

    async def alter_scram_credentials(self, changes: dict[str, dict[str, str | None]]) -> None:
        """One multi-op over the users' znodes (``/config/users/<user>``), each conditional on
        the version read; a concurrent change makes it read again and retry. A config left empty
        deletes its znode; other keys of a config (client quotas) are kept."""

        def write() -> dict[str, dict[str, str]]:
            for _ in range(_ALTER_ATTEMPTS):
                txn = self._client.transaction()
                written: dict[str, dict[str, str]] = {}
                for user, mechanisms in changes.items():
                    written[user] = self._stage_user_config(txn, user, mechanisms)
                if not txn.operations:  # nothing to change (e.g. deleting what is not there)
                    return written
                failure = _first_failure(txn.commit())
                if failure is None:
                    return written
                if not isinstance(failure, _CONCURRENT):
                    raise failure
                log.info("user configs changed concurrently; trying again")
            raise RequestTimedOutError("user configs keep changing concurrently; try again")

        for user, config in (await self._call(write)).items():
            self._view.set_user_config(user, config)

    def _stage_user_config(
        self, txn: Any, user: str, mechanisms: dict[str, str | None]
    ) -> dict[str, str]:
        """Add to ``txn`` the change of ``user``'s znode (conditional on the version read now);
        returns the config it writes."""
        path = znodes.user_config(user)
        try:
            data, stat = self._client.get(path)
            config, version = znodes.decode_entity_config(data), stat.version
        except NoNodeError:
            config, version = {}, -1
        apply_scram_changes(config, mechanisms)
        if version >= 0 and config:
            txn.set_data(path, znodes.encode_entity_config(config), version)
        elif version >= 0:
            txn.delete(path, version)
        elif config:
            txn.create(path, znodes.encode_entity_config(config))
        return config

    # dynamic broker configs -----------------------------------------------------------------
    def broker_configs(self, entity: str) -> dict[str, str]:
        return self._view.broker_configs(entity)

    async def set_broker_configs(self, entity: str, configs: dict[str, str]) -> None:
        path = znodes.broker_config(entity)

        def write() -> None:
            if configs:
                self._set_or_create(path, znodes.encode_entity_config(configs))
            else:
                with contextlib.suppress(NoNodeError):
                    self._client.delete(path)

        await self._call(write)
        self._view.set_broker_configs(entity, dict(configs))

    # helpers --------------------------------------------------------------------------------
    def _replicas_for(self, replicas: list[list[int]], index: int) -> list[int]:
        if index < len(replicas) and replicas[index]:
            return list(replicas[index])
        live = [b.node_id for b in self._view.brokers()]
        return [min(live, default=self._node_id)]

    def _initial_state(self, nodes: list[int]) -> bytes:
        return znodes.encode_partition_state(PartitionState.initial(nodes), self._controller_epoch)

    def _set_or_create(self, path: str, data: bytes) -> None:
        try:
            self._client.set(path, data)
        except NoNodeError:
            self._client.create(path, data, makepath=True)


def _subtree(client: KazooClient, path: str) -> list[str]:
    """``path`` and every znode below it, children before their parents."""
    out: list[str] = []
    for child in client.get_children(path):
        out.extend(_subtree(client, f"{path}/{child}"))
    out.append(path)
    return out


def _first_failure(results: list[Any]) -> Exception | None:
    """The operation that failed a committed multi-op (the others answer RolledBackError);
    None when it was applied."""
    failures = [r for r in results if isinstance(r, Exception)]
    if not failures:
        return None
    return next((r for r in failures if not isinstance(r, RolledBackError)), failures[0])


def _commit(txn: Any, what: str) -> None:
    """Commit a multi-op; NodeExists on its first op is TOPIC_ALREADY_EXISTS, any other failure
    is raised as it is (nothing of the transaction was applied)."""
    results = txn.commit()
    first = _first_failure(results)
    if first is None:
        return
    if isinstance(first, NodeExistsError) and results[0] is first:
        raise TopicAlreadyExistsError(f"{what} already exists")
    if isinstance(first, BadVersionError | NoNodeError):
        raise RequestTimedOutError(f"{what} changed concurrently; try again") from first
    raise first
