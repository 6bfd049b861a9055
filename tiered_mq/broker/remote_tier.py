"""The broker's cold tier: builds, checks and stops the RemoteLogManager from broker configs.

``start_remote_tier(config, registry)`` is called by ``Broker.start`` before the replica
manager opens the partitions (each opened partition is then handed to
``on_become_leader``); it returns None when tiering is off. ``stop_remote_tier`` is called by
``Broker.close`` before the logs close: it stops every uploader (waiting for them, so no
upload touches a closed log) and closes the object store.

Broker configs (Kafka's names where Kafka has one)::

    remote.log.storage.system.enable                 false: no cold tier at all (default true)
    remote.log.manager.task.interval.ms              uploader pass interval (also runs the
                                                     local retention of tiered topics)
    remote.log.manager.task.retry.backoff.ms / .max.ms  first and longest pause after a
                                                     failed pass (500 ms doubling to 30 s)
    remote.log.manager.copy.max.bytes.per.second     upload rate limit (0 = unlimited)
    remote.log.manager.fetch.max.bytes.per.second    bucket read rate limit (0 = unlimited)
    remote.log.reader.cache.bytes                    on-disk chunk cache of remote reads
    remote.log.reader.chunk.bytes                    size of one ranged GET
    remote.log.reader.read.ahead.chunks              chunks prefetched by a sequential reader
                                                     (at least; a filled fetch prefetches as
                                                     much as it read, up to cache / 4)
    remote.log.reader.fetch.max.bytes                cap of a cold single-partition filled
                                                     fetch (handlers/fetch.py; 64 MiB, never
                                                     above cache / 2: it pins chunk files)
    remote.fetch.max.wait.ms                         longest wait of a fetch for the bucket
                                                     (500 ms, as in Kafka; longer: the
                                                     partition is answered without records
                                                     and the read goes on; cold/remote_fetch.py)
    remote.list.offsets.request.timeout.ms           longest wait of a ListOffsets (by timestamp
                                                     or -3) for the bucket (30 s, as in Kafka,
                                                     KIP-1075; a v10 request's timeout_ms wins;
                                                     longer: REQUEST_TIMED_OUT for the partition,
                                                     the lookup goes on;
                                                     cold/remote_list_offsets.py)
    remote.log.index.file.cache.total.size.bytes  parsed .index/.timeindex objects kept in
                                                     memory (64 MiB; Kafka's 1 GiB is of
                                                     memory-mapped files, these are heap)
    remote.log.s3.region / remote.log.s3.path.style  S3 client settings (path style defaults
                                                     to true with a custom endpoint)

The URL is ``BrokerConfig.cold_url`` (``s3://bucket/prefix``, ``file:///dir``, ``memory://``);
S3 credentials come from the standard AWS chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...).
Which topics are tiered is the topic config ``remote.storage.enable`` (a broker default may set
it for all); internal topics (``__consumer_offsets``...) and compacted topics never are.

Startup check: one LIST under the prefix. An answer from the server that refuses (wrong
credentials, missing bucket) fails the start with ``RemoteTierError`` naming the reason; an
unreachable server, or one that does not answer within ``START_PROBE_TIMEOUT_S`` (a hung
endpoint: the S3 client's timeouts and retries took minutes), only logs a warning: the broker
serves hot data and uploads resume when the server returns (the copy lag grows meanwhile).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from botocore.exceptions import ClientError
from prometheus_client import CollectorRegistry

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.cold import layout
from tiered_mq.cold.log_view import LocalLogView, LogConfigView, PartitionView
from tiered_mq.cold.object_store import ObjectStore, open_object_store, parse_store_url
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.topic_deletion import JOURNAL_NAME
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.errors import ObjectStoreError
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

CACHE_DIR_NAME = ".remote-cache"


class RemoteTierError(RuntimeError):
    """The cold tier cannot work with this configuration (the broker does not start)."""


class BrokerRemoteLogManager(RemoteLogManager):
    """RemoteLogManager that leaves internal and compacted topics alone."""

    def on_become_leader(
        self,
        tp: TopicPartition,
        local_log: LocalLogView | PartitionView,
        config: LogConfigView | None = None,
        high_watermark: Callable[[], int] | None = None,
        *,
        leader_epoch: int = 0,
        lock: AbstractAsyncContextManager[Any] | None = None,
    ) -> None:
        if not is_tierable(tp, local_log):
            return
        super().on_become_leader(
            tp, local_log, config, high_watermark, leader_epoch=leader_epoch, lock=lock
        )


def is_tierable(tp: TopicPartition, partition: Any) -> bool:
    config = getattr(getattr(partition, "log", None), "config", None)
    return tierable_topic(tp.topic, getattr(config, "cleanup_policy", "delete"))


def tierable_topic(topic: str, cleanup_policy: object) -> bool:
    """Whether a topic's segments may go to the bucket at all: never an internal topic
    (``__consumer_offsets``...) nor a compacted one, whatever ``remote.storage.enable`` says."""
    return not topic.startswith("__") and "compact" not in str(cleanup_policy)


def tiered_storage_enabled(config: BrokerConfig) -> bool:
    """Whether this broker has a cold tier: ``remote.log.storage.system.enable`` and a URL."""
    return config.get_bool("remote.log.storage.system.enable", True) and bool(config.cold_url)


def _path_style(config: BrokerConfig) -> bool:
    value = (config.get("remote.log.s3.path.style") or "").strip().lower()
    if value in ("true", "false"):
        return value == "true"
    return bool(config.s3_endpoint)


def open_store(config: BrokerConfig) -> ObjectStore:
    assert config.cold_url is not None
    return open_object_store(
        config.cold_url,
        endpoint_url=config.s3_endpoint,
        region=config.get("remote.log.s3.region") or None,
        path_style=_path_style(config),
    )


def build_remote_log_manager(
    config: BrokerConfig,
    registry: CollectorRegistry | None = None,
    topic_ids: Callable[[str], str | None] | None = None,
) -> BrokerRemoteLogManager | None:
    """The manager for this broker's configs, None when tiering is off (nothing started).
    ``topic_ids`` gives a live topic's id (the coordinator's); the journal of pending topic
    deletions is ``<data_dir>/remote-log-deletions.json``."""
    if not tiered_storage_enabled(config) or config.cold_url is None:
        return None
    url = parse_store_url(config.cold_url)  # ValueError on a bad URL: fail the start
    interval_s = max(config.get_int("remote.log.manager.task.interval.ms"), 10) / 1000
    return BrokerRemoteLogManager(
        open_store(config),
        url.prefix,
        config.data_dir / CACHE_DIR_NAME,
        config.get_int("remote.log.reader.cache.bytes"),
        chunk_size=config.get_int("remote.log.reader.chunk.bytes"),
        read_ahead_chunks=config.get_int("remote.log.reader.read.ahead.chunks"),
        fetch_max_bytes=config.get_int("remote.log.reader.fetch.max.bytes"),
        fetch_max_wait_s=config.get_int("remote.fetch.max.wait.ms") / 1000,
        list_offsets_timeout_s=config.get_int("remote.list.offsets.request.timeout.ms") / 1000,
        index_cache_bytes=config.get_int("remote.log.index.file.cache.total.size.bytes"),
        upload_rate_bytes=config.get_int("remote.log.manager.copy.max.bytes.per.second"),
        fetch_rate_bytes=config.get_int("remote.log.manager.fetch.max.bytes.per.second"),
        settings=UploaderSettings(
            check_interval_s=interval_s,
            retry_initial_s=config.get_int("remote.log.manager.task.retry.backoff.ms", 500) / 1000,
            retry_max_s=config.get_int("remote.log.manager.task.retry.backoff.max.ms", 30000)
            / 1000,
        ),
        registry=registry,
        topic_ids=topic_ids,
        deletion_journal=config.data_dir / JOURNAL_NAME,
    )


# longest wait of the start's probe of the bucket (module docstring)
START_PROBE_TIMEOUT_S = 10.0


async def check_store(
    store: ObjectStore, prefix: str, url: str, timeout_s: float = START_PROBE_TIMEOUT_S
) -> None:
    """One LIST; raises RemoteTierError when the server answers with a refusal within
    ``timeout_s`` (no answer by then: unreachable)."""
    try:
        async with asyncio.timeout(timeout_s):
            await store.list(layout.topic_prefix(prefix, "__tiered_mq_probe__"))
    except TimeoutError:
        log.warning(
            "cold tier %s unreachable at start (uploads will retry): no answer in %.0f s",
            url,
            timeout_s,
        )
    except ObjectStoreError as e:
        if isinstance(e.__cause__, ClientError):
            raise RemoteTierError(f"cold tier {url}: {e.reason}") from e
        log.warning("cold tier %s unreachable at start (uploads will retry): %s", url, e.reason)


async def start_remote_tier(
    config: BrokerConfig,
    registry: CollectorRegistry | None = None,
    topic_ids: Callable[[str], str | None] | None = None,
) -> BrokerRemoteLogManager | None:
    # in a worker thread: a file:// store's opening walks the whole bucket directory for
    # crashed puts' temporary files, and the chunk cache's empties its directory
    rlm = await asyncio.to_thread(build_remote_log_manager, config, registry, topic_ids)
    if rlm is None:
        log.info("tiered storage off (remote.log.storage.system.enable=false or no cold URL)")
        return None
    try:
        await check_store(rlm.store, rlm.prefix, str(config.cold_url))
    except BaseException:
        await rlm.store.close()
        raise
    await rlm.start()
    log.info("tiered storage on: %s", config.cold_url)
    return rlm


async def stop_remote_tier(rlm: RemoteLogManager | None) -> None:
    if rlm is None:
        return
    try:
        await rlm.close()
    finally:
        await rlm.store.close()
