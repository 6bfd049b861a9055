"""Broker metrics: counted per API and served over HTTP."""

from __future__ import annotations

import asyncio
import socket
import struct
import urllib.request

from tests.unit.broker.conftest import Client
from tests.unit.broker.test_produce_fetch import batch, create, produce_body
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.metrics import BrokerMetrics
from tiered_mq.errors import UnsupportedVersionError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _scrape(metrics: BrokerMetrics) -> str:
    port = metrics.serve("127.0.0.1", _free_port())
    assert port is not None
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    finally:
        metrics.close()
    return str(text.decode())


async def test_requests_are_counted_and_served(broker: Broker, client: Client) -> None:
    await client.call(3, 8, {"topics": [{"name": "m"}], "allow_auto_topic_creation": True})
    await client.call(3, 8, {"topics": None})
    body = await _scrape(broker.metrics)
    assert 'tiered_mq_requests_total{api="metadata"} 2.0' in body
    assert "tiered_mq_request_latency_seconds_bucket" in body
    assert "tiered_mq_connections 1.0" in body
    assert 'tiered_mq_partition_high_watermark{partition="0",topic="m"} 0.0' in body


async def test_consumer_group_offset_and_lag_are_exported(broker: Broker, client: Client) -> None:
    await create(client, "lagging")
    for values in ([b"a", b"b", b"c"], [b"d", b"e"]):
        r = await client.call(0, 8, produce_body("lagging", batch(values)))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
    commit = {
        "group_id": "readers",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": "lagging",
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": 2,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                ],
            }
        ],
    }
    r = await client.call(8, 7, commit)
    assert r["topics"][0]["partitions"][0]["error_code"] == 0

    body = await _scrape(broker.metrics)
    labels = '{group="readers",partition="0",topic="lagging"}'
    assert f"tiered_mq_consumer_group_offset{labels} 2.0" in body
    assert f"tiered_mq_consumer_group_lag{labels} 3.0" in body  # high watermark 5 - 2

    await client.call(0, 8, produce_body("lagging", batch([b"f"])))
    assert f"tiered_mq_consumer_group_lag{labels} 4.0" in await _scrape(broker.metrics)


def test_port_zero_means_off() -> None:
    assert BrokerMetrics().serve("127.0.0.1", 0) is None


async def test_a_failed_acks_0_produce_counts_its_error_codes(
    broker: Broker, client: Client
) -> None:
    """No response carries them, but Kafka counts them as it closes the connection."""
    await create(client, "quiet")
    await client.send(0, 8, produce_body("quiet", batch([b"a"]), acks=0))  # no answer
    await client.send(0, 8, produce_body("missing", batch([b"b"]), acks=0))
    assert await client.reader.read() == b""  # the failure closed the connection
    body = await _scrape(broker.metrics)
    assert (
        'tiered_mq_response_errors_total{api="produce",error="UNKNOWN_TOPIC_OR_PARTITION"} 1.0'
        in body
    )
    assert 'api="produce",error="NONE"' not in body  # an acks=0 success has no response
    assert 'tiered_mq_topic_messages_in_total{topic="quiet"} 1.0' in body


async def test_partitions_the_broker_cannot_open_are_offline(
    broker: Broker, client: Client
) -> None:
    """A topic whose logs fail to open (a file where a partition directory goes) is in the
    metadata but served by no one: Kafka's OfflinePartitionsCount."""
    await create(client, "fine")
    before = await _scrape(broker.metrics)
    assert "tiered_mq_offline_partitions 0.0" in before
    (broker.config.data_dir / "blocked-1").write_text("not a directory")
    r = await client.call(
        19,
        4,
        {
            "topics": [{"name": "blocked", "num_partitions": 2, "replication_factor": 1}],
            "timeout_ms": 5000,
        },
    )
    assert r["topics"][0]["error_code"] == 0  # created, blocked-1 offline (as Kafka answers)
    body = await _scrape(broker.metrics)
    assert "tiered_mq_offline_partitions 1.0" in body  # blocked-0 opened and is served
    hosted = _sample(before, "tiered_mq_partitions")
    assert _sample(body, "tiered_mq_partitions") == hosted + 1
    assert _sample(body, "tiered_mq_global_partitions") == hosted + 2


def _sample(body: str, name: str) -> float:
    (line,) = [line for line in body.splitlines() if line.startswith(name + " ")]
    return float(line.split()[1])


async def test_an_api_versions_of_an_unknown_version_counts_unsupported_version(
    broker: Broker, client: Client
) -> None:
    """As librdkafka's first ApiVersions of a version newer than the broker's: answered v0
    UNSUPPORTED_VERSION, counted as Kafka counts it."""
    client_id = b"future"
    header = struct.pack(">hhih", 18, 99, 7, len(client_id)) + client_id + b"\x00"
    client.writer.write(struct.pack(">i", len(header)) + header)
    (size,) = struct.unpack(">i", await client.reader.readexactly(4))
    payload = await client.reader.readexactly(size)
    assert struct.unpack_from(">ih", payload) == (7, UnsupportedVersionError.errno)
    body = await _scrape(broker.metrics)
    assert (
        'tiered_mq_response_errors_total{api="api_versions",error="UNSUPPORTED_VERSION"} 1.0'
        in body
    )
    assert 'tiered_mq_requests_total{api="api_versions"} 1.0' in body
