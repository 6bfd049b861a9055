"""Produce, Fetch, ListOffsets and idempotence through an in-process broker."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client, start_broker
from tiered_mq.broker.broker import Broker
from tiered_mq.record.records import decode_batches, encode_batch

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3


def produce_body(topic: str, records: bytes, acks: int = -1, partition: int = 0) -> dict:  # type: ignore[type-arg]
    return {
        "acks": acks,
        "timeout_ms": 5000,
        "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": records}]}
        ],
    }


def part(response: dict, key: str = "responses", parts: str = "partition_responses") -> dict:  # type: ignore[type-arg]
    return response[key][0][parts][0]  # type: ignore[no-any-return]


def batch(values: list[bytes], **kw: int) -> bytes:
    return encode_batch([(b"k", v, [], 1_000 + i) for i, v in enumerate(values)], **kw)


async def create(client: Client, topic: str) -> None:
    r = await client.call(
        19,
        4,
        {
            "topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": 5000,
        },
    )
    assert r["topics"][0]["error_code"] == 0


async def test_produce_then_fetch_round_trip(client: Client) -> None:
    await create(client, "t")
    r = await client.call(PRODUCE, 8, produce_body("t", batch([b"a", b"b", b"c"])))
    p = part(r)
    assert p["error_code"] == 0 and p["base_offset"] == 0
    r = await client.call(PRODUCE, 8, produce_body("t", batch([b"d"])))
    assert part(r)["base_offset"] == 3

    f = await client.call(FETCH, 11, fetch_body("t", 0))
    fp = part(f, "responses", "partitions")
    assert fp["error_code"] == 0
    assert fp["high_watermark"] == 4 and fp["last_stable_offset"] == 4
    assert fp["log_start_offset"] == 0 and fp["preferred_read_replica"] == -1
    assert f["session_id"] == 0
    values = [(r.offset, r.value) for _, rs in decode_batches(fp["records"]) for r in rs]
    assert values == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d")]

    f = await client.call(FETCH, 11, fetch_body("t", 3))
    fp = part(f, "responses", "partitions")
    offsets = [r.offset for _, rs in decode_batches(fp["records"]) for r in rs]
    assert 3 in offsets and max(offsets) == 3


async def test_fetch_out_of_range_and_unknown_partition(client: Client) -> None:
    await create(client, "t")
    await client.call(PRODUCE, 8, produce_body("t", batch([b"a"])))
    fp = part(await client.call(FETCH, 11, fetch_body("t", 5)), "responses", "partitions")
    assert fp["error_code"] == 1 and fp["high_watermark"] == -1  # Kafka's error offsets
    fp = part(await client.call(FETCH, 11, fetch_body("nope", 0)), "responses", "partitions")
    assert fp["error_code"] == 3


async def test_corrupt_batch_is_refused_and_nothing_appended(client: Client) -> None:
    await create(client, "t")
    bad = bytearray(batch([b"a", b"b"]))
    bad[-1] ^= 0xFF
    p = part(await client.call(PRODUCE, 8, produce_body("t", bytes(bad))))
    assert p["error_code"] == 2
    fp = part(await client.call(FETCH, 11, fetch_body("t", 0)), "responses", "partitions")
    assert fp["high_watermark"] == 0


async def test_zstd_needs_produce_v7_and_old_versions_refused(client: Client) -> None:
    await create(client, "t")
    z = batch([b"a"], compression=4)
    assert part(await client.call(PRODUCE, 6, produce_body("t", z)))["error_code"] == 76
    assert part(await client.call(PRODUCE, 7, produce_body("t", z)))["error_code"] == 0
    assert part(await client.call(PRODUCE, 2, produce_body("t", batch([b"x"]))))["error_code"] == 35


async def test_batch_above_max_message_bytes(client: Client) -> None:
    r = await client.call(
        19,
        4,
        {
            "topics": [
                {
                    "name": "small",
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": "max.message.bytes", "value": "200"}],
                }
            ]
        },
    )
    assert r["topics"][0]["error_code"] == 0
    p = part(await client.call(PRODUCE, 8, produce_body("small", batch([b"x" * 500]))))
    assert p["error_code"] == 10


async def test_acks_zero_sends_no_response(client: Client) -> None:
    await create(client, "t")
    await client.send(PRODUCE, 8, produce_body("t", batch([b"a"]), acks=0))
    corr = await client.send(METADATA, 8, {"topics": None})
    got, _ = await client.receive(METADATA, 8)
    assert got == corr  # the first answer on the connection is the metadata one


async def test_acks_zero_error_closes_the_connection(client: Client) -> None:
    """acks=0 has no answer to carry an error: Kafka closes the connection, so the producer
    notices (and refreshes its metadata) instead of sending into the void."""
    await create(client, "t")
    await client.send(PRODUCE, 8, produce_body("t", batch([b"a"]), acks=0, partition=7))
    await client.send(METADATA, 8, {"topics": None})
    assert await asyncio.wait_for(client.reader.read(), 10) == b""  # closed, nothing answered


async def test_retried_idempotent_batch_is_not_duplicated(client: Client) -> None:
    await create(client, "t")
    b0 = batch([b"a", b"b"], producer_id=5, producer_epoch=0, base_sequence=0)
    first = part(await client.call(PRODUCE, 8, produce_body("t", b0)))
    again = part(await client.call(PRODUCE, 8, produce_body("t", b0)))
    assert first["error_code"] == again["error_code"] == 0
    assert first["base_offset"] == again["base_offset"] == 0
    gap = batch([b"c"], producer_id=5, producer_epoch=0, base_sequence=7)
    assert part(await client.call(PRODUCE, 8, produce_body("t", gap)))["error_code"] == 45
    fp = part(await client.call(FETCH, 11, fetch_body("t", 0)), "responses", "partitions")
    assert fp["high_watermark"] == 2


async def test_retried_batch_answers_its_log_append_time(client: Client) -> None:
    """A duplicate on a LogAppendTime topic answers the time the original was appended (Kafka:
    ``setLogAppendTime(duplicate.timestamp)``), so the client reports the broker's time."""
    r = await client.call(
        19,
        4,
        {
            "topics": [
                {
                    "name": "lat",
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": "message.timestamp.type", "value": "LogAppendTime"}],
                }
            ],
            "timeout_ms": 5000,
        },
    )
    assert r["topics"][0]["error_code"] == 0
    b0 = batch([b"a", b"b"], producer_id=5, producer_epoch=0, base_sequence=0)
    first = part(await client.call(PRODUCE, 8, produce_body("lat", b0)))
    await asyncio.sleep(0.01)
    again = part(await client.call(PRODUCE, 8, produce_body("lat", b0)))
    assert first["log_append_time_ms"] > 1_000_000  # the broker's clock, not the records' 1000
    assert (again["base_offset"], again["log_append_time_ms"]) == (0, first["log_append_time_ms"])


async def test_duplicate_detected_after_restart(tmp_path: Path) -> None:
    broker = await start_broker(tmp_path / "d")
    c = await Client.connect(broker.port)
    await create(c, "t")
    # dated now: a producer whose last batch is older than producer.id.expiration.ms (1 day)
    # is forgotten when the partition opens, as Kafka's snapshot load does
    now = int(time.time() * 1000)
    b0 = encode_batch([(b"k", b"a", [], now)], producer_id=5, producer_epoch=0, base_sequence=0)
    await c.call(PRODUCE, 8, produce_body("t", batch([b"plain"])))
    assert part(await c.call(PRODUCE, 8, produce_body("t", b0)))["base_offset"] == 1
    await c.close()
    await broker.close()

    broker = await start_broker(tmp_path / "d")
    try:
        c = await Client.connect(broker.port)
        assert part(await c.call(PRODUCE, 8, produce_body("t", b0)))["base_offset"] == 1
        fp = part(await c.call(FETCH, 11, fetch_body("t", 0)), "responses", "partitions")
        assert fp["high_watermark"] == 2
        await c.close()
    finally:
        await broker.close()


async def test_long_poll_wakes_on_append(broker: Broker, client: Client) -> None:
    await create(client, "t")
    started = time.monotonic()
    fetch = asyncio.ensure_future(client.call(FETCH, 11, fetch_body("t", 0, 5000, 1)))
    await asyncio.sleep(0.2)
    assert not fetch.done()
    other = await Client.connect(broker.port)
    await other.call(PRODUCE, 8, produce_body("t", batch([b"late"])))
    fp = part(await fetch, "responses", "partitions")
    assert time.monotonic() - started < 3
    assert [r.value for _, rs in decode_batches(fp["records"]) for r in rs] == [b"late"]
    await other.close()


async def test_long_poll_times_out_empty(client: Client) -> None:
    await create(client, "t")
    started = time.monotonic()
    fp = part(await client.call(FETCH, 11, fetch_body("t", 0, 300, 1)), "responses", "partitions")
    elapsed = time.monotonic() - started
    assert 0.25 < elapsed < 3
    assert fp["error_code"] == 0 and fp["records"] in (b"", None)


async def test_list_offsets_earliest_latest_and_by_time(client: Client) -> None:
    await create(client, "t")
    for i in range(3):
        b = encode_batch([(b"k", b"v", [], 10_000 * (i + 1))])
        await client.call(PRODUCE, 8, produce_body("t", b))

    async def lookup(ts: int) -> tuple[int, int]:
        r = await client.call(
            LIST_OFFSETS,
            5,
            {
                "replica_id": -1,
                "isolation_level": 0,
                "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": ts}]}],
            },
        )
        p = r["topics"][0]["partitions"][0]
        assert p["error_code"] == 0
        return p["offset"], p["timestamp"]

    assert (await lookup(-2))[0] == 0
    assert (await lookup(-1))[0] == 3
    assert await lookup(15_000) == (1, 20_000)
    assert await lookup(30_000) == (2, 30_000)
    assert await lookup(99_000) == (-1, -1)


async def test_large_fetch_is_byte_exact(client: Client) -> None:
    """Megabytes of batches go out through sendfile (and the pread fallback) intact."""
    await create(client, "big")
    expected = []
    for b in range(12):
        values = [bytes([b, i % 256]) * 2000 for i in range(100)]  # ~400 KB per batch
        expected.extend(values)
        r = await client.call(PRODUCE, 8, produce_body("big", batch(values)))
        assert part(r)["error_code"] == 0
    body = fetch_body("big", 0)
    body["max_bytes"] = 64 << 20
    body["topics"][0]["partitions"][0]["partition_max_bytes"] = 64 << 20
    fp = part(await client.call(FETCH, 11, body), "responses", "partitions")
    got = [r.value for _, rs in decode_batches(fp["records"]) for r in rs]
    assert len(fp["records"]) > 4_000_000
    assert got == expected


async def test_delete_records_moves_log_start_offset(client: Client) -> None:
    await create(client, "trim")
    for i in range(4):
        await client.call(PRODUCE, 8, produce_body("trim", batch([f"v{i}".encode()])))
    r = await client.call(
        21,
        1,
        {
            "topics": [{"name": "trim", "partitions": [{"partition_index": 0, "offset": 2}]}],
            "timeout_ms": 1000,
        },
    )
    p = r["topics"][0]["partitions"][0]
    assert (p["error_code"], p["low_watermark"]) == (0, 2)
    fp = part(await client.call(FETCH, 11, fetch_body("trim", 0)), "responses", "partitions")
    assert fp["error_code"] == 1 and fp["log_start_offset"] == -1  # Kafka's error offsets
    fp = part(await client.call(FETCH, 11, fetch_body("trim", 2)), "responses", "partitions")
    assert [r.value for _, rs in decode_batches(fp["records"]) for r in rs] == [b"v2", b"v3"]


async def test_delete_records_needs_the_delete_cleanup_policy(client: Client) -> None:
    """cleanup.policy=compact alone: POLICY_VIOLATION and nothing deleted (Kafka's
    Partition.deleteRecordsOnLeader); compact,delete: deleted."""
    for topic, policy, expected in [
        ("compacted", "compact", (44, -1, 0)),
        ("compacted-and-deleted", "compact,delete", (0, 2, 2)),
    ]:
        r = await client.call(
            19,
            4,
            {
                "topics": [
                    {
                        "name": topic,
                        "num_partitions": 1,
                        "replication_factor": 1,
                        "configs": [{"name": "cleanup.policy", "value": policy}],
                    }
                ],
                "timeout_ms": 5000,
            },
        )
        assert r["topics"][0]["error_code"] == 0
        await client.call(PRODUCE, 8, produce_body(topic, batch([b"v0", b"v1", b"v2", b"v3"])))
        request = {"name": topic, "partitions": [{"partition_index": 0, "offset": 2}]}
        r = await client.call(21, 1, {"topics": [request], "timeout_ms": 1000})
        p = r["topics"][0]["partitions"][0]
        fp = part(await client.call(FETCH, 11, fetch_body(topic, 2)), "responses", "partitions")
        assert (p["error_code"], p["low_watermark"], fp["log_start_offset"]) == expected


async def test_delete_records_refuses_internal_topics(client: Client) -> None:
    """Kafka's ReplicaManager: INVALID_TOPIC_EXCEPTION for an internal topic, nothing deleted."""
    commit = {
        "group_id": "g",
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
    }
    await client.call(
        8, 2, {**commit, "generation_id": -1, "member_id": "", "retention_time_ms": -1}
    )
    request = {"name": "__consumer_offsets", "partitions": [{"partition_index": 0, "offset": -1}]}
    r = await client.call(21, 1, {"topics": [request], "timeout_ms": 1000})
    p = r["topics"][0]["partitions"][0]
    assert (p["error_code"], p["low_watermark"]) == (17, -1)


async def test_acks_all_needs_min_insync_replicas(tmp_path: Path) -> None:
    """acks=-1 needs min.insync.replicas in-sync replicas, at most as many as the partition has
    (Kafka 3.7+'s effectiveMinIsr): a partition of replicas [0, 1] whose ISR is [0] (the state
    written into cluster.json between two starts) refuses it, NOT_ENOUGH_REPLICAS; acks=1 is
    taken."""
    data = tmp_path / "data"
    broker = await start_broker(data)
    client = await Client.connect(broker.port)
    r = await client.call(
        19,
        4,
        {
            "topics": [
                {
                    "name": "isr",
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": "min.insync.replicas", "value": "2"}],
                }
            ]
        },
    )
    assert r["topics"][0]["error_code"] == 0
    await client.close()
    await broker.close()
    cluster = data / "cluster.json"
    state = json.loads(cluster.read_text())
    state["partitions"]["isr-0"] = {"leader": 0, "leader_epoch": 0, "isr": [0], "replicas": [0, 1]}
    cluster.write_text(json.dumps(state))
    broker = await start_broker(data)
    client = await Client.connect(broker.port)
    try:
        r = await client.call(PRODUCE, 8, produce_body("isr", batch([b"a"])))
        assert part(r)["error_code"] == 19
        r = await client.call(PRODUCE, 8, produce_body("isr", batch([b"a"]), acks=1))
        assert part(r)["error_code"] == 0
    finally:
        await client.close()
        await broker.close()


async def test_topic_compression_type_recompresses(client: Client) -> None:
    r = await client.call(
        19,
        4,
        {
            "topics": [
                {
                    "name": "zt",
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": "compression.type", "value": "zstd"}],
                }
            ]
        },
    )
    assert r["topics"][0]["error_code"] == 0
    gz = encode_batch(
        [(b"k", f"v{i}".encode(), [("h", b"x")], 5_000 + i) for i in range(50)],
        compression=1,
        producer_id=3,
        producer_epoch=0,
        base_sequence=0,
    )
    assert part(await client.call(PRODUCE, 8, produce_body("zt", gz)))["base_offset"] == 0
    fp = part(await client.call(FETCH, 11, fetch_body("zt", 0)), "responses", "partitions")
    [(header, records)] = list(decode_batches(fp["records"]))
    assert header.compression == 4 and header.producer_id == 3 and header.base_sequence == 0
    assert [(r.offset, r.value, r.timestamp, r.headers) for r in records] == [
        (i, f"v{i}".encode(), 5_000 + i, [("h", b"x")]) for i in range(50)
    ]
    # the retried batch is still recognised as a duplicate after re-encoding
    assert part(await client.call(PRODUCE, 8, produce_body("zt", gz)))["base_offset"] == 0


async def test_topic_compression_level_is_used_when_the_broker_re_encodes(client: Client) -> None:
    """compression.<codec>.level (Kafka 3.8, KIP-390) sets how hard the broker compresses the
    batches it re-encodes: a higher level stores the same records in fewer bytes."""
    words = [b"alpha", b"bravo", b"charlie", b"delta", b"echo", b"foxtrot", b"golf"]
    values = [b" ".join(words[(i * 7 + j * 3) % 7] for j in range(i % 40)) for i in range(400)]
    stored: dict[tuple[str, str], tuple[int, list[bytes | None]]] = {}
    for codec, levels in (("gzip", ("1", "9")), ("zstd", ("1", "19")), ("lz4", ("9", "12"))):
        for level in levels:
            topic = f"{codec}-{level}"
            configs = {"compression.type": codec, f"compression.{codec}.level": level}
            r = await client.call(
                19,
                4,
                {
                    "topics": [
                        {
                            "name": topic,
                            "num_partitions": 1,
                            "replication_factor": 1,
                            "configs": [{"name": k, "value": v} for k, v in configs.items()],
                        }
                    ]
                },
            )
            assert r["topics"][0]["error_code"] == 0, r
            sent = part(await client.call(PRODUCE, 8, produce_body(topic, batch(values))))
            assert sent["error_code"] == 0
            fp = part(await client.call(FETCH, 11, fetch_body(topic, 0)), "responses", "partitions")
            [(header, records)] = list(decode_batches(fp["records"]))
            stored[codec, level] = (header.size, [r.value for r in records])
    for codec, (low, high) in (("gzip", ("1", "9")), ("zstd", ("1", "19")), ("lz4", ("9", "12"))):
        assert stored[codec, high][1] == stored[codec, low][1] == values
        assert stored[codec, high][0] < stored[codec, low][0], (codec, stored)
