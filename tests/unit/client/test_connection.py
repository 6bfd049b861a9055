"""``client/connection.py``: settings from librdkafka properties, and a connection to a fake
broker in a thread (the broker's codec on the other end): version negotiation, a SCRAM login
checked by the broker's ``ScramExchange``, and the errors of a broker that closes or stays
silent."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tiered_mq.broker.scram import ScramCredential, ScramExchange
from tiered_mq.client.connection import ConnectionSettings, open_connection, parse_bootstrap
from tiered_mq.client.errors import ClientError
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.protocol.codec import decode_request, encode_response
from tiered_mq.protocol.header import RequestHeader, decode_request_header

Handler = Callable[[RequestHeader, dict[str, Any]], dict[str, Any] | None]


def test_parse_bootstrap() -> None:
    assert parse_bootstrap("a:1, PLAINTEXT://b:2,[::1]:3,c") == (
        ("a", 1),
        ("b", 2),
        ("::1", 3),
        ("c", 9092),
    )
    for bad in ("", " , ", "a:x"):
        with pytest.raises(ClientError, match="_INVALID_ARG"):
            parse_bootstrap(bad)


def test_settings_from_librdkafka() -> None:
    settings = ConnectionSettings.from_librdkafka(
        {
            "bootstrap.servers": "h:1",
            "client.id": "me",
            "security.protocol": "sasl_plaintext",
            "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": "p",
            "linger.ms": 5,  # librdkafka's alone: ignored
        }
    )
    assert settings == ConnectionSettings(
        (("h", 1),), "me", "SASL_PLAINTEXT", "SCRAM-SHA-512", "u", "p"
    )
    tls = ConnectionSettings.from_librdkafka(
        {
            "bootstrap.servers": "h:1",
            "security.protocol": "SSL",
            "ssl.endpoint.identification.algorithm": "none",
        }
    )
    assert tls.tls is not None and not tls.tls.check_hostname
    refusals = [
        ({"security.protocol": "SASL_SSL"}, "sasl.mechanism GSSAPI"),  # librdkafka's default
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"}, "OAUTHBEARER"),
        ({"security.protocol": "QUIC"}, "security.protocol QUIC"),
        ({"security.protocol": "SSL", "ssl.ca.location": "/nonexistent.pem"}, "TLS settings"),
    ]
    for conf, message in refusals:
        with pytest.raises(ClientError, match=f"_INVALID_ARG: .*{message}"):
            ConnectionSettings.from_librdkafka({"bootstrap.servers": "h:1", **conf})


def _serve(listener: socket.socket, handle: Handler) -> None:
    conn, _ = listener.accept()
    with conn:
        while True:
            head = conn.recv(4, socket.MSG_WAITALL)
            if len(head) < 4:
                return
            frame = memoryview(conn.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL))
            header, pos = decode_request_header(frame)
            answer = handle(header, decode_request(header, frame[pos:]))
            if answer is None:
                return  # close without answering
            conn.sendall(b"".join(bytes(c) for c in encode_response(header, answer)))


@pytest.fixture
def fake_broker() -> Iterator[Callable[[Handler], str]]:
    threads: list[threading.Thread] = []
    listeners: list[socket.socket] = []

    def start(handle: Handler) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)
        thread = threading.Thread(target=_serve, args=(listener, handle), daemon=True)
        thread.start()
        threads.append(thread)
        return f"127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for listener in listeners:
        listener.close()
    for thread in threads:
        thread.join(5)


def versions(**ranges: tuple[int, int]) -> dict[str, Any]:
    keys = [
        {"api_key": ApiKey[k], "min_version": lo, "max_version": hi}
        for k, (lo, hi) in ranges.items()
    ]
    return {"error_code": 0, "api_keys": keys}


def test_versions_and_a_scram_login(fake_broker: Callable[[Handler], str]) -> None:
    credential = ScramCredential.derive("SCRAM-SHA-256", "pencil")
    server = ScramExchange("SCRAM-SHA-256", {"user": credential}.get)
    seen: list[tuple[str, int]] = []

    def handle(header: RequestHeader, request: dict[str, Any]) -> dict[str, Any] | None:
        seen.append((ApiKey(header.api_key).name, header.api_version))
        if header.api_key == ApiKey.API_VERSIONS:
            return versions(
                SASL_HANDSHAKE=(0, 1), SASL_AUTHENTICATE=(0, 2), DESCRIBE_CONFIGS=(2, 4)
            )
        if header.api_key == ApiKey.SASL_HANDSHAKE:
            return {"error_code": 0, "mechanisms": ["SCRAM-SHA-256"]}
        if header.api_key == ApiKey.SASL_AUTHENTICATE:
            token = bytes(request["auth_bytes"]).decode()
            reply = server.first(token) if token.startswith("n,") else server.final(token)
            return {"error_code": 0, "auth_bytes": reply.encode()}
        return {"results": []}

    address = fake_broker(handle)
    settings = ConnectionSettings(
        parse_bootstrap(f"127.0.0.1:1,{address}"),  # the first is down: the next is tried
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="user",
        sasl_password="pencil",
    )
    with open_connection(settings, 5.0) as conn:
        assert conn.request(ApiKey.DESCRIBE_CONFIGS, {"resources": []})["results"] == []
        with pytest.raises(
            ClientError, match=r"UNSUPPORTED_VERSION: .* serves no version of METADATA"
        ):
            conn.request(ApiKey.METADATA, {"topics": []})
    assert seen == [
        ("API_VERSIONS", 0),
        ("SASL_HANDSHAKE", 1),
        ("SASL_AUTHENTICATE", 1),  # the broker's 2 is newer than this codec knows
        ("SASL_AUTHENTICATE", 1),
        ("DESCRIBE_CONFIGS", 3),
    ]
    assert server.user == "user"


def test_a_refused_mechanism(fake_broker: Callable[[Handler], str]) -> None:
    def handle(header: RequestHeader, _request: dict[str, Any]) -> dict[str, Any] | None:
        if header.api_key == ApiKey.API_VERSIONS:
            return versions(SASL_HANDSHAKE=(0, 1), SASL_AUTHENTICATE=(0, 1))
        return {"error_code": 33, "mechanisms": ["PLAIN"]}

    settings = ConnectionSettings(
        parse_bootstrap(fake_broker(handle)),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
    )
    refused = (
        r"UNSUPPORTED_SASL_MECHANISM: login to .* with SCRAM-SHA-512: the broker accepts PLAIN$"
    )
    with pytest.raises(ClientError, match=refused):
        open_connection(settings, 5.0)


def test_a_broker_that_closes_or_stays_silent(fake_broker: Callable[[Handler], str]) -> None:
    closing = ConnectionSettings(parse_bootstrap(fake_broker(lambda _h, _r: None)))
    with pytest.raises(ClientError, match=r"_TRANSPORT: connection to .*: closed by the broker"):
        open_connection(closing, 5.0)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        port = silent.getsockname()[1]
        with pytest.raises(ClientError, match="_TIMED_OUT: no answer from"):
            open_connection(ConnectionSettings((("127.0.0.1", port),)), 0.3)
    with pytest.raises(ClientError, match=r"_TRANSPORT: could not connect to 127\.0\.0\.1:1\b"):
        open_connection(ConnectionSettings((("127.0.0.1", 1),)), 1.0)
