"""ListOffsets on cold data waits for the bucket at most remote.list.offsets.request.timeout.ms
(or a v10 request's timeout_ms), as Kafka's DelayedRemoteListOffsets (KIP-1075): past it the
partition answers REQUEST_TIMED_OUT, the request's other partitions are answered, and the
lookup goes on so the client's retry gets the offset."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.handlers import list_offsets
from tiered_mq.broker.remote_tier import build_remote_log_manager
from tiered_mq.cold.metrics import RemoteMetrics
from tiered_mq.cold.remote_list_offsets import RemoteListOffsets
from tiered_mq.errors import RequestTimedOutError
from tiered_mq.topic_partition import TopicPartition

REQUEST_TIMED_OUT = RequestTimedOutError.errno
COLD_OFFSET, COLD_TS = 42, 1_000_042
HOT_OFFSET, HOT_TS = 500, 2_000_000


class Bucket:
    """The cold tier's lookups: they answer only once ``answering`` is set."""

    def __init__(self, timeout_s: float) -> None:
        self.metrics = RemoteMetrics()
        self.list_offsets = RemoteListOffsets(timeout_s, self.metrics.list_offsets_expired)
        self.answering = asyncio.Event()
        self.lookups: list[tuple[TopicPartition, int]] = []

    async def offset_for_timestamp(
        self, tp: TopicPartition, timestamp: int, log_start_offset: int = 0, **_: bool
    ) -> tuple[int, int] | None:
        self.lookups.append((tp, timestamp))
        await self.answering.wait()
        return (COLD_OFFSET, COLD_TS) if timestamp <= COLD_TS else None

    def leader_epoch_of(self, tp: TopicPartition, offset: int) -> int | None:
        return None  # no manifest: the current epoch

    async def max_timestamp(self, tp: TopicPartition) -> int:
        await self.answering.wait()
        return COLD_TS

    @property
    def expired(self) -> float:
        return self.metrics.list_offsets_expired._value.get()


def partition(cold: bool) -> SimpleNamespace:
    """Offsets 0-999; a cold one has 0-99 only in the bucket, a hot one all of them locally."""
    hot = (HOT_OFFSET, HOT_TS)
    return SimpleNamespace(
        high_watermark=1000,
        last_stable_offset=1000,
        log_start_offset=0,
        leader_epoch=0,
        log=SimpleNamespace(
            local_log_start_offset=100 if cold else 0,
            log_end_offset=1000,
            iter_batch_headers=lambda offset, below_log_start=False: iter(()),  # the current epoch
            offset_for_timestamp=lambda ts: hot if ts <= HOT_TS else None,
            offset_of_max_timestamp=lambda: hot,
        ),
    )


def context(bucket: Bucket) -> Any:
    partitions = {"cold": partition(cold=True), "hot": partition(cold=False)}
    broker = SimpleNamespace(
        replica_manager=SimpleNamespace(get_partition=lambda tp: partitions[tp.topic]),
        remote_log_manager=bucket,
    )
    return SimpleNamespace(broker=broker, client_host="10.0.0.1", authorize=lambda *_: True)


def request(*asked: tuple[str, int, int], timeout_ms: int | None = None) -> dict[str, Any]:
    topics: dict[str, list[dict[str, int]]] = {}
    for topic, index, timestamp in asked:
        topics.setdefault(topic, []).append({"partition_index": index, "timestamp": timestamp})
    body: dict[str, Any] = {
        "isolation_level": 0,
        "topics": [{"name": name, "partitions": ps} for name, ps in topics.items()],
    }
    if timeout_ms is not None:
        body["timeout_ms"] = timeout_ms
    return body


Answers = dict[tuple[str, int], tuple[int, int, int]]


async def answered(bucket: Bucket, body: dict[str, Any]) -> tuple[float, Answers]:
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with asyncio.timeout(5):  # unbounded, it would wait for the bucket for ever
        response = await list_offsets.handle(context(bucket), body)
    took = loop.time() - started
    by_partition = {
        (t["name"], p["partition_index"]): (p["error_code"], p["offset"], p["timestamp"])
        for t in response["topics"]
        for p in t["partitions"]
    }
    return took, by_partition


async def test_a_hung_bucket_times_out_its_partition_and_answers_the_others() -> None:
    bucket = Bucket(0.1)
    took, got = await answered(bucket, request(("cold", 0, 5), ("hot", 0, 5)))
    assert 0.1 <= took < 1.0
    assert got[("cold", 0)] == (REQUEST_TIMED_OUT, -1, -1)
    assert got[("hot", 0)] == (0, HOT_OFFSET, HOT_TS)
    assert bucket.expired == 1


async def test_hung_partitions_share_one_wait() -> None:
    bucket = Bucket(0.2)
    body = request(("cold", 0, 5), ("cold", 1, 6), ("cold", 2, -3), ("hot", 0, -3))
    took, got = await answered(bucket, body)
    assert took < 0.35, f"{took:.2f} s: the partitions waited one after another"
    assert [got[("cold", i)][0] for i in range(3)] == [REQUEST_TIMED_OUT] * 3
    assert got[("hot", 0)] == (0, HOT_OFFSET, HOT_TS)  # -3 of a hot partition: never waits
    assert bucket.expired == 3


async def test_the_requests_timeout_ms_wins_over_the_config() -> None:
    bucket = Bucket(30.0)
    took, got = await answered(bucket, request(("cold", 0, 5), timeout_ms=100))
    assert took < 1.0
    assert got[("cold", 0)] == (REQUEST_TIMED_OUT, -1, -1)


async def test_the_lookup_goes_on_and_the_retry_gets_the_offset() -> None:
    bucket = Bucket(0.05)
    body = request(("cold", 0, 5))
    for _ in range(3):  # the client retries while the bucket is hung: they join one lookup
        assert (await answered(bucket, body))[1][("cold", 0)][0] == REQUEST_TIMED_OUT
    assert len(bucket.lookups) == 1 and bucket.list_offsets.in_flight == 1
    bucket.answering.set()
    assert (await answered(bucket, body))[1][("cold", 0)] == (0, COLD_OFFSET, COLD_TS)
    assert len(bucket.lookups) == 1
    assert bucket.list_offsets.in_flight == 0


async def test_an_answering_bucket_is_used_and_none_falls_back_to_the_local_log() -> None:
    bucket = Bucket(0.5)
    bucket.answering.set()
    _, got = await answered(bucket, request(("cold", 0, 5)))
    assert got[("cold", 0)] == (0, COLD_OFFSET, COLD_TS)
    _, got = await answered(bucket, request(("cold", 0, COLD_TS + 1)))  # newer than the bucket
    assert got[("cold", 0)] == (0, HOT_OFFSET, HOT_TS)
    _, got = await answered(bucket, request(("cold", 0, -3)))  # the local max is greater
    assert got[("cold", 0)] == (0, HOT_OFFSET, HOT_TS)
    assert bucket.expired == 0


async def test_a_failing_lookup_answers_its_error_in_time() -> None:
    bucket = Bucket(5.0)

    async def broken(tp: TopicPartition, timestamp: int, start: int = 0) -> None:
        raise OSError("bucket refused")

    bucket.offset_for_timestamp = broken  # type: ignore[method-assign, assignment]
    took, got = await answered(bucket, request(("cold", 0, 5)))
    assert took < 1.0
    assert got[("cold", 0)][0] not in (0, REQUEST_TIMED_OUT)
    assert bucket.expired == 0


def test_the_config_is_a_broker_config_with_kafkas_default(tmp_path: Path) -> None:
    key = "remote.list.offsets.request.timeout.ms"
    config = BrokerConfig(tmp_path, cold_url="memory://lo/p", overrides={key: "1500"})
    assert key in config.props and key not in config.topic_defaults
    rlm = build_remote_log_manager(config)
    assert rlm is not None and rlm.list_offsets.timeout_s == 1.5
    default = build_remote_log_manager(BrokerConfig(tmp_path, cold_url="memory://lo/p"))
    assert default is not None and default.list_offsets.timeout_s == 30.0


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_timeout_below_one_ms_fails_the_start_naming_the_config(
    tmp_path: Path, value: str
) -> None:
    key = "remote.list.offsets.request.timeout.ms"
    config = BrokerConfig(tmp_path, cold_url="memory://lo/p", overrides={key: value})
    with pytest.raises(ValueError, match=f"{key} must be at least 1 ms"):
        build_remote_log_manager(config)


def test_a_timeout_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    key = "remote.list.offsets.request.timeout.ms"
    config = BrokerConfig(tmp_path, overrides={key: "30s"})
    with pytest.raises(ValueError, match=f"{key}='30s' is not an integer"):
        config.check_values()
