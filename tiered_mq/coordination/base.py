"""The coordination seam: topics, brokers, partition state, producer id blocks, the SCRAM
credentials of users and dynamic broker configs.

A :class:`Coordinator` is the single source of truth for cluster metadata. Two implementations
share this interface: :mod:`tiered_mq.coordination.embedded` (one process, a JSON file in the
data dir; ``tiered-mq dev``) and :mod:`tiered_mq.coordination.zookeeper` (kazoo; broker config
``zookeeper.connect``).

Reads are synchronous and served from an in-memory view (the ZooKeeper implementation keeps it
fresh with watches); writes are coroutines that return once the change is durable.

Errors: ``create_topic`` raises TopicAlreadyExistsError; every write naming a missing topic
raises UnknownTopicOrPartitionError; ``add_partitions`` below the current count raises
InvalidPartitionsError.

Batches: ``create_topics`` and ``delete_topics`` carry every topic of one CreateTopics or
DeleteTopics request in one durable write (embedded: one rewrite of ``cluster.json``;
ZooKeeper: one multi-op per topic, all sent at once). Each topic succeeds or fails on its own
(its error is its result), and a crash leaves each topic of the batch either whole or absent,
never half made or half deleted. A failure of the write itself raises (embedded: nothing of
the batch is visible, in memory or on disk).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from tiered_mq.errors import KafkaError
from tiered_mq.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic as the cluster knows it: ``configs`` holds only the per-topic overrides."""

    name: str
    topic_id: str  # 32 hex digits (a UUID), stable for the topic's lifetime
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)

    def has_partition(self, partition: int) -> bool:
        return 0 <= partition < self.partitions


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A registered broker: ``host``/``port`` are the address its clients are told of;
    ``endpoints`` every advertised listener as ``(listener name, security protocol, host,
    port)``, as Kafka registers them (empty: one PLAINTEXT listener at ``host``/``port``)."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    endpoints: tuple[tuple[str, str, str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionState:
    """Leadership of one partition: who leads, in which leader epoch, and the in-sync replicas."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]

    @classmethod
    def initial(cls, replicas: list[int]) -> PartitionState:
        """A new partition's state: the first replica leads, in epoch 0, every replica in sync."""
        return cls(replicas[0], 0, tuple(replicas), tuple(replicas))


@dataclass(frozen=True, slots=True)
class NewTopic:
    """One topic of a ``create_topics`` batch: ``replicas`` holds the replica list of partition
    0, 1, ... (a missing or empty one: the live broker of lowest id)."""

    name: str
    partitions: int
    configs: dict[str, str]
    replicas: list[list[int]]


class Coordinator(Protocol):
    """Cluster metadata store; see the module docstring for the read/write contract."""

    @property
    def cluster_id(self) -> str:
        """Fixed when the cluster first starts (22 characters, Kafka's form)."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    # topics
    def list_topics(self) -> list[str]: ...

    def get_topic(self, name: str) -> TopicMetadata | None: ...

    def unreadable_topics(self) -> frozenset[str]:
        """Topics the metadata lists whose record cannot be read (ZooKeeper data not in Kafka's
        form): unknown to ``get_topic``, yet not gone, so their partition directories are no
        strays to delete."""
        ...

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (from any thread; it must not block) after topics, their configs,
        partition states, dynamic broker configs or deletion requests may have changed,
        whoever changed them (another tool writing ZooKeeper, too). The embedded metadata
        changes only through this broker: it never calls it."""
        ...

    def topics_to_delete(self) -> list[str]:
        """Topics another tool asked to delete (ZooKeeper's ``/admin/delete_topics``, Kafka's
        way); ``delete_topic`` removes the request with the topic."""
        ...

    async def create_topic(
        self, name: str, partitions: int, configs: dict[str, str], replicas: list[list[int]]
    ) -> TopicMetadata: ...

    async def delete_topic(self, name: str) -> None: ...

    async def create_topics(self, topics: list[NewTopic]) -> dict[str, TopicMetadata | KafkaError]:
        """Create every topic of ``topics`` (distinct names) in one durable write; a topic
        that exists already gets TopicAlreadyExistsError as its result, the others are
        created. Raises (nothing created, embedded) when the write itself fails."""
        ...

    async def delete_topics(self, names: list[str]) -> dict[str, KafkaError | None]:
        """Delete every topic of ``names`` (distinct) in one durable write; a missing one gets
        UnknownTopicOrPartitionError as its result, the others None (deleted). Raises
        (nothing deleted, embedded) when the write itself fails."""
        ...

    async def add_partitions(self, name: str, total: int, replicas: list[list[int]]) -> None: ...

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None: ...

    # brokers
    async def register_broker(self, info: BrokerInfo) -> None: ...

    def brokers(self) -> list[BrokerInfo]: ...

    def controller_id(self) -> int: ...

    # partition state
    def partition_state(self, tp: TopicPartition) -> PartitionState | None: ...

    async def set_partition_state(self, tp: TopicPartition, state: PartitionState) -> None: ...

    # producer ids
    async def allocate_producer_id_block(self, size: int) -> tuple[int, int]:
        """Reserve ``[start, end)`` durably: no later call, in any process, returns an id in it."""
        ...

    # SCRAM credentials of users (AlterUserScramCredentials; a user's config in Kafka's terms)
    def scram_users(self) -> list[str]:
        """The users with at least one SCRAM credential, sorted."""
        ...

    def scram_credentials(self, user: str) -> dict[str, str]:
        """Mechanism name (``SCRAM-SHA-256``) -> Kafka's credential string
        (broker/scram_credentials.py); empty for a user without credentials."""
        ...

    async def alter_scram_credentials(self, changes: dict[str, dict[str, str | None]]) -> None:
        """Apply ``user -> mechanism -> credential string`` (None deletes that mechanism; a
        missing one is no error) to every user at once, durably: all or nothing."""
        ...

    # dynamic broker configs (Kafka's /config/brokers/<entity>)
    def broker_configs(self, entity: str) -> dict[str, str]:
        """The dynamic configs of ``entity`` (``<default>``: cluster-wide; else a broker id),
        by broker config name; empty when none are set."""
        ...

    async def set_broker_configs(self, entity: str, configs: dict[str, str]) -> None:
        """Replace the dynamic configs of ``entity`` durably (empty: remove them all)."""
        ...


def scram_entries(config: Mapping[str, str]) -> dict[str, str]:
    """The SCRAM credentials in a user's config (Kafka keeps other keys there: client quotas)."""
    return {k: v for k, v in config.items() if k.startswith("SCRAM-")}


def apply_scram_changes(config: dict[str, str], mechanisms: Mapping[str, str | None]) -> None:
    """Apply one user's ``mechanism -> credential string`` changes to its config in place
    (None deletes the mechanism; deleting a missing one is no error)."""
    for mechanism, credential in mechanisms.items():
        if credential is None:
            config.pop(mechanism, None)
        else:
            config[mechanism] = credential
