"""``Admin``: topics, topic configs and consumer groups, as typed values.

Each method is one blocking round of confluent-kafka's ``AdminClient`` futures; every
failure (a broker error code in a result, or a local librdkafka error such as a timeout)
is raised as ``ClientError`` naming the Kafka error; a login the broker refused (wrong SASL
password or mechanism) is raised as librdkafka's ``_AUTHENTICATION`` at once, not as a
timeout or transport failure. Offsets are read with ListOffsets
(earliest = log start offset, latest = log end offset as the client sees it: the high
watermark, or the last stable offset for read_committed readers).

SCRAM users (``set_scram_credential``, ``delete_scram_credential``, ``scram_users``) go through
AlterUserScramCredentials / DescribeUserScramCredentials: librdkafka salts and hashes the
password on the client, so the broker never sees it. ``scram_users`` first checks the caller's
authorized operations on the cluster (DescribeCluster, KIP-430): without DESCRIBE, Kafka refuses
"describe all users" with a top-level error, on which librdkafka 2.16 corrupts its heap and
aborts the process, so that request is never sent.

``alter_topic_config`` uses IncrementalAlterConfigs; a broker that does not support it gets
the classic AlterConfigs with the full set of dynamic configs recomputed from DescribeConfigs
(correct as long as nobody else alters the same topic in between).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import confluent_kafka
from confluent_kafka import admin as _ck_admin

from tiered_mq.client.config import AdminConfig
from tiered_mq.client.errors import ClientError
from tiered_mq.errors import ClusterAuthorizationFailedError
from tiered_mq.topic_partition import TopicPartition

# confluent-kafka's stubs do not re-export the admin types; use them untyped.
ck_admin: Any = _ck_admin

_UNSUPPORTED = {"UNSUPPORTED_VERSION", "_UNSUPPORTED_FEATURE", "INVALID_REQUEST"}


@dataclass(frozen=True)
class PartitionDescription:
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    earliest_offset: int
    latest_offset: int


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: str | None
    source: str
    is_default: bool
    read_only: bool = False
    sensitive: bool = False


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


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    state: str
    is_simple: bool


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class PartitionLag:
    """``lag`` = log end offset - committed offset, as kafka-consumer-groups.sh computes it:
    negative for an offset committed past the log end, None without a committed offset."""

    topic: str
    partition: int
    committed_offset: int | None
    log_end_offset: int
    lag: int | None
    member_id: str | None = None


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol: str
    coordinator: int | None
    members: tuple[MemberDescription, ...]
    offsets: tuple[PartitionLag, ...]


def _timed_out(context: str, timeout: float) -> ClientError:
    return ClientError("_TIMED_OUT", f"{context}: no answer within {timeout}s")


def _enum_name(value: Any) -> str:
    return str(getattr(value, "name", value))


def _config_source(value: Any) -> str:
    """librdkafka reports a config's source as a bare int; name it as Kafka does."""
    try:
        return str(ck_admin.ConfigSource(value).name)
    except ValueError:
        return _enum_name(value)


class Admin:
    def __init__(self, config: AdminConfig | None = None, **overrides: Any) -> None:
        self.config = config if config is not None else AdminConfig(**overrides)
        self._timeout = self.config.request_timeout_s
        self._login_error: Any = None
        conf = self.config.to_librdkafka()
        conf.setdefault("error_cb", self._on_error)
        self._admin = ck_admin.AdminClient(conf)

    def _on_error(self, err: Any) -> None:
        """librdkafka's error callback (served by ``poll``): keeps a refused login."""
        if err.code() == confluent_kafka.KafkaError._AUTHENTICATION:
            self._login_error = err

    def _explain(self, err: ClientError, context: str) -> ClientError:
        """The refused login behind a transport failure or timeout, if librdkafka saw one."""
        if err.name in ("_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN"):
            self._admin.poll(0)
            if self._login_error is not None:
                return ClientError.from_kafka_error(self._login_error, context)
        return err

    def _metadata(self, context: str, **kwargs: Any) -> Any:
        """Metadata within the timeout, asked in rounds of at most 1 s: librdkafka retries a
        refused login until its timeout, and the error callback tells only between rounds."""
        deadline = time.monotonic() + self._timeout
        while True:
            left = deadline - time.monotonic()
            try:
                return self._admin.list_topics(timeout=min(1.0, max(0.1, left)), **kwargs)
            except confluent_kafka.KafkaException as exc:
                err = self._explain(ClientError.wrap(exc, context), context)
                if err.name not in ("_TRANSPORT", "_TIMED_OUT") or time.monotonic() >= deadline:
                    raise err from exc

    def _result(self, future: Future[Any], context: str) -> Any:
        """``future``'s result within the timeout; a refused login ends the wait at once."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                return future.result(min(0.2, max(0.0, deadline - time.monotonic())))
            except confluent_kafka.KafkaException as exc:
                raise self._explain(ClientError.wrap(exc, context), context) from exc
            except TimeoutError as exc:
                if time.monotonic() >= deadline:
                    timed_out = _timed_out(context, self._timeout)
                    raise self._explain(timed_out, context) from exc
                self._admin.poll(0)
                if self._login_error is not None:
                    raise ClientError.from_kafka_error(self._login_error, context) from exc

    def __enter__(self) -> Admin:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """AdminClient has no close; the handle is freed when collected."""

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

    def delete_topic(self, name: str) -> None:
        futures = self._admin.delete_topics([name], request_timeout=self._timeout)
        self._result(futures[name], f"delete topic {name}")

    def list_topics(self, include_internal: bool = False) -> list[str]:
        md = self._metadata("list topics")
        names = sorted(md.topics)
        return names if include_internal else [n for n in names if not n.startswith("__")]

    def _topic_metadata(self, name: str) -> Any:
        md = self._metadata(f"metadata for {name}", topic=name)
        tmd = md.topics.get(name)
        if tmd is None:
            raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", f"topic {name} does not exist", 3)
        if tmd.error is not None:
            raise ClientError.from_kafka_error(tmd.error, f"topic {name}")
        return tmd

    def partitions_for(self, topic: str) -> list[int]:
        """Partition ids of ``topic``; UNKNOWN_TOPIC_OR_PARTITION if it does not exist."""
        return sorted(self._topic_metadata(topic).partitions)

    def list_offsets(
        self, partitions: Sequence[TopicPartition], spec: str | int = "latest"
    ) -> dict[TopicPartition, int]:
        """``spec`` is ``earliest`` (log start offset), ``latest`` (log end offset) or a
        timestamp in ms: the first offset whose record has a timestamp >= it (-1 if none)."""
        if not partitions:
            return {}
        if isinstance(spec, int):
            offset_spec = ck_admin.OffsetSpec.for_timestamp(spec)
        elif spec == "earliest":
            offset_spec = ck_admin.OffsetSpec.earliest()
        else:
            offset_spec = ck_admin.OffsetSpec.latest()
        query = {confluent_kafka.TopicPartition(t, p): offset_spec for t, p in partitions}
        futures = self._admin.list_offsets(query, request_timeout=self._timeout)
        return {
            TopicPartition(tp.topic, tp.partition): int(
                self._result(fut, f"list offsets {tp.topic}-{tp.partition}").offset
            )
            for tp, fut in futures.items()
        }

    def describe_topic(self, name: str, with_configs: bool = True) -> TopicDescription:
        tmd = self._topic_metadata(name)
        tps = [TopicPartition(name, p) for p in sorted(tmd.partitions)]
        earliest = self.list_offsets(tps, "earliest")
        latest = self.list_offsets(tps, "latest")
        parts = tuple(
            PartitionDescription(
                partition=tp.partition,
                leader=tmd.partitions[tp.partition].leader,
                replicas=tuple(tmd.partitions[tp.partition].replicas),
                isr=tuple(tmd.partitions[tp.partition].isrs),
                earliest_offset=earliest[tp],
                latest_offset=latest[tp],
            )
            for tp in tps
        )
        configs = self.describe_topic_configs(name) if with_configs else {}
        return TopicDescription(name, parts, configs)

    def describe_topic_configs(self, name: str) -> dict[str, ConfigValue]:
        resource = ck_admin.ConfigResource(ck_admin.ResourceType.TOPIC, name)
        futures = self._admin.describe_configs([resource], request_timeout=self._timeout)
        entries = self._result(futures[resource], f"describe configs of {name}")
        return {
            key: ConfigValue(
                name=key,
                value=e.value,
                source=_config_source(e.source),
                is_default=bool(e.is_default),
                read_only=bool(e.is_read_only),
                sensitive=bool(e.is_sensitive),
            )
            for key, e in sorted(entries.items())
        }

    def alter_topic_config(
        self, name: str, set_configs: Mapping[str, str], delete: Sequence[str] = ()
    ) -> None:
        """Sets and deletes (reverts to default) topic configs, leaving the others alone."""
        op = ck_admin.AlterConfigOpType
        entries = [
            ck_admin.ConfigEntry(k, v, incremental_operation=op.SET) for k, v in set_configs.items()
        ] + [ck_admin.ConfigEntry(k, None, incremental_operation=op.DELETE) for k in delete]
        resource = ck_admin.ConfigResource(
            ck_admin.ResourceType.TOPIC, name, incremental_configs=entries
        )
        futures = self._admin.incremental_alter_configs([resource], request_timeout=self._timeout)
        try:
            self._result(futures[resource], f"alter configs of {name}")
        except ClientError as err:
            if err.name not in _UNSUPPORTED:
                raise
            self._alter_topic_config_classic(name, set_configs, delete)

    def _alter_topic_config_classic(
        self, name: str, set_configs: Mapping[str, str], delete: Sequence[str]
    ) -> None:
        current = {
            k: c.value
            for k, c in self.describe_topic_configs(name).items()
            if c.source == "DYNAMIC_TOPIC_CONFIG" and c.value is not None
        }
        for key in delete:
            current.pop(key, None)
        current.update(set_configs)
        resource = ck_admin.ConfigResource(ck_admin.ResourceType.TOPIC, name, set_config=current)
        futures = self._admin.alter_configs([resource], request_timeout=self._timeout)
        self._result(futures[resource], f"alter configs of {name}")

    # -- consumer groups ---------------------------------------------------------------
    def list_groups(self) -> list[GroupListing]:
        """Every consumer group, with its state.

        ListGroups reports states only from v4; for a group listed without one, the state
        comes from one DescribeGroups request for all such groups.
        """
        future = self._admin.list_consumer_groups(request_timeout=self._timeout)
        result = self._result(future, "list groups")
        if result.errors:  # a broker that did not answer in time is a time-out too
            first = result.errors[0]
            if first.code() == confluent_kafka.KafkaError._TIMED_OUT:
                raise _timed_out("list groups", self._timeout)
            raise ClientError.wrap(first, "list groups")
        states = {g.group_id: _enum_name(g.state) for g in result.valid}
        unknown = [gid for gid, state in states.items() if state == "UNKNOWN"]
        if unknown:
            futures = self._admin.describe_consumer_groups(unknown, request_timeout=self._timeout)
            for gid, fut in futures.items():
                try:
                    states[gid] = _enum_name(fut.result(self._timeout).state)
                except (confluent_kafka.KafkaException, TimeoutError):
                    pass  # keep UNKNOWN: listing must not fail because one group is busy
        return sorted(
            (
                GroupListing(g.group_id, states[g.group_id], bool(g.is_simple_consumer_group))
                for g in result.valid
            ),
            key=lambda g: g.group_id,
        )

    def describe_group(self, group_id: str) -> GroupDescription:
        futures = self._admin.describe_consumer_groups([group_id], request_timeout=self._timeout)
        desc = self._result(futures[group_id], f"describe group {group_id}")
        members = tuple(
            MemberDescription(
                member_id=m.member_id,
                client_id=m.client_id,
                host=m.host,
                assignment=tuple(
                    TopicPartition(tp.topic, tp.partition)
                    for tp in (m.assignment.topic_partitions if m.assignment else [])
                ),
            )
            for m in desc.members
        )
        owner = {tp: m.member_id for m in members for tp in m.assignment}
        committed: dict[TopicPartition, int | None] = dict(self.committed_offsets(group_id))
        for tp in owner:
            committed.setdefault(tp, None)
        ends = self.list_offsets(sorted(committed))
        lags = tuple(
            PartitionLag(
                topic=tp.topic,
                partition=tp.partition,
                committed_offset=c,
                log_end_offset=ends[tp],
                lag=None if c is None else ends[tp] - c,
                member_id=owner.get(tp),
            )
            for tp, c in sorted(committed.items())
        )
        coordinator = desc.coordinator.id if desc.coordinator is not None else None
        return GroupDescription(
            group_id=group_id,
            state=_enum_name(desc.state),
            protocol=desc.partition_assignor or "",
            coordinator=coordinator,
            members=members,
            offsets=lags,
        )

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (OffsetFetch of all its partitions)."""
        request = [confluent_kafka.ConsumerGroupTopicPartitions(group_id)]
        futures = self._admin.list_consumer_group_offsets(request, request_timeout=self._timeout)
        found = self._result(futures[group_id], f"committed offsets of {group_id}")
        return {
            TopicPartition(tp.topic, tp.partition): tp.offset
            for tp in found.topic_partitions
            if tp.error is None and tp.offset >= 0
        }

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commits ``offsets`` for the group (OffsetCommit, outside any generation): the
        broker takes them only while the group has no members."""
        request = confluent_kafka.ConsumerGroupTopicPartitions(
            group_id,
            [confluent_kafka.TopicPartition(t, p, o) for (t, p), o in offsets.items()],
        )
        futures = self._admin.alter_consumer_group_offsets([request], request_timeout=self._timeout)
        context = f"alter offsets of {group_id}"
        for tp in self._result(futures[group_id], context).topic_partitions:
            if tp.error is not None:
                raise ClientError.from_kafka_error(
                    tp.error, f"{context}: {tp.topic}-{tp.partition}"
                )

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, ClientError | None]:
        """DeleteGroups: each group's error (None when deleted with its committed offsets).

        The broker deletes only a group without members: NON_EMPTY_GROUP otherwise, and
        GROUP_ID_NOT_FOUND for a group it does not know.
        """
        futures = self._admin.delete_consumer_groups(list(group_ids), request_timeout=self._timeout)
        errors: dict[str, ClientError | None] = {}
        for group_id, future in futures.items():
            try:
                self._result(future, f"delete group {group_id}")
                errors[group_id] = None
            except ClientError as err:
                if err.code < 0:  # local (timeout, transport): no answer about this group
                    raise
                errors[group_id] = err
        return errors

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
            ScramCredential(user, _enum_name(info.mechanism).replace("_", "-"), info.iterations)
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
            if err.name not in _UNSUPPORTED:
                raise
            return True
        allowing = {ck_admin.AclOperation.DESCRIBE, ck_admin.AclOperation.ALL}
        return not allowing.isdisjoint(cluster.authorized_operations or ())


def _scram_mechanism(name: str) -> Any:
    try:
        return ck_admin.ScramMechanism[name.upper().replace("-", "_")]
    except KeyError:
        raise ValueError(f"unknown SCRAM mechanism {name!r}") from None
