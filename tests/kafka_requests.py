"""Request bodies that unit and integration tests send with the project's codec."""

from __future__ import annotations

from typing import Any


def fetch_body(
    topic: str,
    offset: int,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    *,
    partition: int = 0,
    max_bytes: int = 1 << 20,
) -> dict[str, Any]:
    """A Fetch (v4-11) body for one partition of ``topic`` from ``offset``."""
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": partition,
                        "fetch_offset": offset,
                        "partition_max_bytes": max_bytes,
                    }
                ],
            }
        ],
    }
