"""Embedded coordinator: cluster metadata of a single-node cluster in one JSON file.

File ``<data_dir>/cluster.json``::

    {"version": 1,
     "cluster_id": "...",                      # 22 chars, fixed at first start
     "next_producer_id": 0,                    # first producer id not yet reserved
     "brokers": {"0": {"host": ..., "port": ..., "rack": null}},
     "topics": {"name": {"topic_id": hex, "partitions": n, "configs": {k: v}}},
     "partitions": {"topic-0": {"leader": 0, "leader_epoch": 0, "isr": [0], "replicas": [0]}},
     "users": {"alice": {"SCRAM-SHA-256": "salt=..,stored_key=..,server_key=..,iterations=4096"}},
     "broker_configs": {"<default>": {"log.retention.ms": "86400000"}, "0": {...}}}

``users`` holds each user's config as Kafka's ``/config/users/<user>`` znode does: mechanism
name -> credential string (broker/scram_credentials.py), only salts and derived keys; a user
whose last credential is deleted is dropped. ``broker_configs`` holds the dynamic broker configs
as Kafka's ``/config/brokers/<entity>`` znodes do (``<default>``: cluster-wide; else a broker
id); an entity left without configs is dropped. A file written before ``users`` or
``broker_configs`` existed reads as having none.

Every write rewrites the whole file atomically: write ``cluster.json.tmp``, fsync it, rename over
``cluster.json``, fsync the directory (a CreateTopics or DeleteTopics request: one write for all
its topics, ``create_topics`` / ``delete_topics``). A crash leaves either the old or the new
file, never a mix; a stray ``.tmp`` is ignored on open. A file that is not a JSON object of
this version (damaged by hand or by the file system) stops the start with a ValueError naming
it: the cluster's metadata is never guessed. Writes are serialized by an asyncio
lock; the JSON encoding (one entry a line, json_sections.py) and the fsyncs run in a worker
thread, so that neither blocks the event loop.

Copy on write: a change works on a copy of the sections (the top-level dicts: ``topics``,
``partitions``, ...) and becomes the in-memory view only once written. The entries within a
section (a topic, a user's config, ...) are shared between the old and the new view, so a change
replaces an entry, never mutates one in place; and a view, once current, is never changed,
which lets the worker thread encode it while requests read the current one, and lets the
encoder reuse the text of the entries that did not change. With thousands of partitions a write
costs a few milliseconds of CPU, where a deep copy and an indented (pure Python) encoding of the
whole state on the event loop took tenths of a second, stalling every client meanwhile.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tiered_mq.coordination.base import (
    BrokerInfo,
    NewTopic,
    PartitionState,
    TopicMetadata,
    apply_scram_changes,
    scram_entries,
)
from tiered_mq.coordination.json_sections import SectionEncoder
from tiered_mq.durable_file import replace_durably
from tiered_mq.errors import (
    InvalidPartitionsError,
    KafkaError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.topic_partition import TopicPartition

FILE_NAME = "cluster.json"
VERSION = 1


def _new_state() -> dict[str, Any]:
    cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    return {
        "version": VERSION,
        "cluster_id": cid,
        "next_producer_id": 0,
        "brokers": {},
        "topics": {},
        "partitions": {},
        "users": {},
        "broker_configs": {},
    }


class EmbeddedCoordinator:
    """The :class:`~tiered_mq.coordination.base.Coordinator` of ``tiered-mq dev``."""

    def __init__(self, data_dir: Path, node_id: int = 0) -> None:
        self._path = Path(data_dir) / FILE_NAME
        self._node_id = node_id
        self._lock = asyncio.Lock()
        self._encoder = SectionEncoder()
        self._state = self._load()

    def _load(self) -> dict[str, Any]:
        try:
            state: dict[str, Any] = json.loads(self._path.read_bytes())
        except FileNotFoundError:
            return _new_state()
        except ValueError as exc:  # (JSONDecodeError, UnicodeDecodeError)
            raise ValueError(f"{self._path}: not a JSON document: {exc}") from None
        if not isinstance(state, dict):
            raise ValueError(f"{self._path}: not a JSON object")
        if state.get("version") != VERSION:
            raise ValueError(f"{self._path}: unsupported version {state.get('version')}")
        state.setdefault("users", {})
        state.setdefault("broker_configs", {})
        return state

    @property
    def cluster_id(self) -> str:
        return str(self._state["cluster_id"])

    async def start(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        async with self._lock:
            await self._persist(self._state)

    async def close(self) -> None:
        async with self._lock:
            pass

    async def _persist(self, state: dict[str, Any]) -> None:
        """Write ``state`` and make it the current view (the caller holds the lock)."""
        await asyncio.to_thread(self._write, state)
        self._state = state

    def _write(self, state: dict[str, Any]) -> None:
        """Encode ``state`` and replace the file durably (blocking: run in a worker thread)."""
        replace_durably(self._path, self._encoder.encode(state).encode())

    async def _update(self, change: Any) -> Any:
        """Apply ``change(sections_copy)`` (see :func:`_sections_copy`) and persist; the
        in-memory view changes only on success. A change returning False changed nothing:
        no write."""
        async with self._lock:
            state = _sections_copy(self._state)
            result = change(state)
            if result is not False:
                await self._persist(state)
            return result

    # topics ---------------------------------------------------------------------------------
    def list_topics(self) -> list[str]:
        return sorted(self._state["topics"])

    def unreadable_topics(self) -> frozenset[str]:
        return frozenset()  # cluster.json is read whole or the start fails

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Only this broker changes the embedded metadata: nothing to tell."""

    def topics_to_delete(self) -> list[str]:
        return []

    def get_topic(self, name: str) -> TopicMetadata | None:
        t = self._state["topics"].get(name)
        if t is None:
            return None
        return TopicMetadata(name, t["topic_id"], t["partitions"], dict(t["configs"]))

    async def create_topic(
        self, name: str, partitions: int, configs: dict[str, str], replicas: list[list[int]]
    ) -> TopicMetadata:
        result = (await self.create_topics([NewTopic(name, partitions, configs, replicas)]))[name]
        if isinstance(result, KafkaError):
            raise result
        return result

    async def delete_topic(self, name: str) -> None:
        error = (await self.delete_topics([name]))[name]
        if error is not None:
            raise error

    async def create_topics(self, topics: list[NewTopic]) -> dict[str, TopicMetadata | KafkaError]:
        """One rewrite of the file for every topic of the batch (none when every topic
        exists already); a failed write raises and leaves the batch invisible."""
        errors: dict[str, KafkaError] = {}

        def change(state: dict[str, Any]) -> bool:
            for topic in topics:
                if topic.name in state["topics"]:
                    errors[topic.name] = TopicAlreadyExistsError(
                        f"topic '{topic.name}' already exists"
                    )
                    continue
                state["topics"][topic.name] = {
                    "topic_id": uuid.uuid4().hex,
                    "partitions": topic.partitions,
                    "configs": dict(topic.configs),
                }
                for p in range(topic.partitions):
                    nodes = topic.replicas[p] if p < len(topic.replicas) else []
                    _set_partition(state, topic.name, p, nodes)
            return len(errors) < len(topics)

        await self._update(change)
        results: dict[str, TopicMetadata | KafkaError] = {}
        for topic in topics:
            meta = self.get_topic(topic.name)
            if topic.name in errors or meta is None:
                results[topic.name] = errors[topic.name]
            else:
                results[topic.name] = meta
        return results

    async def delete_topics(self, names: list[str]) -> dict[str, KafkaError | None]:
        """One rewrite of the file for every topic of the batch (none when none exists); a
        failed write raises and leaves every topic as it was."""
        results: dict[str, KafkaError | None] = {}

        def change(state: dict[str, Any]) -> bool:
            for name in names:
                t = state["topics"].pop(name, None)
                if t is None:
                    results[name] = UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
                    continue
                results[name] = None
                for p in range(t["partitions"]):
                    state["partitions"].pop(f"{name}-{p}", None)
            return any(error is None for error in results.values())

        await self._update(change)
        return results

    async def add_partitions(self, name: str, total: int, replicas: list[list[int]]) -> None:
        def change(state: dict[str, Any]) -> None:
            t = state["topics"].get(name)
            if t is None:
                raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
            if total <= t["partitions"]:
                raise InvalidPartitionsError(
                    f"topic has {t['partitions']} partitions, cannot change to {total}"
                )
            for i, p in enumerate(range(t["partitions"], total)):
                _set_partition(state, name, p, replicas[i] if i < len(replicas) else [])
            state["topics"][name] = {**t, "partitions": total}

        await self._update(change)

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        def change(state: dict[str, Any]) -> None:
            t = state["topics"].get(name)
            if t is None:
                raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
            state["topics"][name] = {**t, "configs": dict(configs)}

        await self._update(change)

    # brokers --------------------------------------------------------------------------------
    async def register_broker(self, info: BrokerInfo) -> None:
        def change(state: dict[str, Any]) -> None:
            state["brokers"][str(info.node_id)] = {
                "host": info.host,
                "port": info.port,
                "rack": info.rack,
            }

        await self._update(change)

    def brokers(self) -> list[BrokerInfo]:
        return [
            BrokerInfo(int(k), v["host"], v["port"], v["rack"])
            for k, v in sorted(self._state["brokers"].items(), key=lambda kv: int(kv[0]))
        ]

    def controller_id(self) -> int:
        return self._node_id

    # partition state ------------------------------------------------------------------------
    def partition_state(self, tp: TopicPartition) -> PartitionState | None:
        s = self._state["partitions"].get(str(tp))
        if s is None:
            return None
        return PartitionState(s["leader"], s["leader_epoch"], tuple(s["isr"]), tuple(s["replicas"]))

    async def set_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        def change(st: dict[str, Any]) -> None:
            if tp.topic not in st["topics"]:
                raise UnknownTopicOrPartitionError(f"topic '{tp.topic}' does not exist")
            st["partitions"][str(tp)] = _state_json(state)

        await self._update(change)

    # producer ids ---------------------------------------------------------------------------
    async def allocate_producer_id_block(self, size: int) -> tuple[int, int]:
        def change(state: dict[str, Any]) -> tuple[int, int]:
            start = int(state["next_producer_id"])
            state["next_producer_id"] = start + size
            return start, start + size

        result: tuple[int, int] = await self._update(change)
        return result

    # SCRAM credentials ----------------------------------------------------------------------
    def scram_users(self) -> list[str]:
        return sorted(u for u, config in self._state["users"].items() if scram_entries(config))

    def scram_credentials(self, user: str) -> dict[str, str]:
        return scram_entries(self._state["users"].get(user, {}))

    async def alter_scram_credentials(self, changes: dict[str, dict[str, str | None]]) -> None:
        def change(state: dict[str, Any]) -> None:
            for user, mechanisms in changes.items():
                config = dict(state["users"].get(user, {}))
                apply_scram_changes(config, mechanisms)
                if config:
                    state["users"][user] = config
                else:
                    state["users"].pop(user, None)

        await self._update(change)

    # dynamic broker configs -----------------------------------------------------------------
    def broker_configs(self, entity: str) -> dict[str, str]:
        return dict(self._state["broker_configs"].get(entity, {}))

    async def set_broker_configs(self, entity: str, configs: dict[str, str]) -> None:
        def change(state: dict[str, Any]) -> None:
            if configs:
                state["broker_configs"][entity] = dict(configs)
            else:
                state["broker_configs"].pop(entity, None)

        await self._update(change)


def _sections_copy(state: dict[str, Any]) -> dict[str, Any]:
    """A new top level whose sections (its dict values) are shallow copies: a change may add,
    replace or remove a section's entries, never mutate one (the entries are shared with
    ``state``, which stays as it was)."""
    return {k: dict(v) if isinstance(v, dict) else v for k, v in state.items()}


def _set_partition(state: dict[str, Any], topic: str, partition: int, replicas: list[int]) -> None:
    nodes = replicas or [int(min(state["brokers"], key=int, default="0"))]
    state["partitions"][f"{topic}-{partition}"] = _state_json(PartitionState.initial(nodes))


def _state_json(state: PartitionState) -> dict[str, Any]:
    return {
        "leader": state.leader,
        "leader_epoch": state.leader_epoch,
        "isr": list(state.isr),
        "replicas": list(state.replicas),
    }
