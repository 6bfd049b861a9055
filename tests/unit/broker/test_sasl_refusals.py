"""A SASL listener closes the connection after answering a refused SaslHandshake (a mechanism
not enabled: UNSUPPORTED_SASL_MECHANISM) or a SASL request out of turn (ILLEGAL_SASL_STATE), as
Kafka's SaslServerAuthenticator does; after authentication such a request is only answered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.unit.broker.conftest import Client, serving
from tiered_mq.protocol.api_versions import ApiKey

SASL = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN",
    "sasl.jaas.config": 'x required user_alice="alice-secret";',
}
UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE = 33, 34
LOGIN = {"auth_bytes": b"\0alice\0alice-secret"}


async def closed(client: Client) -> bool:
    """Whether the broker closed the connection (EOF within 5 s)."""
    return await asyncio.wait_for(client.reader.read(1), 5) == b""


@pytest.mark.parametrize(
    ("requests", "code"),
    [
        ([(ApiKey.SASL_HANDSHAKE, {"mechanism": "SCRAM-SHA-256"})], UNSUPPORTED_SASL_MECHANISM),
        ([(ApiKey.SASL_AUTHENTICATE, LOGIN)], ILLEGAL_SASL_STATE),
        (
            [
                (ApiKey.SASL_HANDSHAKE, {"mechanism": "PLAIN"}),
                (ApiKey.SASL_HANDSHAKE, {"mechanism": "PLAIN"}),
            ],
            ILLEGAL_SASL_STATE,
        ),
    ],
)
async def test_refusal_before_authentication_closes(
    tmp_path: Path, requests: list[tuple[int, dict[str, object]]], code: int
) -> None:
    async with serving(tmp_path, **SASL) as (_, client):
        answers = [await client.call(key, 1, body) for key, body in requests]
        assert answers[-1]["error_code"] == code
        assert await closed(client)


async def test_refusal_after_authentication_is_only_answered(tmp_path: Path) -> None:
    async with serving(tmp_path, **SASL) as (_, client):
        await client.call(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert (await client.call(ApiKey.SASL_AUTHENTICATE, 1, LOGIN))["error_code"] == 0
        again = await client.call(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert again["error_code"] == ILLEGAL_SASL_STATE
        metadata = await client.call(ApiKey.METADATA, 1, {"topics": []})
        assert metadata["brokers"]
