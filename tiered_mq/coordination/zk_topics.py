"""Topic metadata writes of the ZooKeeper coordinator: blocking, run through
``ZooKeeperSession.call`` (a worker thread), each updating the session's view before it
returns, so the broker reads its own writes at once.

Znodes (Kafka's layout, znodes.py): ``/brokers/topics/<t>`` (topic id and replica assignment),
``.../partitions/<p>/state`` (leader, leader epoch, ISR; written with the controller epoch) and
``/config/topics/<t>`` (the topic's config overrides).

Batches (``create_topics``, ``delete_topics``: every topic of one CreateTopics or DeleteTopics
request): one multi-op per topic, as below, all sent before the first answer is awaited, so
ZooKeeper commits them in one group (one round trip, one log fsync) and each topic still
succeeds or fails on its own.

Atomicity: a topic is created (assignment, partition states, config) and deleted in one
ZooKeeper multi-op transaction, and partitions are added in one transaction that checks the
assignment's version, so a crash or a concurrent admin never leaves half a topic. A config
znode left by a crashed delete of an older topic of the same name is overwritten. A deletion
also removes the topic's ``/admin/delete_topics/<t>`` request (Kafka's), in the same multi-op.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import PartitionState
from tiered_mq.coordination.zk_ops import first_failure, set_or_create, subtrees
from tiered_mq.coordination.zk_session import ZooKeeperSession
from tiered_mq.errors import (
    InvalidPartitionsError,
    KafkaError,
    RequestTimedOutError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tiered_mq.topic_partition import TopicPartition


def replicas_for(session: ZooKeeperSession, replicas: list[list[int]], index: int) -> list[int]:
    """The replicas asked for partition ``index``, else the live broker of lowest id (else this
    one)."""
    if index < len(replicas) and replicas[index]:
        return list(replicas[index])
    live = [b.node_id for b in session.view.brokers()]
    return [min(live, default=session.node_id)]


def create_topic(
    session: ZooKeeperSession,
    name: str,
    topic_id: str,
    assignment: dict[int, list[int]],
    configs: dict[str, str],
) -> None:
    """:func:`create_topics` of one topic, its error raised."""
    error = create_topics(session, [(name, topic_id, assignment, configs)])[name]
    if error is not None:
        raise error


def create_topics(
    session: ZooKeeperSession, topics: list[tuple[str, str, dict[int, list[int]], dict[str, str]]]
) -> dict[str, KafkaError | None]:
    """Create each ``(name, topic id, assignment, configs)`` in its own multi-op, as
    :func:`create_topic` does, all sent at once (ZooKeeper commits them together; a request
    of many topics costs about one round trip and one log fsync, not one per topic). Each
    topic's result is its own: None (created, the view updated) or its error."""
    client, view = session.client, session.view
    config_exists = [client.exists_async(znodes.topic_config(t[0])) for t in topics]
    commits = []
    for (name, topic_id, assignment, configs), exists in zip(topics, config_exists, strict=True):
        txn = client.transaction()
        txn.create(znodes.topic(name), znodes.encode_topic(topic_id, assignment))
        txn.create(znodes.partitions(name))
        for p, nodes in assignment.items():
            txn.create(znodes.partition(name, p))
            txn.create(znodes.partition_state(name, p), _initial_state(session, nodes))
        config = znodes.encode_entity_config(configs)
        if exists.get() is None:
            txn.create(znodes.topic_config(name), config)
        else:  # left by a crashed delete of an older topic of that name
            txn.set_data(znodes.topic_config(name), config)
        commits.append(txn.commit_async())
    results: dict[str, KafkaError | None] = {}
    for (name, topic_id, assignment, configs), commit in zip(topics, commits, strict=True):
        try:
            _check(commit.get(), f"topic '{name}'")
        except KafkaError as error:
            results[name] = error
            continue
        results[name] = None
        view.set_configs(name, dict(configs))
        for p, nodes in assignment.items():
            view.set_state(TopicPartition(name, p), PartitionState.initial(nodes))
        view.set_assignment(name, (topic_id, assignment))  # arms watches: blocking
    return results


def delete_topics(session: ZooKeeperSession, names: list[str]) -> dict[str, KafkaError | None]:
    """Delete each topic in its own multi-op, as :func:`delete_topic` does, all sent at once;
    each topic's result is its own (None: deleted; the view is the caller's to update)."""
    client = session.client
    requests = {n: client.exists_async(znodes.delete_request(n)) for n in names}
    configs = {n: client.exists_async(znodes.topic_config(n)) for n in names}
    trees = subtrees(client, [znodes.topic(n) for n in names])
    results: dict[str, KafkaError | None] = {}
    commits = {}
    for name in names:
        tree = trees[znodes.topic(name)]
        request = requests[name].get() is not None
        if tree is None:
            if request:
                with contextlib.suppress(NoNodeError):
                    client.delete(znodes.delete_request(name))
            results[name] = UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
            continue
        txn = client.transaction()
        for child in tree:
            txn.delete(child)
        if configs[name].get() is not None:
            txn.delete(znodes.topic_config(name))
        if request:
            txn.delete(znodes.delete_request(name))
        commits[name] = txn.commit_async()
    for name, commit in commits.items():
        try:
            _check(commit.get(), f"topic '{name}'")
            results[name] = None
        except KafkaError as error:
            results[name] = error
    return {name: results[name] for name in names}


def delete_topic(session: ZooKeeperSession, name: str) -> None:
    """:func:`delete_topics` of one topic, its error raised: the topic's znodes and its
    ``/admin/delete_topics`` request go (the view is the caller's to update); a request for a
    topic that does not exist is deleted too (as Kafka's controller does) before
    UNKNOWN_TOPIC_OR_PARTITION is raised."""
    error = delete_topics(session, [name])[name]
    if error is not None:
        raise error


def add_partitions(
    session: ZooKeeperSession, name: str, total: int, replicas: list[list[int]]
) -> None:
    client, view = session.client, session.view
    try:
        data, stat = client.get(znodes.topic(name))
    except NoNodeError:
        raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist") from None
    topic_id, assignment = znodes.decode_topic(data)
    if total <= len(assignment):
        raise InvalidPartitionsError(
            f"topic has {len(assignment)} partitions, cannot change to {total}"
        )
    first = len(assignment)
    added = {p: replicas_for(session, replicas, p - first) for p in range(first, total)}
    assignment.update(added)
    txn = client.transaction()
    txn.set_data(znodes.topic(name), znodes.encode_topic(topic_id, assignment), stat.version)
    for p, nodes in added.items():
        txn.create(znodes.partition(name, p))
        txn.create(znodes.partition_state(name, p), _initial_state(session, nodes))
    _commit(txn, f"topic '{name}'")
    for p, nodes in added.items():
        view.set_state(TopicPartition(name, p), PartitionState.initial(nodes))
    view.set_assignment(name, (topic_id, assignment))  # arms watches: blocking


def set_topic_configs(session: ZooKeeperSession, name: str, configs: dict[str, str]) -> None:
    """Replace the topic's config znode (the view is the caller's to update)."""
    client = session.client
    if client.exists(znodes.topic(name)) is None:
        raise UnknownTopicOrPartitionError(f"topic '{name}' does not exist")
    set_or_create(client, znodes.topic_config(name), znodes.encode_entity_config(configs))


def set_partition_state(
    session: ZooKeeperSession, tp: TopicPartition, state: PartitionState
) -> None:
    """Write the partition's state znode (the view is the caller's to update)."""
    client = session.client
    if client.exists(znodes.topic(tp.topic)) is None:
        raise UnknownTopicOrPartitionError(f"topic '{tp.topic}' does not exist")
    data = znodes.encode_partition_state(state, session.controller_epoch)
    set_or_create(client, znodes.partition_state(tp.topic, tp.partition), data)


def _initial_state(session: ZooKeeperSession, nodes: list[int]) -> bytes:
    return znodes.encode_partition_state(PartitionState.initial(nodes), session.controller_epoch)


def _commit(txn: Any, what: str) -> None:
    """Commit a multi-op; NodeExists on its first op is TOPIC_ALREADY_EXISTS, any other failure
    is raised as it is (nothing of the transaction was applied)."""
    _check(txn.commit(), what)


def _check(results: list[Any], what: str) -> None:
    """Raise the failure of a committed multi-op's ``results``, as :func:`_commit` says."""
    first = first_failure(results)
    if first is None:
        return
    if isinstance(first, NodeExistsError) and results[0] is first:
        raise TopicAlreadyExistsError(f"{what} already exists")
    if isinstance(first, BadVersionError | NoNodeError):
        raise RequestTimedOutError(f"{what} changed concurrently; try again") from first
    raise first
