"""A partition directory that outlives its topic (a stray), with confluent-kafka against real
broker processes: the broker died after the topic left the metadata and before the directory
was renamed ``-delete``, or (ZooKeeper) the topic was deleted and created again while the broker
was down. At start the broker removes the stray and never serves it: the topic is not listed,
and a topic created again under the same name holds only its own records (Kafka's topic id per
partition directory, ``partition.metadata``).

The crash state is made on disk as the crash leaves it: the partition directories of a broker
killed with SIGKILL are copied aside, the topic is deleted (the metadata forgets it), the broker
is killed again and the copies are put back under their own names.

Before: the broker never looked at such a directory. It stayed on disk for ever, and a topic
created again under the same name opened it, serving the deleted topic's records as its own."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess
from tests.integration.client_helpers import produce_values, read_partition
from tests.integration.conftest import BrokerFactory
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    zookeeper,
)

pytestmark = pytest.mark.integration

TOPIC = "reborn"


def create(bootstrap: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result(20)


def delete(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([TOPIC], operation_timeout=15)[TOPIC].result(20)


def topics(bootstrap: str) -> set[str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return set(admin.list_topics(timeout=10).topics)


def produce(bootstrap: str, *values: bytes, partition: int = 0) -> None:
    produce_values(bootstrap, TOPIC, *values, partition=partition)


def consume_all(bootstrap: str) -> list[bytes]:
    return read_partition(bootstrap, TOPIC)


def partition_dirs(data_dir: Path) -> list[str]:
    """The entries of the data dir named after the topic, ``-delete`` ones included."""
    return sorted(p.name for p in data_dir.iterdir() if p.name.startswith(f"{TOPIC}-"))


def wait_gone(data_dir: Path, timeout: float = 15) -> None:
    """Until no entry of the data dir is named after the topic (removals run in the
    background)."""
    deadline = time.monotonic() + timeout
    while left := partition_dirs(data_dir):
        assert time.monotonic() < deadline, f"still there: {left}"
        time.sleep(0.1)


def leave_crash_state(broker: BrokerProcess, saved: Path) -> None:
    """Delete the topic, then put its partition directories back under their names as a
    SIGKILL between the metadata change and the rename leaves them."""
    delete(broker.bootstrap)
    wait_gone(broker.data_dir)
    broker.kill()
    for dir in saved.iterdir():
        shutil.copytree(dir, broker.data_dir / dir.name)


def save_partition_dirs(broker: BrokerProcess, saved: Path) -> None:
    """Kill the broker (SIGKILL) and copy the topic's partition directories to ``saved``."""
    broker.kill()
    saved.mkdir()
    for name in partition_dirs(broker.data_dir):
        shutil.copytree(broker.data_dir / name, saved / name)


def test_a_partition_dir_left_by_a_crash_in_deletion_is_removed_at_start(
    broker_factory: BrokerFactory, tmp_path: Path
) -> None:
    broker = broker_factory()
    create(broker.bootstrap, partitions=2)
    produce(broker.bootstrap, b"old-1", b"old-2")
    save_partition_dirs(broker, tmp_path / "saved")
    broker.start()
    leave_crash_state(broker, tmp_path / "saved")
    assert partition_dirs(broker.data_dir) == [f"{TOPIC}-0", f"{TOPIC}-1"]

    broker.start()
    wait_gone(broker.data_dir)
    assert TOPIC not in topics(broker.bootstrap)
    assert "found stray partition directory" in broker.log_tail(200)
    broker.restart()  # nothing is left to find
    assert partition_dirs(broker.data_dir) == []
    assert TOPIC not in topics(broker.bootstrap)


def test_a_topic_created_again_never_reads_the_crash_leftover(
    broker_factory: BrokerFactory, tmp_path: Path
) -> None:
    broker = broker_factory()
    create(broker.bootstrap)
    produce(broker.bootstrap, b"old-1", b"old-2", b"old-3")
    save_partition_dirs(broker, tmp_path / "saved")
    broker.start()
    leave_crash_state(broker, tmp_path / "saved")

    broker.start()
    create(broker.bootstrap)
    produce(broker.bootstrap, b"new-1")
    assert consume_all(broker.bootstrap) == [b"new-1"]
    broker.restart()
    assert consume_all(broker.bootstrap) == [b"new-1"]
    assert partition_dirs(broker.data_dir) == [f"{TOPIC}-0"]


def zk_broker(data_dir: Path, connect: str) -> BrokerProcess:
    return BrokerProcess(
        data_dir,
        extra_args=["--config", f"zookeeper.connect={connect}", "--config", "broker.id=0"],
    )


def test_a_topic_recreated_while_the_broker_was_down_starts_empty(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    """ZooKeeper mode: another broker (the same id, another disk) deletes the topic and
    creates it again while the first is down; the first one's directory has the old topic id."""
    chroot = zookeeper.connect_string(zookeeper.new_chroot())
    first = zk_broker(tmp_path / "first", chroot)
    with first:
        create(first.bootstrap)
        produce(first.bootstrap, b"old-1", b"old-2")
    with zk_broker(tmp_path / "second", chroot) as second:
        delete(second.bootstrap)
        create(second.bootstrap)
    with first:
        assert TOPIC in topics(first.bootstrap)
        produce(first.bootstrap, b"new-1")
        assert consume_all(first.bootstrap) == [b"new-1"]
        assert "found stray partition directory" in first.log_tail(200)
