"""ListOffsets naming a partition more than once answers INVALID_REQUEST at each place it is
named (offset and timestamp -1), as Kafka's ``duplicatePartitions`` check does; the request's
other partitions are answered as usual."""

from __future__ import annotations

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import PRODUCE, batch, produce_body
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey

INVALID_REQUEST = InvalidRequestError.errno
LATEST, EARLIEST = -1, -2


def _partitions(*asked: tuple[int, int]) -> list[dict[str, int]]:
    return [{"partition_index": p, "timestamp": ts, "current_leader_epoch": -1} for p, ts in asked]


async def test_a_partition_named_twice_is_refused_at_each_place(client: Client) -> None:
    created = await client.call(
        ApiKey.CREATE_TOPICS,
        4,
        {
            "topics": [{"name": "lo", "num_partitions": 3, "replication_factor": 1}],
            "timeout_ms": 5000,
        },
    )
    assert created["topics"][0]["error_code"] == 0
    for p in range(3):
        r = await client.call(PRODUCE, 8, produce_body("lo", batch([b"a", b"b"]), partition=p))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0

    for version in (1, 5, 7):
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {"name": "lo", "partitions": _partitions((0, LATEST), (0, EARLIEST), (1, LATEST))},
                {"name": "lo", "partitions": _partitions((2, LATEST), (1, EARLIEST))},
            ],
        }
        response = await client.call(ApiKey.LIST_OFFSETS, version, body)
        answered = [
            (p["partition_index"], p["error_code"], p["offset"], p["timestamp"])
            for t in response["topics"]
            for p in t["partitions"]
        ]
        assert answered == [
            (0, INVALID_REQUEST, -1, -1),
            (0, INVALID_REQUEST, -1, -1),
            (1, INVALID_REQUEST, -1, -1),
            (2, 0, 2, -1),
            (1, INVALID_REQUEST, -1, -1),
        ], f"v{version}"
        if version >= 4:
            epochs = [p["leader_epoch"] for t in response["topics"] for p in t["partitions"]]
            assert epochs == [-1, -1, -1, 0, -1]
