"""A data dir whose tiered partitions uploaded records to one cold tier refuses to start on
another cold URL (exit status 1, one line naming both URLs, nothing in the data dir changed).

It started: ListOffsets EARLIEST answered the old log start offset while every Fetch there
answered OFFSET_OUT_OF_RANGE (only the old cold tier holds those records), so a consumer with
``auto.offset.reset=earliest`` reset to that offset and was refused again, for ever. The old URL
still starts and serves every record; a data dir without tiered data may move its cold tier."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, request
from tests.integration.client_helpers import take
from tiered_mq.protocol.api_versions import ApiKey

pytestmark = pytest.mark.integration

TIERED = "cold-moves"
COUNT = 60  # ~250-byte batches, 15 per 4 KiB segment
FAST = [
    "remote.log.manager.task.interval.ms=200",
    "log.retention.check.interval.ms=200",
    "log.segment.delete.delay.ms=0",
]
LAUNCH = "import sys; from tiered_mq.cli import main; sys.exit(main())"


def configs(*items: str) -> list[str]:
    return [arg for item in items for arg in ("--config", item)]


def earliest_local(port: int, topic: str) -> int:
    """ListOffsets v8 EARLIEST_LOCAL (-4): the first offset still on the broker's disk."""
    part = {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -4}
    topics = [{"name": topic, "partitions": [part]}]
    body = {"replica_id": -1, "isolation_level": 0, "topics": topics}
    answer = request(port, ApiKey.LIST_OFFSETS, 8, body)["topics"][0]["partitions"][0]
    assert answer["error_code"] == 0, answer
    return int(answer["offset"])


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(count):
        producer.produce(topic, f"{i:04d}".encode() + b"v" * 200)
        producer.flush(10)  # one batch per record


def create(bootstrap: str, topic: str, tiered: bool) -> None:
    config = {"segment.bytes": "4096"}
    if tiered:
        config |= {"remote.storage.enable": "true", "local.retention.ms": "1000"}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(15)


def wait_for(check: object, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def snapshot(data_dir: Path) -> dict[str, str]:
    """Every file under ``data_dir`` and its content hash (the embedded coordinator rewrites
    ``cluster.json`` as it starts, with the same content: compared by content)."""
    return {
        str(path.relative_to(data_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(data_dir.rglob("*"))
        if path.is_file()
    }


def refused_start(data_dir: Path, *args: str) -> tuple[int, str]:
    """Run ``tiered-mq dev`` expecting it to stop on its own; (exit status, output)."""
    command = [sys.executable, "-c", LAUNCH, "dev", "--port", "0", "--metrics-port", "0"]
    proc = subprocess.Popen(
        [*command, "--data-dir", str(data_dir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"the broker started on the other cold URL:\n{out.decode()}") from None
    return proc.returncode, out.decode()


def read_all(bootstrap: str, topic: str, count: int) -> list[int]:
    """The offsets a new group with auto.offset.reset=earliest reads from the start."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{time.monotonic_ns()}"}
        | {"auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([topic])
        return [m.offset() for m in take(consumer, count, timeout=30)]
    finally:
        consumer.close()


def test_another_cold_url_is_refused_while_tiered_data_lives_in_the_old_one(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    default_url = f"file://{data.resolve() / 'cold'}"
    with BrokerProcess(data, extra_args=configs(*FAST)) as broker:
        create(broker.bootstrap, TIERED, tiered=True)
        produce(broker.bootstrap, TIERED, COUNT)
        wait_for(lambda: earliest_local(broker.port, TIERED) >= 30, "uploaded segments to go")
    before = snapshot(data)
    other = tmp_path / "other-cold"

    status, out = refused_start(data, "--cold-url", f"file://{other}", *configs(*FAST))

    assert status == 1, out
    lines = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, out
    assert (
        f"Configured cold tier file://{other} doesn't match the cold tier {default_url}"
        in (lines[0])
    )
    assert f"({TIERED}-0)" in lines[0]
    assert "or on a fresh --data-dir" in lines[0]
    assert snapshot(data) == before  # nothing changed, not even a checkpoint or index
    assert not other.exists()  # nor was the other cold tier written to

    with BrokerProcess(data, extra_args=configs(*FAST)) as broker:  # the old URL still starts
        assert read_all(broker.bootstrap, TIERED, COUNT) == list(range(COUNT))
    # a start with a scheme, bucket and prefix of the same place is that cold tier
    with BrokerProcess(data, extra_args=["--cold-url", f"{default_url}/", *configs(*FAST)]):
        pass


def test_a_data_dir_without_tiered_data_may_move_its_cold_tier(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data, extra_args=configs(*FAST)) as broker:
        create(broker.bootstrap, "local-only", tiered=False)
        produce(broker.bootstrap, "local-only", 30)  # several segments, none tiered
        create(broker.bootstrap, TIERED, tiered=True)  # tiered, but nothing in it yet
    other = tmp_path / "other-cold"
    moved = ["--cold-url", f"file://{other}", *configs(*FAST)]
    with BrokerProcess(data, extra_args=moved) as broker:  # moves, silently
        assert read_all(broker.bootstrap, "local-only", 30) == list(range(30))
        produce(broker.bootstrap, TIERED, COUNT)
        wait_for(lambda: earliest_local(broker.port, TIERED) >= 30, "uploaded segments to go")
    assert list((other / "topics" / TIERED).iterdir())  # the uploads went to the new tier

    # the data dir now holds tiered data in the new tier: the old URL is the one refused
    status, out = refused_start(data, *configs(*FAST))
    assert status == 1, out
    assert f"doesn't match the cold tier file://{other} recorded in" in out
    with BrokerProcess(data, extra_args=moved) as broker:
        assert read_all(broker.bootstrap, TIERED, COUNT) == list(range(COUNT))
