"""The client side of SASL PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677), for
``connection.BrokerConnection`` (librdkafka logs in by itself everywhere else).

PLAIN is one token: ``authzid NUL user NUL password`` (an empty authzid, as librdkafka sends).
SCRAM is three messages, one ``ScramLogin`` per login::

    client-first  n,,n=user,r=cnonce                    first()
    server-first  r=cnonce+snonce,s=salt,i=iterations   final(server_first) -> client-final
    client-final  c=biws,r=nonce,p=proof
    server-final  v=server-signature                    verify(server_final)

with ``SaltedPassword = PBKDF2-HMAC-H(password, salt, i)``, ``ClientKey = HMAC(SaltedPassword,
"Client Key")``, ``proof = ClientKey XOR HMAC(H(ClientKey), AuthMessage)`` and ``AuthMessage =
client-first-bare,server-first,client-final-without-proof``. ``verify`` checks that the broker
knew the credential (``v = HMAC(HMAC(SaltedPassword, "Server Key"), AuthMessage)``). Every
protocol failure (a server nonce that does not extend ours, a bad signature, an ``e=`` answer)
raises ValueError with the reason.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Final

HASHES: Final = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS: Final = ("PLAIN", *HASHES)


def plain_token(user: str, password: str) -> bytes:
    """The one PLAIN token."""
    return f"\0{user}\0{password}".encode()


def _attributes(message: str) -> dict[str, str]:
    """``a=1,b=x=y`` -> ``{"a": "1", "b": "x=y"}``."""
    return dict(part.split("=", 1) for part in message.split(",") if "=" in part)


class ScramLogin:
    """One SCRAM exchange as the client: ``first()``, ``final(...)``, ``verify(...)``."""

    def __init__(self, mechanism: str, user: str, password: str, nonce: str | None = None) -> None:
        if mechanism not in HASHES:
            raise ValueError(f"not a SCRAM mechanism: {mechanism}")
        self._hash = HASHES[mechanism]
        self._password = password.encode()
        self._nonce = nonce or secrets.token_urlsafe(24)
        name = user.replace("=", "=3D").replace(",", "=2C")
        self._first_bare = f"n={name},r={self._nonce}"
        self._server_signature: bytes | None = None

    def first(self) -> bytes:
        """The client-first message (no channel binding, no authzid)."""
        return f"n,,{self._first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        """The client-final message, with the proof, for the broker's server-first."""
        text = server_first.decode()
        attrs = _attributes(text)
        if "e" in attrs:
            raise ValueError(f"SCRAM refused: {attrs['e']}")
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), attrs.get("i", "")
        if not nonce.startswith(self._nonce) or nonce == self._nonce:
            raise ValueError("the server's SCRAM nonce does not extend the client's")
        if salt is None or not iterations.isdigit():
            raise ValueError("malformed SCRAM server-first message")
        salted = hashlib.pbkdf2_hmac(
            self._hash, self._password, base64.b64decode(salt), int(iterations)
        )
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._first_bare},{text},{without_proof}".encode()
        client_key = hmac.digest(salted, b"Client Key", self._hash)
        stored_key = hashlib.new(self._hash, client_key).digest()
        signature = hmac.digest(stored_key, auth_message, self._hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.digest(salted, b"Server Key", self._hash)
        self._server_signature = hmac.digest(server_key, auth_message, self._hash)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        """Checks the broker's signature; ValueError when it does not match."""
        attrs = _attributes(server_final.decode())
        if "e" in attrs:
            raise ValueError(f"SCRAM refused: {attrs['e']}")
        if self._server_signature is None:
            raise ValueError("SCRAM server-final before client-final")
        got = base64.b64decode(attrs.get("v", ""))
        if not hmac.compare_digest(got, self._server_signature):
            raise ValueError("the broker's SCRAM signature does not match")
