"""The SDK's SASL client (``client/sasl.py``): RFC 7677's SCRAM-SHA-256 example, and whole
exchanges against the broker's ``ScramExchange`` (which shares no code with scramp, the client's
engine) and scramp's server."""

from __future__ import annotations

import base64

import pytest
import scramp

from tiered_mq.broker.scram import ScramCredential, ScramExchange
from tiered_mq.client.sasl import ScramLogin, plain_token

MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]


def test_plain_token() -> None:
    assert plain_token("alice", "s3cret") == b"\0alice\0s3cret"


def test_rfc_7677_example() -> None:
    login = ScramLogin("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert login.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert login.final(server_first) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    login.verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")

    forged = ScramLogin("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    forged.first()
    forged.final(server_first)
    with pytest.raises(ValueError, match="signature doesn't match"):
        forged.verify(b"v=" + base64.b64encode(b"x" * 32))


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_against_the_brokers_scram(mechanism: str) -> None:
    credential = ScramCredential.derive(mechanism, "pa,ss=word")
    server = ScramExchange(mechanism, {"al=ice,": credential}.get)
    login = ScramLogin(mechanism, "al=ice,", "pa,ss=word")
    server_first = server.first(login.first().decode())
    server_final = server.final(login.final(server_first.encode()).decode())
    login.verify(server_final.encode())
    assert server.user == "al=ice,"

    wrong = ScramLogin(mechanism, "al=ice,", "guess")
    server = ScramExchange(mechanism, {"al=ice,": credential}.get)
    server_first = server.first(wrong.first().decode())
    with pytest.raises(ValueError, match="bad SCRAM proof"):
        server.final(wrong.final(server_first.encode()).decode())


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_against_scramp(mechanism: str) -> None:
    scheme = scramp.ScramMechanism(mechanism)
    salt, stored_key, server_key, iterations = scheme.make_auth_info("pencil", 4096)
    server = scheme.make_server(lambda _user: (salt, stored_key, server_key, iterations))
    login = ScramLogin(mechanism, "user", "pencil")
    server.set_client_first(login.first().decode())
    client_final = login.final(server.get_server_first().encode())
    server.set_client_final(client_final.decode())
    login.verify(server.get_server_final().encode())


def test_refusals() -> None:
    salt = base64.b64encode(b"s" * 16).decode()

    def answer(server_first: str) -> None:
        login = ScramLogin("SCRAM-SHA-256", "user", "pencil", nonce="abc")
        login.first()
        login.final(server_first.encode())

    with pytest.raises(ValueError, match="nonce doesn't match"):
        answer(f"r=xyz123,s={salt},i=4096")
    with pytest.raises(ValueError, match="nonce must be longer"):
        answer(f"r=abc,s={salt},i=4096")  # the server added nothing
    with pytest.raises(ValueError, match="Malformed server first message"):
        answer("r=abcdef,i=4096")
    with pytest.raises(ValueError, match=r"SCRAM refused: .*unknown-user"):
        answer("e=unknown-user")
    with pytest.raises(ValueError, match="before client-final"):
        ScramLogin("SCRAM-SHA-256", "user", "pencil").verify(b"v=AAAA")
    with pytest.raises(ValueError, match="not a SCRAM mechanism"):
        ScramLogin("PLAIN", "user", "pencil")
