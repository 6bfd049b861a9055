"""The ZooKeeper coordinator's in-memory view of cluster metadata, kept fresh by watches.

What it holds: live brokers (``/brokers/ids``), the controller (``/controller``), each topic's
id and replica assignment (``/brokers/topics/<t>``), its config (``/config/topics/<t>``), each
partition's state (``.../partitions/<p>/state``), each user's config (``/config/users/<u>``,
where the SCRAM credentials are), the dynamic broker configs (``/config/brokers/<entity>``)
and the topic deletion requests (``/admin/delete_topics``).

Change listeners (``add_listener``) are called, in the thread of the change, after any change
of a topic (its assignment, config, partition states, readability), of the dynamic broker
configs or of the deletion requests, whoever wrote it: the broker reconciles what it hosts
with them. ``on_topic_data`` (the session's) is called with each topic znode's name whenever
its data is read, and ``on_brokers`` (the session's) after each read of ``/brokers/ids``: the
controller completes topics written by other tools (znodes.py), and a partition none of whose
replicas was live gets its state once one registers.
kazoo's ``ChildrenWatch`` and ``DataWatch`` re-arm themselves after a reconnect, so the view
catches up after a new session too.

Threads: watch callbacks run in kazoo's callback thread and the coordinator's writes in worker
threads; both go through the ``set_*`` methods, which replace a whole dict under one lock
(copy-on-write). The event loop reads without locking: it always sees some complete dict.
Arming a watch reads its znode (a blocking round trip), so ``set_assignment`` must not be
called on the event loop.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import BrokerInfo, PartitionState, TopicMetadata
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)
K = TypeVar("K")
V = TypeVar("V")
Assignment = tuple[str, dict[int, list[int]]]  # (topic id as 32 hex digits, partition -> replicas)
DataCallback = Callable[[bytes | None, Any], None]


class MetadataView:
    """Cluster metadata as last read from ZooKeeper (see the module docstring)."""

    def __init__(
        self,
        client: KazooClient,
        on_controller_gone: Callable[[], None],
        on_topic_data: Callable[[str], None] = lambda name: None,
        on_brokers: Callable[[], None] = lambda: None,
    ) -> None:
        self._client = client
        self._on_controller_gone = on_controller_gone
        self._on_topic_data = on_topic_data
        self._on_brokers_read = on_brokers
        self._listeners: list[Callable[[], None]] = []
        self._delete_requests: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self._brokers: dict[int, BrokerInfo] = {}
        self._controller = -1
        self._assignments: dict[str, Assignment] = {}
        self._configs: dict[str, dict[str, str]] = {}
        self._states: dict[TopicPartition, PartitionState] = {}
        self._users: dict[str, dict[str, str]] = {}  # user -> its config (SCRAM credentials)
        self._broker_configs: dict[str, dict[str, str]] = {}  # <default> or id -> its config
        self._watched: set[str] = set()  # znodes with a DataWatch (one each, for good)
        self._unreadable: frozenset[str] = frozenset()  # topics whose znode is not Kafka's JSON

    def watch(self) -> None:
        """Arm the top-level watches; each reads its znodes once now (blocking)."""
        ChildrenWatch(self._client, znodes.BROKER_IDS, self._on_brokers)
        ChildrenWatch(self._client, znodes.TOPICS, self._on_topics)
        DataWatch(self._client, znodes.CONTROLLER, self._on_controller)
        ChildrenWatch(self._client, znodes.USER_CONFIGS, self._on_users)
        ChildrenWatch(self._client, znodes.BROKER_CONFIGS, self._on_broker_configs)
        ChildrenWatch(self._client, znodes.DELETE_TOPICS, self._on_delete_requests)

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (any thread; it must not block) after each topic change."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    # reads (any thread) -----------------------------------------------------------------------
    def brokers(self) -> list[BrokerInfo]:
        return [b for _, b in sorted(self._brokers.items())]

    def controller_id(self) -> int:
        return self._controller

    def list_topics(self) -> list[str]:
        return sorted(self._assignments)

    def get_topic(self, name: str) -> TopicMetadata | None:
        assignment = self._assignments.get(name)
        if assignment is None:
            return None
        topic_id, partitions = assignment
        return TopicMetadata(name, topic_id, len(partitions), dict(self._configs.get(name, {})))

    def unreadable_topics(self) -> frozenset[str]:
        return self._unreadable

    def delete_requests(self) -> list[str]:
        """The topics named under ``/admin/delete_topics``."""
        return sorted(self._delete_requests)

    def partition_state(self, tp: TopicPartition) -> PartitionState | None:
        """Leader, epoch and ISR from the state znode; replicas from the topic's assignment."""
        state = self._states.get(tp)
        assignment = self._assignments.get(tp.topic)
        if state is None or assignment is None:
            return None
        return dataclasses.replace(state, replicas=tuple(assignment[1].get(tp.partition, ())))

    def users(self) -> list[str]:
        return sorted(self._users)

    def user_config(self, user: str) -> dict[str, str]:
        return dict(self._users.get(user, {}))

    def broker_configs(self, entity: str) -> dict[str, str]:
        return dict(self._broker_configs.get(entity, {}))

    # writes (kazoo's callback thread, or a worker thread after a ZooKeeper write) --------------
    def set_broker_configs(self, entity: str, config: dict[str, str] | None) -> None:
        """Set (None or empty: drop) the dynamic configs of ``entity``."""
        with self._lock:
            self._broker_configs = _replaced(self._broker_configs, entity, config or None)
        self._changed()

    def set_user_config(self, user: str, config: dict[str, str] | None) -> None:
        """Set (None or empty: drop) a user's config."""
        with self._lock:
            self._users = _replaced(self._users, user, config or None)

    def set_broker(self, info: BrokerInfo) -> None:
        with self._lock:
            self._brokers = _replaced(self._brokers, info.node_id, info)

    def set_controller(self, node_id: int) -> None:
        with self._lock:
            self._controller = node_id

    def set_unreadable(self, name: str) -> None:
        """The topic znode of ``name`` holds data that is not Kafka's: not gone (an assignment
        read before stays in use)."""
        with self._lock:
            self._unreadable = self._unreadable | {name}
        self._changed()

    def set_configs(self, name: str, configs: dict[str, str] | None) -> None:
        with self._lock:
            self._configs = _replaced(self._configs, name, configs)
        self._changed()

    def set_state(self, tp: TopicPartition, state: PartitionState | None) -> None:
        with self._lock:
            self._states = _replaced(self._states, tp, state)
        self._changed()

    def set_assignment(self, name: str, value: Assignment | None) -> None:
        """Set (None: drop) a topic's assignment; watch the state znodes of new partitions."""
        with self._lock:
            self._assignments = _replaced(self._assignments, name, value)
            self._unreadable = self._unreadable - {name}
            new: dict[int, str] = {}
            if value is None:
                self._states = {tp: s for tp, s in self._states.items() if tp.topic != name}
            else:
                paths = {p: znodes.partition_state(name, p) for p in value[1]}
                new = {p: path for p, path in paths.items() if path not in self._watched}
                self._watched.update(new.values())
        for p, path in new.items():
            set_state = functools.partial(self.set_state, TopicPartition(name, p))
            DataWatch(self._client, path, _watcher(path, znodes.decode_partition_state, set_state))
        self._changed()

    # watch callbacks (kazoo's callback thread) ------------------------------------------------
    def _on_brokers(self, children: list[str]) -> None:
        brokers: dict[int, BrokerInfo] = {}
        for child in children:
            path = f"{znodes.BROKER_IDS}/{child}"
            try:
                data, _ = self._client.get(path)
                brokers[int(child)] = znodes.decode_broker(int(child), data)
            except NoNodeError:
                continue
            except (ValueError, KeyError, TypeError) as e:  # not written by a broker
                log.warning("ignoring %s: %r", path, e)
        with self._lock:
            self._brokers = brokers
        self._on_brokers_read()

    def _on_controller(self, data: bytes | None, _stat: Any) -> None:
        self.set_controller(znodes.decode_controller(data))
        if data is None:
            self._on_controller_gone()

    def _on_topics(self, children: list[str]) -> None:
        with self._lock:
            new = [t for t in children if znodes.topic(t) not in self._watched]
            self._watched.update(znodes.topic(t) for t in new)
        for name in new:
            topic, config = znodes.topic(name), znodes.topic_config(name)
            set_assignment = functools.partial(self.set_assignment, name)
            set_configs = functools.partial(self.set_configs, name)
            unreadable = functools.partial(self.set_unreadable, name)
            on_topic = _watcher(topic, znodes.decode_topic, set_assignment, unreadable)
            DataWatch(self._client, topic, self._topic_watch(name, on_topic))
            DataWatch(
                self._client, config, _watcher(config, znodes.decode_entity_config, set_configs)
            )

    def _topic_watch(self, name: str, on_topic: DataCallback) -> DataCallback:
        def watch(data: bytes | None, stat: Any) -> None:
            on_topic(data, stat)
            if data:
                self._on_topic_data(name)

        return watch

    def _on_delete_requests(self, children: list[str]) -> None:
        with self._lock:
            self._delete_requests = tuple(children)
        self._changed()

    def _on_users(self, children: list[str]) -> None:
        paths = {f"{znodes.USER_CONFIGS}/{c}": znodes.desanitize(c) for c in children}
        self._watch_entity_configs(paths, self.set_user_config)

    def _on_broker_configs(self, children: list[str]) -> None:
        paths = {znodes.broker_config(c): c for c in children}
        self._watch_entity_configs(paths, self.set_broker_configs)

    def _watch_entity_configs(
        self, paths: dict[str, str], apply: Callable[[str, dict[str, str] | None], None]
    ) -> None:
        """A DataWatch on each config znode of ``paths`` (znode -> entity) not yet watched."""
        with self._lock:
            new = {path: name for path, name in paths.items() if path not in self._watched}
            self._watched.update(new)
        for path, name in new.items():
            set_config = functools.partial(apply, name)
            DataWatch(self._client, path, _watcher(path, znodes.decode_entity_config, set_config))


def _watcher(
    path: str,
    decode: Callable[[bytes], V],
    apply: Callable[[V | None], None],
    unreadable: Callable[[], None] | None = None,
) -> DataCallback:
    """The DataWatch callback of ``path``: ``apply`` its decoded data (None once the znode is
    gone). Data that is not Kafka's JSON, empty data included, is logged and ignored, and
    ``unreadable`` is called: an emptied topic znode must not read as a deleted topic, whose
    local logs the broker would delete."""

    def watch(data: bytes | None, _stat: Any) -> None:
        try:
            value = None if data is None else decode(data)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            log.warning("ignoring the data of %s: %r", path, e)
            if unreadable is not None:
                unreadable()
            return
        apply(value)

    return watch


def _replaced(d: dict[K, V], key: K, value: V | None) -> dict[K, V]:
    """A copy of ``d`` with ``key`` set to ``value`` (removed when None)."""
    out = dict(d)
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value
    return out
