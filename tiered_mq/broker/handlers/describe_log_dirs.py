"""DescribeLogDirs (35), v1-4: how many bytes each partition this broker hosts takes on disk.

The broker has one log dir, its data dir (``log.dirs``), reported by its absolute path. For
every requested partition it hosts (null ``topics``: all of them, internal topics included)
the answer gives ``partition_size``, the bytes of the local segments' .log files (for a tiered
topic too: what lives in the bucket is not counted, as in Kafka), ``offset_lag`` as Kafka
defines it for a current log, max(high watermark - log end offset, 0) (0 on a leader), and
``is_future_key`` false (there is no AlterReplicaLogDirs). Partitions the broker does not host
are left out, as are topics left with none. v4 adds the volume's ``total_bytes`` and
``usable_bytes`` (``shutil.disk_usage``; usable is what an unprivileged writer may use).
A log dir that cannot be read answers KAFKA_STORAGE_ERROR in its result.

Needs DESCRIBE on the cluster; without it the answer has no results and, from v3, the
top-level error CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code
from tiered_mq.errors import ClusterAuthorizationFailedError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.DESCRIBE_LOG_DIRS


def _requested(ctx: RequestContext, topics: list[dict[str, Any]] | None) -> list[TopicPartition]:
    """The requested partitions this broker hosts, sorted."""
    hosted = ctx.broker.replica_manager.partitions
    if topics is None:
        return sorted(hosted)
    wanted = {TopicPartition(t["topic"], p) for t in topics for p in t["partitions"]}
    return sorted(tp for tp in wanted if tp in hosted)


def _topics(ctx: RequestContext, tps: list[TopicPartition]) -> list[dict[str, Any]]:
    hosted = ctx.broker.replica_manager.partitions
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for tp in tps:
        partition = hosted[tp]
        lag = max(partition.high_watermark - partition.log_end_offset, 0)
        by_topic.setdefault(tp.topic, []).append(
            {
                "partition_index": tp.partition,
                "partition_size": partition.log.size_bytes(),
                "offset_lag": lag,
                "is_future_key": False,
            }
        )
    return [{"name": name, "partitions": parts} for name, parts in by_topic.items()]


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        code = ClusterAuthorizationFailedError.errno
        return {"throttle_time_ms": 0, "error_code": code, "results": []}
    log_dir = ctx.broker.config.data_dir.absolute()
    result: dict[str, Any] = {"error_code": 0, "log_dir": str(log_dir), "topics": []}
    try:
        usage = await asyncio.to_thread(shutil.disk_usage, log_dir)
        result["total_bytes"], result["usable_bytes"] = usage.total, usage.free
        result["topics"] = _topics(ctx, _requested(ctx, request.get("topics")))
    except Exception as e:
        result["error_code"] = error_code(e)
    return {"throttle_time_ms": 0, "error_code": 0, "results": [result]}
