"""A data dir belongs to one cluster (Kafka's ``meta.properties``): a broker pointed at other
cluster metadata (another ZooKeeper chroot, a lost ``cluster.json``) refuses to start with
Kafka's InconsistentClusterIdException message, and its partitions, which that metadata does
not know and would otherwise be deleted as strays, stay; back on its own metadata the broker
serves them again. Checked with confluent-kafka against real broker processes.

Before: the broker started on the wrong metadata; with stray partition directories deleted at
start (stray_partitions.py), every partition of the data dir would have gone."""

from __future__ import annotations

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

TOPIC = "kept"
VALUES = [b"a", b"b", b"c"]


def fill(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(20)
    produce_values(bootstrap, TOPIC, *VALUES)


def consume_all(bootstrap: str) -> list[bytes]:
    return read_partition(bootstrap, TOPIC)


def refuses_to_start(broker: BrokerProcess) -> str:
    with pytest.raises(RuntimeError, match="exited"):
        broker.start()
    return broker.log_tail(60)


def zk_broker(data_dir: Path, connect: str) -> BrokerProcess:
    return BrokerProcess(data_dir, extra_args=["--config", f"zookeeper.connect={connect}"])


def test_a_broker_pointed_at_another_chroot_refuses_to_start_and_keeps_its_data(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    own = zookeeper.connect_string(zookeeper.new_chroot())
    with zk_broker(tmp_path / "data", own) as broker:
        fill(broker.bootstrap)
    other = zookeeper.connect_string(zookeeper.new_chroot())
    log = refuses_to_start(zk_broker(tmp_path / "data", other))
    assert "doesn't match stored clusterId" in log
    assert f"zookeeper.connect={other} may be wrong" in log
    assert (tmp_path / "data" / f"{TOPIC}-0").is_dir()
    with zk_broker(tmp_path / "data", own) as broker:
        assert consume_all(broker.bootstrap) == VALUES


def test_a_lost_cluster_json_stops_the_broker_before_any_partition_goes(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory()
    fill(broker.bootstrap)
    broker.stop()
    cluster = broker.data_dir / "cluster.json"
    saved = cluster.read_bytes()
    cluster.unlink()
    log = refuses_to_start(broker)
    assert "doesn't match stored clusterId" in log and "cluster.json may be wrong" in log
    assert (broker.data_dir / f"{TOPIC}-0").is_dir()
    cluster.write_bytes(saved)  # the operator puts it back
    broker.start()
    assert consume_all(broker.bootstrap) == VALUES


def test_another_broker_id_on_the_data_dir_is_refused(tmp_path: Path) -> None:
    """Kafka's InconsistentBrokerIdException: the data dir is another broker's; nothing is
    changed, and the right broker.id starts on it again."""
    with BrokerProcess(tmp_path / "data") as broker:
        fill(broker.bootstrap)
    other = BrokerProcess(tmp_path / "data", extra_args=["--config", "broker.id=7"])
    log = refuses_to_start(other)
    assert "Configured broker.id 7 doesn't match stored broker.id 0" in log
    assert (tmp_path / "data" / f"{TOPIC}-0").is_dir()
    with BrokerProcess(tmp_path / "data") as broker:
        assert consume_all(broker.bootstrap) == VALUES


def test_a_data_dir_from_before_meta_properties_with_a_lost_cluster_json_changes_nothing(
    broker_factory: BrokerFactory,
) -> None:
    """A data dir written before meta.properties and partition.metadata existed, whose
    cluster.json is lost: nothing tells the new metadata from its own, so the start stops,
    naming the partition directories that metadata does not own, and changes none of them;
    with cluster.json put back, every record is served and the cluster id is recorded."""
    broker = broker_factory()
    fill(broker.bootstrap)
    broker.stop()
    data = broker.data_dir
    (data / "meta.properties").unlink()
    for marker in data.glob("*/partition.metadata"):
        marker.unlink()
    cluster = data / "cluster.json"
    saved = cluster.read_bytes()
    cluster.unlink()
    log = refuses_to_start(broker)
    owned = len([d for d in data.iterdir() if d.is_dir() and d.name[-1].isdigit()])
    assert f"records no cluster id (meta.properties) and holds {owned} partition dir" in log
    assert (data / f"{TOPIC}-0").is_dir()
    assert list(data.glob("*/partition.metadata")) == [] and list(data.glob("*-delete")) == []
    assert not (data / "meta.properties").exists()
    cluster.write_bytes(saved)  # the operator puts it back
    broker.start()
    assert consume_all(broker.bootstrap) == VALUES
    assert (data / "meta.properties").is_file()


def test_a_topic_whose_znode_cannot_be_read_keeps_its_partitions(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    """A topic znode holding data that is not Kafka's JSON (written by another tool, or
    damaged): the topic is listed but cannot be read, so its partition directories are not
    strays; the broker leaves them alone, and once the znode is mended it serves every record.
    Before, they were deleted at start like a deleted topic's."""
    from kazoo.client import KazooClient

    connect = zookeeper.connect_string(zookeeper.new_chroot())
    with zk_broker(tmp_path / "data", connect) as broker:
        fill(broker.bootstrap)
    zk = KazooClient(hosts=connect)
    zk.start()
    try:
        path = f"/brokers/topics/{TOPIC}"
        record, _ = zk.get(path)
        zk.set(path, b"not kafka's json")
        broker = zk_broker(tmp_path / "data", connect)
        with broker:
            assert (tmp_path / "data" / f"{TOPIC}-0" / "00000000000000000000.log").is_file()
            assert "cannot be read; left alone" in broker.log_tail(200)
        zk.set(path, record)
    finally:
        zk.stop()
        zk.close()
    with zk_broker(tmp_path / "data", connect) as broker:
        assert consume_all(broker.bootstrap) == VALUES
