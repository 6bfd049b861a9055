"""The server side of SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as Kafka's ScramSaslServer.

Credentials (what a broker stores per user, never the password)::

    SaltedPassword = PBKDF2-HMAC-H(password, salt, iterations)
    StoredKey      = H(HMAC(SaltedPassword, "Client Key"))
    ServerKey      = HMAC(SaltedPassword, "Server Key")

Exchange::

    client-first  n,[a=authzid],n=user,r=cnonce[,ext...]
    server-first  r=cnonce+snonce,s=salt,i=iterations
    client-final  c=biws,r=nonce,p=proof
    server-final  v=server-signature

The proof checks as ``H(proof XOR HMAC(StoredKey, AuthMessage)) == StoredKey`` with
``AuthMessage = client-first-bare,server-first,client-final-without-proof``. The client's
nonce must end with the server's ``cnonce+snonce``: Kafka's rule since 3.8.1, which accepts
librdkafka before 2.7 (it sends its client nonce once more in front, librdkafka #4895; the
proof covers the message as sent). A ``p=`` (channel binding) header does not parse (Kafka has
none), an authzid must equal the user, and every failure raises ValueError (the caller answers
SASL_AUTHENTICATION_FAILED).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

ITERATIONS: Final = 4096  # Kafka's minimum for both mechanisms
_HASHES: Final = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_CLIENT_FIRST: Final = re.compile(
    r"(?P<gs2>[ny],(?:a=(?P<authzid>[^,]*))?,)n=(?P<user>[^,]+),r=(?P<nonce>[\x21-\x2b\x2d-\x7e]+)(?:,.*)?"
)
_CLIENT_FINAL: Final = re.compile(
    r"(?P<bare>c=(?P<binding>[A-Za-z0-9+/=]+),r=(?P<nonce>[\x21-\x2b\x2d-\x7e]+)(?:,[a-z]=[^,]*)*),p=(?P<proof>[A-Za-z0-9+/=]+)"
)


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def derive(cls, mechanism: str, password: str, iterations: int = ITERATIONS) -> ScramCredential:
        salt = secrets.token_bytes(16)
        salted = hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode(), salt, iterations)
        return cls.from_salted_password(mechanism, salt, salted, iterations)

    @classmethod
    def from_salted_password(
        cls, mechanism: str, salt: bytes, salted_password: bytes, iterations: int
    ) -> ScramCredential:
        """The credential of a SaltedPassword computed elsewhere (AlterUserScramCredentials
        carries one: the client salts the password itself)."""
        h = _HASHES[mechanism]
        client_key = hmac.digest(salted_password, b"Client Key", h)
        server_key = hmac.digest(salted_password, b"Server Key", h)
        return cls(salt, hashlib.new(h, client_key).digest(), server_key, iterations)


CredentialLookup = Callable[[str], ScramCredential | None]  # user -> credential, None: unknown


class ScramExchange:
    """One SCRAM authentication: ``first(client_first)`` then ``final(client_final)``.
    ``lookup`` finds a user's credential (called once, at client-first)."""

    def __init__(self, mechanism: str, lookup: CredentialLookup) -> None:
        self._hash = _HASHES[mechanism]
        self._lookup = lookup
        self.user: str | None = None  # set once the proof checked
        self._state: tuple[str, str, str, ScramCredential, str] | None = None

    def first(self, client_first: str) -> str:
        """The server-first message for ``client_first``."""
        m = _CLIENT_FIRST.fullmatch(client_first)
        if m is None:
            raise ValueError("malformed SCRAM client-first message")
        user = m["user"].replace("=2C", ",").replace("=3D", "=")
        if m["authzid"] and m["authzid"] != user:
            raise ValueError("authorization id differs from the user")
        credential = self._lookup(user)
        if credential is None:
            raise ValueError(f"unknown user {user!r}")
        nonce = m["nonce"] + secrets.token_urlsafe(24)
        salt = base64.b64encode(credential.salt).decode()
        server_first = f"r={nonce},s={salt},i={credential.iterations}"
        bare = client_first[len(m["gs2"]) :]
        self._state = (bare, server_first, nonce, credential, user)
        return server_first

    def final(self, client_final: str) -> str:
        """The server-final message, once the client's proof checks."""
        if self._state is None:
            raise ValueError("SCRAM client-final before client-first")
        bare, server_first, nonce, credential, user = self._state
        m = _CLIENT_FINAL.fullmatch(client_final)
        if m is None:
            raise ValueError("malformed SCRAM client-final message")
        if base64.b64decode(m["binding"]) not in (b"n,,", b"y,,"):
            raise ValueError("unexpected channel binding")
        if not m["nonce"].endswith(nonce):
            raise ValueError("the client's nonce does not end with the server's")
        auth_message = f"{bare},{server_first},{m['bare']}".encode()
        signature = hmac.digest(credential.stored_key, auth_message, self._hash)
        proof = base64.b64decode(m["proof"])
        if len(proof) != len(signature):
            raise ValueError("bad SCRAM proof")
        n = len(proof)
        client_key = (int.from_bytes(proof) ^ int.from_bytes(signature)).to_bytes(n)
        if not hmac.compare_digest(
            hashlib.new(self._hash, client_key).digest(), credential.stored_key
        ):
            raise ValueError("bad SCRAM proof")
        self.user = user
        server_signature = hmac.digest(credential.server_key, auth_message, self._hash)
        return "v=" + base64.b64encode(server_signature).decode()
