"""``tiered-mq dev`` under a service manager: SIGHUP stops it cleanly, and a stop asked for
during the start (ZooKeeper unreachable, partitions being opened) abandons the start at once."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import LIST_OFFSETS, BrokerProcess, free_port, request
from tests.integration.client_helpers import produce_values, read_partition
from tests.integration.zookeeper_server import ZooKeeperServer, zookeeper  # noqa: F401

pytestmark = pytest.mark.integration


def last_start(broker: BrokerProcess) -> str:
    """The broker's output since its last launch."""
    return broker.log_path.read_text(errors="replace").rsplit("==== start", 1)[-1]


def wait_for_line(broker: BrokerProcess, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in last_start(broker):
        assert time.monotonic() < deadline, broker.log_tail()
        time.sleep(0.02)


def launch(broker: BrokerProcess) -> subprocess.Popen[bytes]:
    """Start the broker's process without waiting for it to be ready."""
    broker.data_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(broker.log_path, "ab") as out:
        out.write(b"\n==== start\n")
        out.flush()
        return subprocess.Popen(
            broker.command(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


def log_end_offsets(port: int, topic: str, partitions: int) -> list[int]:
    parts = [{"partition_index": i, "timestamp": -1} for i in range(partitions)]
    answer = request(
        port,
        LIST_OFFSETS,
        1,
        {"replica_id": -1, "topics": [{"name": topic, "partitions": parts}]},
        timeout=30,
    )
    got = sorted(answer["topics"][0]["partitions"], key=lambda p: p["partition_index"])
    assert all(p["error_code"] == 0 for p in got), got
    return [p["offset"] for p in got]


def test_sighup_stops_the_broker_cleanly(tmp_path: Path) -> None:
    """SIGHUP (the terminal of a foreground broker closed) is a clean stop, as the JVM runs
    Kafka's shutdown hook on it: exit 0, the log flushed and checkpointed (recovery point =
    log end offset, so the next start skips recovery). Python's default action killed the
    process at once: no flush, no checkpoint, status -SIGHUP."""
    with BrokerProcess(tmp_path / "data") as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        for i in range(10):
            producer.produce("hup", f"v{i}".encode())
        assert producer.flush(30) == 0
        assert broker.stop(signal.SIGHUP) == 0
    assert "stopped" in broker.log_tail(3)
    checkpoint = (tmp_path / "data" / "hup-0" / "recovery-point-offset-checkpoint").read_text()
    assert checkpoint.split() == ["0", "10"]


def test_sigterm_while_zookeeper_is_unreachable_ends_the_start_at_once(tmp_path: Path) -> None:
    """The start waits up to zookeeper.connection.timeout.ms (18 s) for ZooKeeper; a SIGTERM
    in that wait ends it within a second, status 0, no traceback. It was ignored until the
    wait ran out, then the start failed (status 1)."""
    unreachable = f"zookeeper.connect=127.0.0.1:{free_port()}"  # nothing listens there
    broker = BrokerProcess(tmp_path / "data", extra_args=["--config", unreachable])
    proc = launch(broker)
    try:
        wait_for_line(broker, "Connecting to")
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert proc.wait(30) == 0, broker.log_tail()
        assert time.monotonic() - started < 2.0
    finally:
        proc.kill()
        proc.wait()
    output = last_start(broker)
    assert "start abandoned" in output and "Traceback" not in output


def test_a_start_waiting_for_zookeeper_connects_when_it_comes_up(
    tmp_path: Path,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    """The start's wait for ZooKeeper (given up on a stop, above) still connects as soon as
    ZooKeeper answers within zookeeper.connection.timeout.ms."""
    connect = zookeeper.connect_string(chroot=zookeeper.new_chroot())
    zookeeper.stop()
    broker = BrokerProcess(
        tmp_path / "data", extra_args=["--config", f"zookeeper.connect={connect}"]
    )
    broker.proc = launch(broker)
    try:
        wait_for_line(broker, "Connecting to")
        zookeeper.start()
        broker.wait_ready()
        produce_values(broker.bootstrap, "late", b"v")
        assert read_partition(broker.bootstrap, "late") == [b"v"]
    finally:
        assert broker.stop() == 0


def test_sigterm_while_partitions_open_abandons_the_start(tmp_path: Path) -> None:
    """A SIGTERM while a killed broker's 600 partitions are opened (recovered) abandons the
    start: the broker never listens, exits 0, and the next start serves every partition with
    every record. The old code finished opening them all, listened, registered, said ready,
    then stopped."""
    partitions = 600
    broker = BrokerProcess(tmp_path / "data", startup_timeout=90)
    broker.start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("many", partitions, 1)], request_timeout=60)["many"].result()
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20})
    for i in range(partitions):
        producer.produce("many", b"v", partition=i)
    assert producer.flush(60) == 0
    broker.kill()  # the next start recovers every partition
    proc = launch(broker)
    try:
        wait_for_line(broker, "tiered storage on")  # the step before the partitions open
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, broker.log_tail()
    finally:
        proc.kill()
        proc.wait()
    output = last_start(broker)
    assert "start abandoned" in output, output
    assert "ready" not in output and "listening on" not in output
    with broker:
        assert log_end_offsets(broker.port, "many", partitions) == [1] * partitions
