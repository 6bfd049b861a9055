"""A listener bound to every interface (empty host, ``0.0.0.0``, ``[::]``) without an
advertised address is advertised as the machine's canonical host name, as Kafka advertises an
empty host (``InetAddress.getLocalHost().getCanonicalHostName()``), not as 127.0.0.1, which
sent every client on another machine to itself."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.listener import listeners

NAME = "broker-7.example.com"
ADDRESS = "10.1.2.3"


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A machine named ``broker-7`` whose address maps back to ``NAME`` (what DNS says here is
    not this test's business); clear ``by_address`` to make the reverse lookup fail."""
    by_address = {ADDRESS: NAME}
    monkeypatch.setattr(socket, "gethostname", lambda: "broker-7")
    monkeypatch.setattr(
        socket, "gethostbyname", lambda h: ADDRESS if h == "broker-7" else "127.0.0.1"
    )

    def by_addr(address: str) -> tuple[str, list[str], list[str]]:
        if address not in by_address:
            raise socket.herror(1, "Unknown host")
        return by_address[address], [], [address]

    monkeypatch.setattr(socket, "gethostbyaddr", by_addr)
    return by_address


def advertised(tmp_path: Path, **props: str) -> list[tuple[str, int]]:
    config = BrokerConfig(tmp_path, host="127.0.0.1", port=9092, overrides=props)
    return [li.endpoint for li in listeners(config)]


@pytest.mark.parametrize("host", ["", "0.0.0.0", "[::]"])
def test_a_wildcard_listener_advertises_the_canonical_host_name(
    tmp_path: Path, machine: dict[str, str], host: str
) -> None:
    assert advertised(tmp_path, listeners=f"PLAINTEXT://{host}:9092") == [(NAME, 9092)]


def test_the_cli_host_binding_everything_too(tmp_path: Path, machine: dict[str, str]) -> None:
    config = BrokerConfig(tmp_path, host="0.0.0.0", port=9092)
    assert [li.endpoint for li in listeners(config)] == [(NAME, 9092)]


def test_without_a_reverse_name_the_address_is_advertised(
    tmp_path: Path, machine: dict[str, str]
) -> None:
    machine.clear()  # Java's getCanonicalHostName answers the address then
    assert advertised(tmp_path, listeners="PLAINTEXT://:9092") == [(ADDRESS, 9092)]


def test_a_host_name_without_an_address_advertises_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, machine: dict[str, str]
) -> None:
    def unresolvable(host: str) -> str:
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "gethostbyname", unresolvable)
    assert advertised(tmp_path, listeners="PLAINTEXT://:9092") == [("127.0.0.1", 9092)]


def test_a_named_host_and_advertised_settings_are_kept(
    tmp_path: Path, machine: dict[str, str]
) -> None:
    assert advertised(tmp_path, listeners="PLAINTEXT://127.0.0.1:9092") == [("127.0.0.1", 9092)]
    assert advertised(
        tmp_path,
        listeners="INTERNAL://:9093,EXTERNAL://0.0.0.0:9094",
        **{
            "advertised.listeners": "EXTERNAL://kafka.example.com:19094",
            "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        },
    ) == [(NAME, 9093), ("kafka.example.com", 19094)]
    assert advertised(
        tmp_path, listeners="PLAINTEXT://:9092", **{"advertised.host.name": "b1"}
    ) == [("b1", 9092)]
