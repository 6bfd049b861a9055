"""A broker listening on every interface without ``advertised.listeners`` tells clients the
machine's canonical host name (Kafka's ``getCanonicalHostName()`` for a blank host) in
Metadata and FindCoordinator, and a real client on this machine still produces and consumes
through that name."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.integration.broker_process import (
    FIND_COORDINATOR,
    METADATA,
    BrokerProcess,
    free_port,
    request,
)
from tests.integration.client_helpers import confluent_round_trip

pytestmark = pytest.mark.integration


def _canonical_name() -> str:
    """What Java's InetAddress.getLocalHost().getCanonicalHostName() answers on this machine."""
    address = socket.gethostbyname(socket.gethostname())
    try:
        return socket.gethostbyaddr(address)[0]
    except OSError:
        return address


@pytest.mark.parametrize("host", ["", "[::]"])
def test_a_wildcard_listener_advertises_the_host_name(tmp_path: Path, host: str) -> None:
    port = free_port()
    args = ["--host", "127.0.0.1", "--config", f"listeners=PLAINTEXT://{host}:{port}"]
    with BrokerProcess(tmp_path / "data", port=port, extra_args=args) as broker:
        name = _canonical_name()
        metadata = request(broker.port, METADATA, 1, {"topics": []})
        assert [(b["host"], b["port"]) for b in metadata["brokers"]] == [(name, port)]
        coordinator = request(broker.port, FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})
        assert (coordinator["host"], coordinator["port"]) == (name, port)
        # the client bootstraps on 127.0.0.1, then works through the advertised name
        confluent_round_trip({"bootstrap.servers": broker.bootstrap}, "wildcard", 50)
