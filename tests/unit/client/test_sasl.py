"""The SDK's SASL client (``client/sasl.py``): RFC 7677's SCRAM-SHA-256 example, and whole
exchanges against two servers it does not share code with: the broker's ``ScramExchange`` and
scramp's."""

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
    with pytest.raises(ValueError, match="signature does not match"):
        login.verify(b"v=" + base64.b64encode(b"x" * 32))


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
    login = ScramLogin("SCRAM-SHA-256", "user", "pencil", nonce="abc")
    with pytest.raises(ValueError, match="does not extend"):
        login.final(b"r=xyz123,s=AAAA,i=4096")
    with pytest.raises(ValueError, match="does not extend"):
        login.final(b"r=abc,s=AAAA,i=4096")  # the server added nothing
    with pytest.raises(ValueError, match="malformed"):
        login.final(b"r=abcdef,i=4096")
    with pytest.raises(ValueError, match="SCRAM refused: unknown-user"):
        login.final(b"e=unknown-user")
    with pytest.raises(ValueError, match="before client-final"):
        login.verify(b"v=AAAA")
    with pytest.raises(ValueError, match="not a SCRAM mechanism"):
        ScramLogin("PLAIN", "user", "pencil")
