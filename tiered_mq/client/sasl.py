"""The client side of SASL PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677), for
``connection.BrokerConnection`` (librdkafka logs in by itself everywhere else).

PLAIN is one token: ``authzid NUL user NUL password`` (an empty authzid, as librdkafka sends).
SCRAM is three messages, one ``ScramLogin`` per login; the computation is scramp's
``ScramClient`` (no channel binding, as Kafka's SCRAM has none)::

    client-first  n,,n=user,r=cnonce                    first()
    server-first  r=cnonce+snonce,s=salt,i=iterations   final(server_first) -> client-final
    client-final  c=biws,r=nonce,p=proof
    server-final  v=server-signature                    verify(server_final)

``verify`` checks that the broker knew the credential. Every protocol failure (a server nonce
that does not extend ours, a bad signature, an ``e=`` answer) raises ValueError with the reason.
"""

from __future__ import annotations

from typing import Final

from scramp import ScramClient, ScramException

SCRAM_MECHANISMS: Final = ("SCRAM-SHA-256", "SCRAM-SHA-512")
MECHANISMS: Final = ("PLAIN", *SCRAM_MECHANISMS)


def plain_token(user: str, password: str) -> bytes:
    """The one PLAIN token."""
    return f"\0{user}\0{password}".encode()


class ScramLogin:
    """One SCRAM exchange as the client: ``first()``, ``final(...)``, ``verify(...)``."""

    def __init__(self, mechanism: str, user: str, password: str, nonce: str | None = None) -> None:
        if mechanism not in SCRAM_MECHANISMS:
            raise ValueError(f"not a SCRAM mechanism: {mechanism}")
        self._client = ScramClient([mechanism], user, password, c_nonce=nonce)
        self._final_sent = False

    def first(self) -> bytes:
        """The client-first message (no channel binding, no authzid)."""
        return str(self._client.get_client_first()).encode()

    def final(self, server_first: bytes) -> bytes:
        """The client-final message, with the proof, for the broker's server-first."""
        try:
            self._client.set_server_first(server_first.decode())
            final = str(self._client.get_client_final())
        except ScramException as e:
            raise ValueError(f"SCRAM refused: {e}") from None
        self._final_sent = True
        return final.encode()

    def verify(self, server_final: bytes) -> None:
        """Checks the broker's signature; ValueError when it does not match."""
        if not self._final_sent:
            raise ValueError("SCRAM server-final before client-final")
        try:
            self._client.set_server_final(server_final.decode())
        except ScramException as e:
            raise ValueError(f"SCRAM refused: {e}") from None
