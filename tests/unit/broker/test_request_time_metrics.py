"""Request times as Kafka's RequestMetrics count them: ``tiered_mq_request_latency_seconds``
(TotalTimeMs) runs from the request's frame being read to its response taken by the socket,
so it includes the time the request waited behind its connection's earlier requests
(``tiered_mq_request_queue_time_seconds``, RequestQueueTimeMs) and the response's send to a
slow reader (``tiered_mq_response_send_time_seconds``, ResponseSendTimeMs). Before, it timed
the handler alone."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from prometheus_client import generate_latest

from tests.kafka_requests import fetch_body
from tests.unit.broker.conftest import Client, serving
from tests.unit.broker.test_produce_fetch import batch, create, produce_body
from tiered_mq.broker.broker import Broker

FETCH, PRODUCE, API_VERSIONS = 1, 0, 18
API_VERSIONS_BODY = {"client_software_name": "unit", "client_software_version": "1"}


def samples(broker: Broker) -> dict[str, float]:
    """The broker's Prometheus samples, by name with labels, as its /metrics serves them."""
    text = generate_latest(broker.metrics.registry).decode()
    pairs = (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))
    return {name: float(value) for name, _, value in pairs if name}


def times(broker: Broker, api: str) -> dict[str, tuple[float, float]]:
    """(count, sum in seconds) of each request-time histogram of ``api``."""
    got = samples(broker)
    out = {}
    for which in ("request_latency", "request_queue_time", "response_send_time"):
        prefix = f"tiered_mq_{which}_seconds"
        label = f'{{api="{api}"}}'
        out[which] = (got[f"{prefix}_count{label}"], got[f"{prefix}_sum{label}"])
    return out


async def test_a_request_queued_behind_a_long_poll_counts_its_wait(
    broker: Broker, client: Client
) -> None:
    """A Fetch that long-polls an empty partition for 0.6 s, and an ApiVersions pipelined
    behind it on the same connection: the ApiVersions is answered after the Fetch, and its
    total time and queue time hold the 0.6 s it waited."""
    await create(client, "idle")
    fetch = await client.send(FETCH, 11, fetch_body("idle", 0, max_wait_ms=600, min_bytes=1))
    versions = await client.send(API_VERSIONS, 3, API_VERSIONS_BODY)
    assert (await client.receive(FETCH, 11))[0] == fetch
    assert (await client.receive(API_VERSIONS, 3))[0] == versions

    queued = times(broker, "api_versions")
    assert queued["request_latency"][0] == 1 and queued["request_latency"][1] >= 0.55
    assert queued["request_queue_time"][0] == 1 and queued["request_queue_time"][1] >= 0.55
    assert queued["response_send_time"][1] < 0.1
    polled = times(broker, "fetch")
    assert polled["request_latency"][1] >= 0.55  # the long poll is the handler's time
    assert polled["request_queue_time"][1] < 0.1


async def test_a_response_sent_to_a_slow_reader_counts_its_send(tmp_path: Path) -> None:
    """2 MB fetched by a client with a small receive buffer that reads only after 0.5 s (the
    broker's send buffer small too, ``socket.send.buffer.bytes``): the Fetch's send time and
    total time hold the 0.5 s the socket took to take the response."""
    small = {"socket.send.buffer.bytes": "8192"}
    async with serving(tmp_path / "data", **small) as (broker, client):
        await create(client, "big")
        for _ in range(4):
            r = await client.call(PRODUCE, 8, produce_body("big", batch([b"x" * 500_000])))
            assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", broker.port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=8192)
        slow = Client(reader, writer)
        try:
            await slow.send(FETCH, 11, fetch_body("big", 0, max_bytes=8 << 20))
            await asyncio.sleep(0.5)
            _, response = await asyncio.wait_for(slow.receive(FETCH, 11), 10)
        finally:
            await slow.close()
        assert len(response["responses"][0]["partitions"][0]["records"]) >= 2_000_000
        await asyncio.sleep(0.05)  # the broker's bookkeeping after the last bytes went
        sent = times(broker, "fetch")
        assert sent["response_send_time"][1] >= 0.4
        assert sent["request_latency"][1] >= sent["response_send_time"][1]
        assert sent["request_queue_time"][1] < 0.1
