"""The SCRAM server against an independent client (scramp) and against hand-made messages:
librdkafka's doubled nonce is accepted as Kafka accepts it, anything else is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable

import pytest
from scramp import ScramClient

from tiered_mq.broker.scram import ScramCredential, ScramExchange

MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]
USERS = {"alice": "alice-secret", "a,b=c": "odd-name"}


def exchange(mechanism: str) -> ScramExchange:
    creds = {u: ScramCredential.derive(mechanism, p) for u, p in USERS.items()}
    return ScramExchange(mechanism, creds.get)


def client_final(mechanism: str, password: str, bare: str, server_first: str, nonce: str) -> str:
    """A client-final message computed by hand (RFC 5802), sending ``nonce`` as r=."""
    h = "sha256" if mechanism.endswith("256") else "sha512"
    attrs = dict(kv.split("=", 1) for kv in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(
        h, password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"])
    )
    client_key = hmac.digest(salted, b"Client Key", h)
    without_proof = f"c=biws,r={nonce}"
    auth = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.digest(hashlib.new(h, client_key).digest(), auth, h)
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    return f"{without_proof},p={base64.b64encode(proof).decode()}"


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("user", list(USERS))
def test_scramp_client_logs_in(mechanism: str, user: str) -> None:
    server = exchange(mechanism)
    client = ScramClient([mechanism], user, USERS[user])
    client.set_server_first(server.first(client.get_client_first()))
    client.set_server_final(server.final(client.get_client_final()))  # checks the server too
    assert server.user == user


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_librdkafka_doubled_nonce_is_accepted(mechanism: str) -> None:
    server = exchange(mechanism)
    cnonce = "fyko+d2lbbFgONRv9qkxdawL"
    server_first = server.first(f"n,,n=alice,r={cnonce}")
    nonce = server_first.split(",")[0].removeprefix("r=")
    assert nonce.startswith(cnonce) and len(nonce) > len(cnonce)
    final = client_final(
        mechanism, "alice-secret", f"n=alice,r={cnonce}", server_first, cnonce + nonce
    )
    assert server.final(final).startswith("v=")
    assert server.user == "alice"


@pytest.mark.parametrize(
    ("password", "nonce_of"),  # nonce_of: the r= the client sends, from the server's
    [
        ("wrong", lambda n: n),  # bad proof
        ("alice-secret", lambda n: n[:-1]),  # not the server's nonce
        ("alice-secret", lambda n: n + "x"),  # ends with something else
    ],
)
def test_bad_client_final_is_refused(password: str, nonce_of: Callable[[str], str]) -> None:
    server = exchange("SCRAM-SHA-256")
    server_first = server.first("n,,n=alice,r=abc")
    nonce = server_first.split(",")[0].removeprefix("r=")
    final = client_final("SCRAM-SHA-256", password, "n=alice,r=abc", server_first, nonce_of(nonce))
    with pytest.raises(ValueError):
        server.final(final)
    assert server.user is None


@pytest.mark.parametrize(
    "client_first",
    [
        "n,,n=mallory,r=abc",  # unknown user
        "p=tls-unique,,n=alice,r=abc",  # channel binding
        "n,a=bob,n=alice,r=abc",  # authzid other than the user
        "n,,r=abc",
        "garbage",
    ],
)
def test_bad_client_first_is_refused(client_first: str) -> None:
    with pytest.raises(ValueError):
        exchange("SCRAM-SHA-512").first(client_first)


def test_final_before_first_is_refused() -> None:
    with pytest.raises(ValueError):
        exchange("SCRAM-SHA-256").final("c=biws,r=abc,p=AAAA")
