"""Upload throughput of the cold tier's uploader vs the S3 server's raw PUT throughput.

Starts SeaweedFS (tests/integration/s3_server.py), writes a real hot.LocalLog of N rolled
segments of ``--segment-mb`` MiB each, then measures in the same run:

  raw:      boto3 put_object of objects of the same sizes (the .log files), one at a time
  uploader: RemoteLogManager's uploader copying every segment (.log, .index, .timeindex,
            CRC-32C validation, summary, two conditional manifest writes per segment)

and prints both in MB/s of .log bytes and their ratio (uploader / raw). Both are timed after a
warm-up put on their own client (client set-up and connections, a one-off cost at start).

    python benchmarks/bench_upload.py [--segments 8] [--segment-mb 16]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.s3_server import SeaweedFS
from tiered_mq.cold.object_store import open_object_store
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition


def build_log(path: Path, segments: int, segment_mb: int) -> LocalLog:
    config = LogConfig.from_properties(
        {"remote.storage.enable": "true", "segment.bytes": str(1 << 30), "retention.ms": "-1"}
    )
    log = LocalLog.open(path, config)
    value = b"x" * 1000
    batch_records = [(None, value, [], None)] * 100  # ~100 KB batches
    target = segment_mb * 1024 * 1024
    for _ in range(segments):
        while log.active_segment.size < target:
            log.append_as_leader(bytearray(encode_batch(batch_records)), 0)
        log.roll()
    return log


def raw_put(server: SeaweedFS, bucket: str, files: list[bytes]) -> float:
    client = server.client()
    start = time.perf_counter()
    for i, data in enumerate(files):
        client.put_object(Bucket=bucket, Key=f"raw/{i}", Body=data)
    return time.perf_counter() - start


async def uploader_run(server: SeaweedFS, bucket: str, log: LocalLog, cache: Path) -> float:
    store = open_object_store(f"s3://{bucket}/bench", **server.store_options())
    rlm = RemoteLogManager(
        store,
        "bench",
        cache,
        64 << 20,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
    )
    tp = TopicPartition("bench", 0)
    rlm.on_become_leader(tp, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(tp)
    assert uploader is not None
    await uploader.stop()
    await store.put("warm-up", b"x")  # the client and its connections, as raw_put's warm-up
    start = time.perf_counter()
    await uploader.run_pass()
    elapsed = time.perf_counter() - start
    assert uploader.manifest.end_offset() == log.log_end_offset - 1, "not everything uploaded"
    await rlm.close()
    await store.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--segment-mb", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = build_log(Path(tmp) / "bench-0", args.segments, args.segment_mb)
        files = [s.log_path.read_bytes() for s in log.segments()[:-1]]
        total = sum(len(f) for f in files)
        server = SeaweedFS()
        server.start()
        try:
            bucket = server.new_bucket()
            raw_put(server, bucket, files[:1])  # warm-up (connections, volume allocation)
            raw_s = raw_put(server, bucket, files)
            up_s = asyncio.run(uploader_run(server, bucket, log, Path(tmp) / "cache"))
        finally:
            server.close()
            log.close()
    mb = total / 1e6
    print(f"segments: {len(files)} x {args.segment_mb} MiB, {mb:.1f} MB of .log data")
    print(f"raw boto3 put_object (S3 server limit): {mb / raw_s:8.1f} MB/s  ({raw_s:.2f} s)")
    print(f"tiered-mq uploader:                     {mb / up_s:8.1f} MB/s  ({up_s:.2f} s)")
    print(f"ratio uploader / raw: {raw_s / up_s:.2f}")


if __name__ == "__main__":
    main()
