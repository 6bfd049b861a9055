"""Broker metrics: counted per API and served over HTTP."""

from __future__ import annotations

import asyncio
import socket
import urllib.request

from tests.unit.broker.conftest import Client
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.metrics import BrokerMetrics


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_requests_are_counted_and_served(broker: Broker, client: Client) -> None:
    await client.call(3, 8, {"topics": [{"name": "m"}], "allow_auto_topic_creation": True})
    await client.call(3, 8, {"topics": None})
    metrics: BrokerMetrics = broker.metrics
    port = metrics.serve("127.0.0.1", _free_port())
    assert port is not None
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    finally:
        metrics.close()
    body = text.decode()
    assert 'tiered_mq_requests_total{api="metadata"} 2.0' in body
    assert "tiered_mq_request_latency_seconds_bucket" in body
    assert "tiered_mq_connections 1.0" in body
    assert 'tiered_mq_partition_high_watermark{partition="0",topic="m"} 0.0' in body


def test_port_zero_means_off() -> None:
    assert BrokerMetrics().serve("127.0.0.1", 0) is None
