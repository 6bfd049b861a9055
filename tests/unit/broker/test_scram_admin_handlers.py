"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) against an in-process
broker, through the project's codec: Kafka's per-user rules, what is stored, authorization."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.unit.broker.conftest import STANDARD_AUTHORIZER, Client, serving
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.scram import ScramCredential
from tiered_mq.broker.scram_credentials import credential_from_string

DESCRIBE, ALTER = 50, 51
NONE, CLUSTER_AUTH, SASL_MECH, NOT_FOUND, DUPLICATE, UNACCEPTABLE = 0, 31, 33, 91, 92, 93
SALT = b"0123456789abcdef"


def upsertion(
    name: str, mechanism: int = 1, iterations: int = 4096, password: bytes = b"pw"
) -> dict[str, Any]:
    h = "sha512" if mechanism == 2 else "sha256"
    salted = hashlib.pbkdf2_hmac(h, password, SALT, max(iterations, 1))
    return {
        "name": name,
        "mechanism": mechanism,
        "iterations": iterations,
        "salt": SALT,
        "salted_password": salted,
    }


def codes(response: dict[str, Any]) -> dict[str, int]:
    return {r["user"]: r["error_code"] for r in response["results"]}


async def alter(
    client: Client,
    deletions: Sequence[dict[str, Any]] = (),
    upsertions: Sequence[dict[str, Any]] = (),
) -> dict[str, int]:
    body = {"deletions": list(deletions), "upsertions": list(upsertions)}
    return codes(await client.call(ALTER, 0, body))


async def test_alter_then_describe(client: Client, broker: Broker) -> None:
    assert await alter(client, upsertions=[upsertion("alice", 1, 4096)]) == {"alice": NONE}
    assert await alter(client, upsertions=[upsertion("alice", 2, 16384)]) == {"alice": NONE}
    stored = broker.coordinator.scram_credentials("alice")
    assert set(stored) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    salted = hashlib.pbkdf2_hmac("sha256", b"pw", SALT, 4096)
    expected = ScramCredential.from_salted_password("SCRAM-SHA-256", SALT, salted, 4096)
    assert credential_from_string(stored["SCRAM-SHA-256"]) == expected
    assert base64.b64encode(salted).decode() not in str(stored)  # the SaltedPassword is not kept
    r = await client.call(DESCRIBE, 0, {"users": None})
    assert r["error_code"] == NONE
    assert r["results"] == [
        {
            "user": "alice",
            "error_code": NONE,
            "error_message": None,
            "credential_infos": [
                {"mechanism": 1, "iterations": 4096},
                {"mechanism": 2, "iterations": 16384},
            ],
        }
    ]
    assert (await client.call(DESCRIBE, 0, {"users": []}))["results"] == r["results"]
    named = await client.call(DESCRIBE, 0, {"users": [{"name": n} for n in ["bob", "x", "x"]]})
    assert codes(named) == {"bob": NOT_FOUND, "x": DUPLICATE}  # one result per user
    assert "does not exist: bob" in named["results"][0]["error_message"]


async def test_kafkas_per_user_rules(client: Client, broker: Broker) -> None:
    assert await alter(client, upsertions=[upsertion("kept"), upsertion("d")]) == {
        "kept": NONE,
        "d": NONE,
    }
    got = await alter(
        client,
        deletions=[
            {"name": "kept", "mechanism": 2},  # kept has no SCRAM-SHA-512
            {"name": "ghost", "mechanism": 1},
            {"name": "d", "mechanism": 1},
            {"name": "bad-mech", "mechanism": 9},
        ],
        upsertions=[
            upsertion("d"),  # also deleted above: one change per user and request
            upsertion("ghost"),  # its deletion failed first: that error is its answer
            upsertion("few", iterations=4095),
            upsertion("many", iterations=16385),
            upsertion("", iterations=4096),
            upsertion("twice"),
            upsertion("twice", mechanism=2),
            upsertion("unknown-mech", mechanism=0),
            upsertion("fine", mechanism=2, iterations=16384),
        ],
    )
    assert got == {
        "fine": NONE,
        "kept": NOT_FOUND,
        "ghost": NOT_FOUND,
        "d": DUPLICATE,
        "bad-mech": SASL_MECH,
        "few": UNACCEPTABLE,
        "many": UNACCEPTABLE,
        "": UNACCEPTABLE,
        "twice": DUPLICATE,
        "unknown-mech": SASL_MECH,
    }
    assert broker.coordinator.scram_users() == ["d", "fine", "kept"]  # failed users unchanged
    assert await alter(client, deletions=[{"name": "kept", "mechanism": 1}]) == {"kept": NONE}
    assert broker.coordinator.scram_users() == ["d", "fine"]


async def test_cluster_acls_decide(tmp_path: Path) -> None:
    """With an authorizer, ANONYMOUS (a plaintext connection, not a super user) may neither
    alter nor describe."""
    async with serving(
        tmp_path / "data",
        **{
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": "User:admin",
        },
    ) as (broker, client):
        got = await alter(
            client,
            deletions=[{"name": "b", "mechanism": 1}],
            upsertions=[upsertion("a"), upsertion("b")],
        )
        assert got == {"a": CLUSTER_AUTH, "b": CLUSTER_AUTH}
        assert broker.coordinator.scram_users() == []
        everyone = await client.call(DESCRIBE, 0, {"users": None})
        assert everyone["error_code"] == CLUSTER_AUTH and everyone["results"] == []
        named = await client.call(DESCRIBE, 0, {"users": [{"name": "a"}]})
        assert named["error_code"] == NONE and codes(named) == {"a": CLUSTER_AUTH}
