"""Building real hot.LocalLogs with rolled segments for the cold tier's tests."""

from __future__ import annotations

from pathlib import Path

from tiered_mq.cold.object_store import ObjectStore
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

T0 = 1_700_000_000_000


class Clock:
    def __init__(self, now: int = T0 + 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(path: Path, clock: Clock | None = None, **props: str) -> LocalLog:
    base = {
        "remote.storage.enable": "true",
        "index.interval.bytes": "256",
        "file.delete.delay.ms": "0",
    }
    base.update({k.replace("_", "."): v for k, v in props.items()})
    return LocalLog.open(path, LogConfig.from_properties(base), clock=clock or Clock())


def fill(
    log: LocalLog,
    segments: int,
    batches_per_segment: int = 5,
    records_per_batch: int = 4,
    epoch: int = 0,
    ts_step: int = 1000,
) -> None:
    """Append ``segments`` segments of batches, rolling after each (so all are rolled and the
    active segment is empty); timestamps are T0 + offset * ts_step."""
    for _ in range(segments):
        for _ in range(batches_per_segment):
            first = log.log_end_offset
            records = [
                (
                    f"k{first + i}".encode(),
                    f"value-{first + i}".encode() * 3,
                    [],
                    T0 + (first + i) * ts_step,
                )
                for i in range(records_per_batch)
            ]
            buf = bytearray(encode_batch(records, base_timestamp=T0 + first * ts_step))
            log.append_as_leader(buf, epoch)
        log.roll()


def local_bytes(log: LocalLog, offset: int, max_bytes: int = 1 << 30) -> bytes:
    info = log.read(offset, max_bytes)
    return b"".join(r.read() for r in info.regions)


async def tiered_rlm(
    store: ObjectStore,
    tp: TopicPartition,
    log: LocalLog,
    cache_dir: Path,
    cache_bytes: int,
    chunk_size: int,
    **kw: int,
) -> RemoteLogManager:
    """A RemoteLogManager leading ``tp`` on ``log``, its rolled segments uploaded by one pass
    (the uploader's own loop stopped)."""
    rlm = RemoteLogManager(
        store,
        "p",
        cache_dir,
        cache_bytes,
        chunk_size=chunk_size,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        clock=Clock(),
        **kw,
    )
    rlm.on_become_leader(tp, log, log.config, lambda: log.log_end_offset)
    uploader = rlm.uploader(tp)
    assert uploader is not None
    await uploader.stop()
    await uploader.run_pass()
    return rlm
