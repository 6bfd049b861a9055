"""Fetch under an authorizer: every partition of a topic the principal may not READ answers
TOPIC_AUTHORIZATION_FAILED with no records and offsets -1, the other topics of the request are
read, and each topic name is authorized once per read, not once per partition (Kafka's
``filterByAuthorized`` asks the authorizer about each distinct topic name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import STANDARD_AUTHORIZER, serving
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, produce_body
from tiered_mq.broker.acl.authorizer import ANONYMOUS
from tiered_mq.broker.acl.binding import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.errors import TopicAuthorizationFailedError
from tiered_mq.record.records import decode_batches

PARTITIONS = 4


def _fetch(topics: list[str]) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "topics": [
            {
                "topic": t,
                "partitions": [
                    {"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                    for p in range(PARTITIONS)
                ],
            }
            for t in topics
        ],
    }


async def test_a_topic_without_read_answers_every_partition_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    acls = {"authorizer.class.name": STANDARD_AUTHORIZER}
    async with serving(tmp_path / "data", **acls) as (broker, client):
        for topic in ("open", "secret"):
            await broker.topic_registry.create_topic(topic, PARTITIONS, {})
        authorizer = broker.authorizer
        assert authorizer is not None
        pattern = ResourcePattern(ResourceType.TOPIC, "open", PatternType.LITERAL)
        for op in (AclOperation.READ, AclOperation.WRITE):
            grant = AclBinding(pattern, ANONYMOUS, "*", op, AclPermissionType.ALLOW)
            assert await authorizer.create([grant]) == [None]
        for p in range(PARTITIONS):
            r = await client.call(PRODUCE, 8, produce_body("open", batch([b"x"]), partition=p))
            assert r["responses"][0]["partition_responses"][0]["error_code"] == 0

        asked: list[tuple[AclOperation, str]] = []
        authorize = authorizer.authorize

        def counting(
            principal: str, host: str, op: AclOperation, kind: ResourceType, name: str
        ) -> bool:
            if kind == ResourceType.TOPIC:
                asked.append((op, name))
            return authorize(principal, host, op, kind, name)

        monkeypatch.setattr(authorizer, "authorize", counting)
        r = await client.call(FETCH, 11, _fetch(["secret", "open"]))
        secret, open_ = r["responses"]
        assert [p["error_code"] for p in secret["partitions"]] == [
            TopicAuthorizationFailedError.errno
        ] * PARTITIONS
        for p in secret["partitions"]:
            assert p["high_watermark"] == -1 and p["log_start_offset"] == -1
            assert not p["records"]
        for p in open_["partitions"]:
            assert p["error_code"] == 0 and p["high_watermark"] == 1
            [(_, records)] = decode_batches(p["records"])
            assert [rec.value for rec in records] == [b"x"]
        assert asked == [(AclOperation.READ, "secret"), (AclOperation.READ, "open")]
