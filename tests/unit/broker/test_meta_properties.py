"""``meta.properties`` (Kafka's BrokerMetadataCheckpoint v0): absent means nothing to check,
written as Kafka writes it and read back, and another cluster id refuses the start without
changing the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker import meta_properties as mp


def test_recorded_once_then_checked(tmp_path: Path) -> None:
    assert mp.check_cluster_id(tmp_path, "c1" * 11, "the embedded cluster.json", 3) is False
    assert not (tmp_path / "meta.properties").exists()  # the broker writes it (broker.py)
    mp.write(tmp_path, 3, "c1" * 11)
    assert (tmp_path / "meta.properties").read_text() == (
        f"version=0\nbroker.id=3\ncluster.id={'c1' * 11}\n"
    )
    assert mp.check_cluster_id(tmp_path, "c1" * 11, "the embedded cluster.json", 3)  # same: fine
    with pytest.raises(mp.InconsistentClusterIdError) as info:
        mp.check_cluster_id(tmp_path, "c2" * 11, "zookeeper.connect=zk:2181/other", 3)
    message = str(info.value)
    assert f"The Cluster ID {'c2' * 11} doesn't match stored clusterId {'c1' * 11}" in message
    assert "zookeeper.connect=zk:2181/other may be wrong" in message
    assert mp.read(tmp_path) == {"version": "0", "broker.id": "3", "cluster.id": "c1" * 11}


def test_a_file_written_by_kafka_is_read(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text(
        "#\n#Fri Nov 27 08:00:00 UTC 2026\ncluster.id=AbCdEfGhIjKlMnOpQrStUv\n"
        "version=0\nbroker.id=0\n"
    )
    with pytest.raises(mp.InconsistentClusterIdError, match="AbCdEfGhIjKlMnOpQrStUv"):
        mp.check_cluster_id(tmp_path, "x" * 22, "the embedded cluster.json", 0)
    assert mp.check_cluster_id(tmp_path, "AbCdEfGhIjKlMnOpQrStUv", "the embedded cluster.json", 0)
    assert mp.read(tmp_path / "missing") is None


def test_another_broker_id_is_refused(tmp_path: Path) -> None:
    """Kafka's InconsistentBrokerIdException: the data dir is another broker's."""
    mp.write(tmp_path, 0, "c1" * 11)
    with pytest.raises(mp.InconsistentBrokerIdError) as info:
        mp.check_cluster_id(tmp_path, "c1" * 11, "the embedded cluster.json", 7)
    assert "Configured broker.id 7 doesn't match stored broker.id 0" in str(info.value)
    assert mp.read(tmp_path) == {"version": "0", "broker.id": "0", "cluster.id": "c1" * 11}
