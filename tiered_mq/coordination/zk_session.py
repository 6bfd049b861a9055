"""ZooKeeperSession: the ZooKeeper coordinator's kazoo session and what lives and dies with it.

Connection: ``zookeeper.connect`` is ``host:port[,host:port...][/chroot]``; a missing chroot is
created (as Kafka does), then the persistent parents of Kafka's layout and, by the first broker
ever, ``/cluster/id``. ``zookeeper.session.timeout.ms`` is kazoo's session timeout and
``zookeeper.connection.timeout.ms`` bounds the first connection and ``close``.

``call`` runs blocking kazoo work in a worker thread. ZooKeeper unreachable (kazoo reconnecting,
or no answer within the session timeout) is REQUEST_TIMED_OUT; work that timed out may still be
applied once the connection is back, as in Kafka.

Ephemeral znodes: the broker registration ``/brokers/ids/<id>`` and ``/controller``. The first
broker to create ``/controller`` is the controller, and bumps ``/controller_epoch``; when the
controller's session ends its znode goes and the others race again (the view reports it). When
this client's session expires (ZooKeeper unreachable for longer than the session timeout) kazoo
reconnects with a new session and the registration and election are done again. A registration
that finds the node owned by an older session of the same id (a broker restarted after a crash)
waits up to the session timeout for ZooKeeper to expire it.

Topics written by other tools (znodes.py): the controller completes them, as Kafka's controller
does, when it becomes the controller, whenever a topic znode's data is read (its watch) and
whenever ``/brokers/ids`` changes: a topic id where there is none, a state znode where one is
missing. A missing state is written as Kafka's PartitionStateMachine
(``initializeLeaderAndIsrForPartitions``) writes it: the ISR holds only the live replicas (those
registered under ``/brokers/ids``), in assignment order, and the first of them leads, in epoch
0; a partition with no live replica gets no state (it stays offline: no broker hosts it) until
one of its replicas registers. Each write is conditional (version, or create), so a concurrent
writer wins and the next watch event looks again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Final, TypeVar

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

from tiered_mq.abandonable import to_thread_abandonable
from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import BrokerInfo, PartitionState
from tiered_mq.coordination.zk_ops import compare_and_set
from tiered_mq.coordination.zk_view import MetadataView
from tiered_mq.errors import KafkaError, RequestTimedOutError
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)
T = TypeVar("T")
# kazoo's connection retry: for ever, from 0.1 s, doubling up to 1 s between attempts
RECONNECT: Final = {"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 1.0}
# how often a start waiting for its first connection looks whether it was cancelled
ABANDON_POLL_S: Final = 0.1


class ZooKeeperSession:
    """One broker's session: ``client`` (kazoo), ``view`` (the watched metadata), the cluster
    id, and the controller epoch this broker bumped when it became the controller."""

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
        self.node_id = node_id
        self.session_timeout = session_timeout_ms / 1000
        self.connection_timeout = (connection_timeout_ms or session_timeout_ms) / 1000
        # reconnect within about a second of ZooKeeper coming back, as Kafka's client does;
        # kazoo's default doubles its wait up to an hour, so an outage of a minute kept the
        # broker out of /brokers/ids (REQUEST_TIMED_OUT on admin changes) for a minute more
        self.client = KazooClient(
            hosts=connect, timeout=self.session_timeout, connection_retry=RECONNECT
        )
        self.view = MetadataView(
            self.client, self._on_controller_gone, self._on_topic_data, self._on_brokers
        )
        self.cluster_id = ""
        self.controller_epoch = 0
        self._registered: BrokerInfo | None = None
        self._lost = False
        self._closing = False

    # lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect (within ``zookeeper.connection.timeout.ms``, else RuntimeError) and read
        the cluster id. Cancelled (a stop during the broker's start), a connection still being
        waited for is given up within :data:`ABANDON_POLL_S`; this returns, cancelled, once
        the worker thread has ended (abandonable.py)."""
        await to_thread_abandonable(self._start)

    def _start(self, abandon: threading.Event) -> None:
        if self._chroot:  # Kafka creates a missing chroot too
            root = KazooClient(hosts=self._hosts, timeout=self.session_timeout)
            self._connect(root, abandon)
            try:
                root.ensure_path(self._chroot)
            finally:
                root.stop()
                root.close()
        self._connect(self.client, abandon)
        self.client.add_listener(self._on_state)
        for path in znodes.PERSISTENT_PARENTS:
            self.client.ensure_path(path)
        with contextlib.suppress(NodeExistsError):  # the first broker ever names the cluster
            cluster_id = znodes.new_cluster_id()
            self.client.create(znodes.CLUSTER_ID, znodes.encode_cluster_id(cluster_id))
        self.cluster_id = znodes.decode_cluster_id(self.client.get(znodes.CLUSTER_ID)[0])
        self.view.watch()

    def _connect(self, client: KazooClient, abandon: threading.Event) -> None:
        """kazoo's ``start(timeout)``, given up as soon as ``abandon`` is set."""
        connected = client.start_async()
        deadline = time.monotonic() + self.connection_timeout
        while not connected.wait(ABANDON_POLL_S):
            if abandon.is_set() or time.monotonic() >= deadline:
                break
        if client.connected:
            return
        client.stop()
        client.close()
        if abandon.is_set():
            raise RuntimeError(f"connection to ZooKeeper at {self.connect} abandoned")
        raise RuntimeError(
            f"cannot reach ZooKeeper at {self.connect} within "
            f"{self.connection_timeout:g} s (zookeeper.connection.timeout.ms)"
        )

    async def close(self) -> None:
        """Close the session: ZooKeeper drops this broker's registration (and the controller
        znode, if it was the controller) at once. With ZooKeeper unreachable it gives up after
        the connection timeout (the session then expires on its own)."""
        try:
            await asyncio.wait_for(asyncio.to_thread(self._close), self.connection_timeout)
        except TimeoutError:
            log.warning("ZooKeeper session not closed: %s unreachable", self.connect)

    def _close(self) -> None:
        self._closing = True
        self.client.remove_listener(self._on_state)
        self.client.stop()
        self.client.close()

    def _on_state(self, state: str) -> None:
        """kazoo's connection listener (must not block): redo the ephemeral znodes once a new
        session replaces an expired one."""
        if state == KazooState.LOST:
            self._lost = True
            log.warning("ZooKeeper session expired; reconnecting with a new session")
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            self.client.handler.spawn(self._reregister)

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

    async def call(self, fn: Callable[[], T], bounded: bool = True) -> T:
        """Run blocking kazoo work in a thread. ZooKeeper unreachable (kazoo reconnecting, or
        no answer within the session timeout when ``bounded``) is REQUEST_TIMED_OUT; work that
        timed out may still be applied once the connection is back, as in Kafka."""
        if not self.client.connected:
            raise RequestTimedOutError(f"ZooKeeper at {self.connect} is unreachable (reconnecting)")
        try:
            work = asyncio.to_thread(fn)
            return await (asyncio.wait_for(work, self.session_timeout) if bounded else work)
        except KafkaError:
            raise
        except TimeoutError:
            raise RequestTimedOutError(
                f"ZooKeeper at {self.connect} did not answer in {self.session_timeout:g} s"
            ) from None
        except KazooException as e:
            raise RequestTimedOutError(
                f"ZooKeeper at {self.connect}: {type(e).__name__} {e}"
            ) from e

    # registration and controller election ---------------------------------------------------
    async def register_broker(self, info: BrokerInfo) -> None:
        """Create the ephemeral ``/brokers/ids/<id>`` and take part in the controller election.
        Raises RuntimeError if a live broker of another session holds the id past the session
        timeout."""
        await self.call(lambda: self._register(info), bounded=False)  # bounded by itself
        self._registered = info
        await self.call(self._elect)

    def _register(self, info: BrokerInfo) -> None:
        path = znodes.broker(info.node_id)
        deadline = time.monotonic() + self.session_timeout + 2
        while True:
            try:
                self.client.create(path, znodes.encode_broker(info), ephemeral=True)
                break
            except NodeExistsError:
                stat = self.client.exists(path)
                if stat is not None and stat.ephemeralOwner == self.client.client_id[0]:
                    self.client.set(path, znodes.encode_broker(info))
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"broker.id {info.node_id} is registered in ZooKeeper by another live "
                        f"broker ({path} at {self.connect})"
                    ) from None
                log.info("%s is held by an older session; waiting for it to expire", path)
                time.sleep(0.5)
        self.view.set_broker(info)

    def _on_controller_gone(self) -> None:
        """The view saw ``/controller`` go (kazoo's callback thread): stand for election."""
        if self._registered is not None and not self._closing:
            self.client.handler.spawn(self._reelect)

    def _reelect(self) -> None:
        try:
            self._elect()
        except KazooException as e:  # the session is going: the next one elects
            log.info("controller election failed: %s", e)

    def _elect(self) -> None:
        """Become the controller if there is none (``/controller`` is ephemeral)."""
        try:
            self.client.create(
                znodes.CONTROLLER, znodes.encode_controller(self.node_id), ephemeral=True
            )
        except NodeExistsError:
            data, _ = self.client.get(znodes.CONTROLLER)
            self.view.set_controller(znodes.decode_controller(data))
            return
        self.controller_epoch = self._bump_controller_epoch()
        self.view.set_controller(self.node_id)
        log.info("broker %d is the controller (epoch %d)", self.node_id, self.controller_epoch)
        self._complete_topics_logged(None)

    # topics written by other tools (the module docstring) ------------------------------------
    def _completing(self) -> bool:
        """This session is the controller and completes topics."""
        # controller_epoch: this session won the election (not an older session of this id)
        controller = self.view.controller_id() == self.node_id and self.controller_epoch > 0
        return controller and self._registered is not None and not self._closing

    def _on_topic_data(self, name: str) -> None:
        """The view read topic ``name``'s znode (kazoo's callback thread: must not block)."""
        if self._completing():
            self.client.handler.spawn(self._complete_topics_logged, [name])

    def _on_brokers(self) -> None:
        """The view read ``/brokers/ids`` (kazoo's callback thread: must not block): a replica
        that registered may bring a partition that had none live online, as Kafka's
        controller does on broker startup (``triggerOnlinePartitionStateChange``)."""
        if self._completing():
            self.client.handler.spawn(self._complete_topics_logged, None)

    def _complete_topics_logged(self, names: list[str] | None) -> None:
        """Complete ``names`` (None: every topic), logging a session ending meanwhile."""
        try:
            for name in self.client.get_children(znodes.TOPICS) if names is None else names:
                self._complete_topic(name)
        except KazooException as e:  # the session is going: the next controller completes it
            log.info("completing topics %s failed: %s", names or "(all)", e)

    def _complete_topic(self, name: str) -> None:
        """Give topic ``name`` a topic id and its missing partition states (blocking)."""
        path = znodes.topic(name)
        try:
            data, stat = self.client.get(path)
            completed = znodes.completed_topic(data)
            if completed is not None:
                self.client.set(path, completed, stat.version)
                log.info("topic %s had no topic id: gave it one, as Kafka's controller", name)
                data = completed
            _, assignment = znodes.decode_topic(data)
        except (NoNodeError, BadVersionError):  # deleted or changed: its watch fires again
            return
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            log.warning("cannot complete topic %s: its znode is not Kafka's JSON: %r", name, e)
            return
        live: frozenset[int] | None = None  # read once, when a state is missing
        for p, replicas in assignment.items():
            state_path = znodes.partition_state(name, p)
            known = self.view.partition_state(TopicPartition(name, p)) is not None
            if known or not replicas or self.client.exists(state_path) is not None:
                continue
            if live is None:
                live = frozenset(_broker_ids(self.client.get_children(znodes.BROKER_IDS)))
            first = first_state(replicas, live)
            if first is None:
                log.warning(
                    "partition %d of topic %s has no live replica among %s: no leader until "
                    "one of them registers",
                    p,
                    name,
                    replicas,
                )
                continue
            state = znodes.encode_partition_state(first, self.controller_epoch)
            # parents one by one, never makepath: a topic deleted meanwhile is not made again
            nodes = ((znodes.partitions(name), b""), (znodes.partition(name, p), b""))
            try:
                for node, node_data in (*nodes, (state_path, state)):
                    with contextlib.suppress(NodeExistsError):
                        self.client.create(node, node_data)
            except NoNodeError:  # the topic was deleted
                return

    def _bump_controller_epoch(self) -> int:
        def bump(data: bytes | None) -> tuple[bytes, int]:
            epoch = int(data) + 1 if data is not None else 1
            return str(epoch).encode(), epoch

        return compare_and_set(self.client, znodes.CONTROLLER_EPOCH, bump)


def first_state(replicas: list[int], live: frozenset[int]) -> PartitionState | None:
    """A new partition's first state, as Kafka's controller initializes it: the ISR is the live
    ``replicas`` in assignment order, led by the first of them, in leader epoch 0; None when
    none is live (the partition stays offline)."""
    in_sync = tuple(r for r in replicas if r in live)
    if not in_sync:
        return None
    return PartitionState(in_sync[0], 0, in_sync, tuple(replicas))


def _broker_ids(children: list[str]) -> list[int]:
    """The ids under ``/brokers/ids``; a child that is not a number is not a broker."""
    return [int(c) for c in children if c.isdigit()]
