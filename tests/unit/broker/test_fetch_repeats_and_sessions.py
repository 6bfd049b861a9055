"""Fetch requests Kafka answers in a particular way: a partition named twice is read and answered
once, at its first place, from the position of its last mention (Kafka keeps the request's
partitions in a LinkedHashMap); an incremental fetch for a session the broker does not have (it
never creates one) answers FETCH_SESSION_ID_NOT_FOUND and no partitions."""

from __future__ import annotations

from typing import Any

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import FETCH, PRODUCE, batch, create, produce_body
from tiered_mq.errors import FetchSessionIdNotFoundError
from tiered_mq.record.records import decode_batches


def _partition(partition: int, offset: int) -> dict[str, Any]:
    return {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20}


def _fetch(topics: list[tuple[str, list[dict[str, Any]]]], **fields: int) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics],
        **fields,
    }


def _offsets(p: dict[str, Any]) -> list[int]:
    return [r.offset for _, rs in decode_batches(p["records"]) for r in rs]


async def test_a_partition_named_twice_is_answered_once(client: Client) -> None:
    await create(client, "a")
    await create(client, "b")
    for topic in ("a", "b"):
        r = await client.call(PRODUCE, 8, produce_body(topic, batch([b"1", b"2"])))
        r = await client.call(PRODUCE, 8, produce_body(topic, batch([b"3"])))
        assert r["responses"][0]["partition_responses"][0]["base_offset"] == 2
    for version in (4, 11):
        body = _fetch(
            [
                ("a", [_partition(0, 0)]),
                ("b", [_partition(0, 0)]),
                ("a", [_partition(0, 2)]),  # a again, further on
            ]
        )
        r = await client.call(FETCH, version, body)
        answered = [
            (t["topic"], [p["partition_index"] for p in t["partitions"]]) for t in r["responses"]
        ]
        assert answered == [("a", [0]), ("b", [0])], f"v{version}"
        a, b = (t["partitions"][0] for t in r["responses"])
        assert _offsets(a) == [2] and _offsets(b) == [0, 1, 2]


async def test_an_incremental_fetch_finds_no_session(client: Client) -> None:
    await create(client, "s")
    await client.call(PRODUCE, 8, produce_body("s", batch([b"x"])))
    topics = [("s", [_partition(0, 0)])]
    for session_id, epoch in ((7, 1), (0, 5), (123, -2)):
        body = _fetch(topics, session_id=session_id, session_epoch=epoch)
        r = await client.call(FETCH, 11, body)
        assert (r["error_code"], r["session_id"], r["responses"]) == (
            FetchSessionIdNotFoundError.errno,
            0,
            [],
        ), (session_id, epoch)
    for session_id, epoch in ((0, -1), (0, 0), (9, -1), (9, 0)):  # full fetches: served
        body = _fetch(topics, session_id=session_id, session_epoch=epoch)
        r = await client.call(FETCH, 11, body)
        assert (r["error_code"], r["session_id"]) == (0, 0)
        assert _offsets(r["responses"][0]["partitions"][0]) == [0]
