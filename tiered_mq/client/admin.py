"""``Admin``: topics, configs, consumer groups and SCRAM users, as typed values.

One class over confluent-kafka's ``AdminClient``, built from a module per family of operations:
``admin_base`` (the handle, waiting for results, Metadata and ListOffsets: errors and timeouts
are described there), ``admin_configs`` (topic and broker configs), ``admin_groups`` (consumer
groups), and here topics and SCRAM users.

SCRAM users (``set_scram_credential``, ``delete_scram_credential``, ``scram_users``) go through
AlterUserScramCredentials / DescribeUserScramCredentials: librdkafka salts and hashes the
password on the client, so the broker never sees it. ``scram_users`` first checks the caller's
authorized operations on the cluster (DescribeCluster, KIP-430): without DESCRIBE, Kafka refuses
"describe all users" with a top-level error, on which librdkafka 2.16 corrupts its heap and
aborts the process, so that request is never sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tiered_mq.client.admin_base import UNSUPPORTED, ck_admin, enum_name
from tiered_mq.client.admin_configs import ConfigAdmin, ConfigSynonym, ConfigValue
from tiered_mq.client.admin_groups import (
    GroupAdmin,
    GroupDescription,
    GroupListing,
    MemberDescription,
    PartitionLag,
)
from tiered_mq.client.errors import ClientError
from tiered_mq.errors import ClusterAuthorizationFailedError
from tiered_mq.topic_partition import TopicPartition

__all__ = [
    "INTERNAL_TOPICS",
    "Admin",
    "ConfigSynonym",
    "ConfigValue",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "PartitionDescription",
    "PartitionLag",
    "ScramCredential",
    "TopicDescription",
]


INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
"""The topics Kafka's brokers mark internal (``Topic.isInternal``; the broker's own list is
``tiered_mq.broker.topic_names``, which a client does not import)."""


@dataclass(frozen=True)
class PartitionDescription:
    """One partition: ``leader`` -1 when it has none (offline: its log failed to open on the
    broker that should lead it); the offsets of such a partition are -1 (unknown)."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    earliest_offset: int
    latest_offset: int


@dataclass(frozen=True)
class TopicDescription:
    name: str
    partitions: tuple[PartitionDescription, ...]
    configs: Mapping[str, ConfigValue] = field(default_factory=dict)


@dataclass(frozen=True, order=True)
class ScramCredential:
    """One SCRAM credential of a user: ``SCRAM-SHA-256`` or ``SCRAM-SHA-512``."""

    user: str
    mechanism: str
    iterations: int


class Admin(ConfigAdmin, GroupAdmin):
    """Topics, configs, consumer groups and SCRAM users of one cluster."""

    # -- topics ------------------------------------------------------------------------
    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        config: Mapping[str, str] | None = None,
    ) -> None:
        new = ck_admin.NewTopic(name, partitions, replication_factor, config=dict(config or {}))
        futures = self._admin.create_topics([new], request_timeout=self._timeout)
        self._result(futures[name], f"create topic {name}")

    def create_partitions(self, name: str, total: int) -> None:
        """Grows topic ``name`` to ``total`` partitions (CreatePartitions); Kafka refuses a
        count that is not larger than the current one (INVALID_PARTITIONS)."""
        new = ck_admin.NewPartitions(name, total)
        futures = self._admin.create_partitions([new], request_timeout=self._timeout)
        self._result(futures[name], f"create partitions of {name}")

    def delete_topic(self, name: str) -> None:
        futures = self._admin.delete_topics([name], request_timeout=self._timeout)
        self._result(futures[name], f"delete topic {name}")

    def list_topics(self, include_internal: bool = False) -> list[str]:
        """Topic names, sorted; the internal topics (``INTERNAL_TOPICS``) only with
        ``include_internal`` (Kafka's ``ListTopicsOptions.listInternal``). Any other name,
        ``__`` or not, is a user topic."""
        md = self._metadata("list topics")
        names = sorted(md.topics)
        return names if include_internal else [n for n in names if n not in INTERNAL_TOPICS]

    def describe_topic(self, name: str, with_configs: bool = True) -> TopicDescription:
        tmd = self._topic_metadata(name)
        tps = [TopicPartition(name, p) for p in sorted(tmd.partitions)]
        led = [tp for tp in tps if tmd.partitions[tp.partition].leader >= 0]  # no one to ask
        earliest = self.list_offsets(led, "earliest")
        latest = self.list_offsets(led, "latest")
        parts = tuple(
            PartitionDescription(
                partition=tp.partition,
                leader=tmd.partitions[tp.partition].leader,
                replicas=tuple(tmd.partitions[tp.partition].replicas),
                isr=tuple(tmd.partitions[tp.partition].isrs),
                earliest_offset=earliest.get(tp, -1),
                latest_offset=latest.get(tp, -1),
            )
            for tp in tps
        )
        configs = self.describe_topic_configs(name) if with_configs else {}
        return TopicDescription(name, parts, configs)

    # -- SCRAM users -------------------------------------------------------------------
    def set_scram_credential(
        self, user: str, password: str, mechanism: str = "SCRAM-SHA-256", iterations: int = 8192
    ) -> None:
        """Create or replace ``user``'s credential for ``mechanism``."""
        info = ck_admin.ScramCredentialInfo(_scram_mechanism(mechanism), iterations)
        upsert = ck_admin.UserScramCredentialUpsertion(user, info, password.encode())
        self._alter_scram(upsert, user, f"set {mechanism} credential of {user}")

    def delete_scram_credential(self, user: str, mechanism: str = "SCRAM-SHA-256") -> None:
        deletion = ck_admin.UserScramCredentialDeletion(user, _scram_mechanism(mechanism))
        self._alter_scram(deletion, user, f"delete {mechanism} credential of {user}")

    def _alter_scram(self, alteration: Any, user: str, what: str) -> None:
        futures = self._admin.alter_user_scram_credentials(
            [alteration], request_timeout=self._timeout
        )
        self._result(futures[user], what)

    def scram_users(self) -> list[ScramCredential]:
        """Every user's SCRAM credentials, by user then mechanism.

        Needs DESCRIBE on the cluster: without it this raises CLUSTER_AUTHORIZATION_FAILED
        before asking for the users (see the module's docstring).
        """
        if not self._may_describe_cluster():
            refused = ClusterAuthorizationFailedError
            message = "not authorized: listing SCRAM users needs DESCRIBE on the cluster"
            raise ClientError(refused.message, message, refused.errno)
        future = self._admin.describe_user_scram_credentials(request_timeout=self._timeout)
        users = self._result(future, "describe SCRAM users")
        return sorted(
            ScramCredential(user, enum_name(info.mechanism).replace("_", "-"), info.iterations)
            for user, desc in users.items()
            for info in desc.scram_credential_infos
        )

    def _may_describe_cluster(self) -> bool:
        """Whether DescribeCluster lists DESCRIBE (or ALL) among the caller's operations.

        confluent-kafka reports no operations (0, as Kafka answers without DESCRIBE) as None.
        A broker without DescribeCluster (Kafka 2.7) cannot tell: assume yes, as before.
        """
        future = self._admin.describe_cluster(
            include_authorized_operations=True, request_timeout=self._timeout
        )
        try:
            cluster = self._result(future, "describe cluster")
        except ClientError as err:
            if err.name not in UNSUPPORTED:
                raise
            return True
        allowing = {ck_admin.AclOperation.DESCRIBE, ck_admin.AclOperation.ALL}
        return not allowing.isdisjoint(cluster.authorized_operations or ())


def _scram_mechanism(name: str) -> Any:
    try:
        return ck_admin.ScramMechanism[name.upper().replace("-", "_")]
    except KeyError:
        raise ValueError(f"unknown SCRAM mechanism {name!r}") from None
