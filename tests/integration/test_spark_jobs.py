"""The jobs in spark/: replay to Parquet (in-process, plain python, spark-submit) and
reproduce into a topic through a real broker (`tiered-mq dev`)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.integration.conftest import BrokerFactory
from tests.unit.spark.bucket_builder import PartitionWriter, write_topic_manifest
from tests.unit.spark.spark_support import spark_session
from tiered_mq.cold.object_store import open_sync_store

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000_000


def load_job(name: str) -> ModuleType:
    path = ROOT / "spark" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"spark_job_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(root: Path, partitions: int = 3, per_partition: int = 120) -> list[tuple[Any, ...]]:
    """(partition, offset, key, value, headers, timestamp) of every record written."""
    store = open_sync_store(f"file://{root}")
    write_topic_manifest(store, "", "orders", partitions)
    written = []
    for p in range(partitions):
        w = PartitionWriter(store, "", "orders", p)
        for segment in range(2):
            for _ in range(per_partition // 2 // 20):
                base = w.next_offset
                rows = [
                    (
                        b"k%d" % (base + i),
                        b"p%d-o%d" % (p, base + i),
                        [("trace", b"t%d" % i)] if i % 4 == 0 else [],
                        T0 + 1000 * p + base + i,
                    )
                    for i in range(20)
                ]
                w.append(rows, compression=segment * 4)  # none, then zstd
                written += [(p, base + i, *r) for i, r in enumerate(rows)]
            w.roll()
    return written


def test_replay_to_parquet_in_process(tmp_path: Path) -> None:
    spark_session()
    written = build(tmp_path / "bucket")
    out = tmp_path / "out"
    replay = load_job("replay")
    args = ["--bucket", f"file://{tmp_path / 'bucket'}", "--topic", "orders",
            "--starting-offsets", '{"orders": {"1": 30}}', "--output", str(out)]  # fmt: skip
    assert replay.main(args) == 0
    table = pq.read_table(out)
    got = sorted(zip(table.column("partition").to_pylist(), table.column("offset").to_pylist(),
                     table.column("value").to_pylist(), strict=True))  # fmt: skip
    assert got == sorted((int(p), o, v) for p, o, _, v, _, _ in written if p != 1 or o >= 30)
    assert set(table.column_names) >= {"key", "value", "timestamp", "timestampType", "headers"}


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["python", "spark-submit"])
def test_replay_runs_standalone(tmp_path: Path, launcher: str) -> None:
    build(tmp_path / "bucket", partitions=1, per_partition=40)
    out = tmp_path / "out"
    job = [str(ROOT / "spark" / "replay.py"), "--bucket", f"file://{tmp_path / 'bucket'}",
           "--topic", "orders", "--output", str(out), "--master", "local[1]"]  # fmt: skip
    if launcher == "python":
        command = [sys.executable, *job]
    else:
        submit = shutil.which("spark-submit")
        if submit is None:
            pytest.skip("spark-submit not on PATH")
        command = [submit, "--master", "local[1]", "--conf", "spark.ui.enabled=false", *job]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "replay: 40 records of orders written" in done.stdout
    assert pq.read_table(out).num_rows == 40


def test_reproduce_into_a_topic_through_the_broker(
    tmp_path: Path, broker_factory: BrokerFactory
) -> None:
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic

    spark_session()
    written = build(tmp_path / "bucket")
    broker = broker_factory()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic("orders-copy", 3, 1)]).values():
        future.result(30)
    reproduce = load_job("reproduce")
    args = ["--bucket", f"file://{tmp_path / 'bucket'}", "--topic", "orders",
            "--ending-offsets", '{"orders": {"2": 50}}', "--bootstrap", broker.bootstrap,
            "--target-topic", "orders-copy", "--progress-interval", "1"]  # fmt: skip
    assert reproduce.main(args) == 0

    expected = sorted((p, k, v, tuple(h), ts) for p, o, k, v, h, ts in written if p != 2 or o < 50)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "verify",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
        }
    )
    consumer.subscribe(["orders-copy"])
    got: list[tuple[Any, ...]] = []
    offsets: dict[int, list[int]] = {}
    deadline = time.monotonic() + 60
    try:
        while len(got) < len(expected) and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            _, ts = msg.timestamp()
            got.append((msg.partition(), msg.key(), msg.value(), tuple(msg.headers() or ()), ts))
            offsets.setdefault(msg.partition(), []).append(int(msg.key()[1:]))
    finally:
        consumer.close()
    assert sorted(got) == expected
    # Each source partition was produced in offset order into the same partition.
    assert all(keys == sorted(keys) for keys in offsets.values())
