"""``BrokerConnection``: one blocking connection to one broker, with frames from the project's
codec, for the requests librdkafka cannot send. That is the BROKER config resource with an empty
name (the cluster-wide default of dynamic broker configs, KIP-226), which librdkafka refuses
before sending, and DescribeConfigs synonyms level by level (confluent-kafka keys them by name,
so ``log.retention.ms`` set on two levels keeps one).

Settings are the client's librdkafka properties (``ConnectionSettings.from_librdkafka``):
``bootstrap.servers``, ``client.id``, ``security.protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT,
SASL_SSL), ``sasl.mechanism`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; GSSAPI and OAUTHBEARER are
refused) with ``sasl.username`` and ``sasl.password``, and for TLS ``ssl.ca.location`` (a file or
a directory), ``ssl.ca.pem``, ``ssl.certificate.location``, ``ssl.key.location``,
``ssl.key.password``, ``enable.ssl.certificate.verification`` and
``ssl.endpoint.identification.algorithm`` (``https``, librdkafka's default, checks the host
name; ``none`` does not). Other properties concern librdkafka alone and are ignored.

Opening: TCP (the bootstrap servers in order, the first that accepts), TLS, ApiVersions v0 (what
the broker serves), then for SASL_* SaslHandshake v1 and SaslAuthenticate (``sasl.py``). A
request goes at the highest version that both the broker and this codec know (``SUPPORTED``).
``open_connection(settings, timeout, node_id)`` reaches one broker through its advertised
address in the bootstrap broker's Metadata. ``timeout`` bounds the whole life of a connection.

Errors are ``ClientError``: ``_TRANSPORT`` (connect, a closed connection), ``_SSL`` (TLS
handshake), ``_TIMED_OUT`` (these three as ``ConnectionFailure``, which names the address),
``_INVALID_ARG`` (settings this client cannot use), ``UNSUPPORTED_VERSION`` (no common
version), the broker's SaslHandshake/SaslAuthenticate error (``UNSUPPORTED_SASL_MECHANISM``,
``SASL_AUTHENTICATION_FAILED``) and ``BROKER_NOT_AVAILABLE`` (no such node id). Not
thread-safe: one request at a time.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tiered_mq.client.errors import ClientError, ConnectionFailure
from tiered_mq.client.sasl import MECHANISMS, SCRAM_MECHANISMS, ScramLogin, plain_token
from tiered_mq.errors import (
    BrokerNotAvailableError,
    InvalidRequestError,
    SaslAuthenticationFailedError,
    UnsupportedVersionError,
)
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey
from tiered_mq.protocol.codec import decode_response, encode_request, response_correlation_id

PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_SIZE: Final = struct.Struct(">i")


def parse_bootstrap(servers: str) -> tuple[tuple[str, int], ...]:
    """``"a:9092,PLAINTEXT://b:9093,[::1]:9094"`` -> ``(("a", 9092), ("b", 9093), ("::1", 9094))``;
    a host without a port gets 9092, as in librdkafka."""
    addresses = []
    for item in servers.split(","):
        address = item.strip().rpartition("://")[2]
        if not address:
            continue
        host, sep, port = address.rpartition(":")
        if not sep or host.endswith(":"):  # no port, or a bare IPv6 address
            host, port = address, "9092"
        try:
            addresses.append((host.strip("[]"), int(port)))
        except ValueError:
            raise ClientError("_INVALID_ARG", f"bootstrap.servers: bad address {item!r}") from None
    if not addresses:
        raise ClientError("_INVALID_ARG", "bootstrap.servers is empty")
    return tuple(addresses)


def _flag(conf: Mapping[str, Any], key: str, default: bool) -> bool:
    return str(conf.get(key, default)).lower() not in ("false", "0", "no")


def _tls_context(conf: Mapping[str, Any]) -> ssl.SSLContext:
    ca = conf.get("ssl.ca.location")
    ca_dir = ca is not None and Path(ca).is_dir()
    try:
        ctx = ssl.create_default_context(
            cafile=None if ca is None or ca_dir or ca == "probe" else ca,
            capath=ca if ca_dir else None,
            cadata=conf.get("ssl.ca.pem"),
        )
        verify = _flag(conf, "enable.ssl.certificate.verification", True)
        algorithm = str(conf.get("ssl.endpoint.identification.algorithm", "https")).lower()
        ctx.check_hostname = verify and algorithm == "https"
        if not verify:
            ctx.verify_mode = ssl.CERT_NONE
        cert = conf.get("ssl.certificate.location")
        if cert is not None:
            key, password = conf.get("ssl.key.location"), conf.get("ssl.key.password")
            ctx.load_cert_chain(cert, key, password)
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        raise ClientError("_INVALID_ARG", f"TLS settings: {err}") from err
    return ctx


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect, from the properties listed in the module docstring."""

    bootstrap: tuple[tuple[str, int], ...]
    client_id: str = "tiered-mq-admin"
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "PLAIN"
    sasl_username: str = ""
    sasl_password: str = ""
    tls: ssl.SSLContext | None = None

    @classmethod
    def from_librdkafka(cls, conf: Mapping[str, Any]) -> ConnectionSettings:
        protocol = str(conf.get("security.protocol", "PLAINTEXT")).upper()
        if protocol not in PROTOCOLS:
            known = ", ".join(PROTOCOLS)
            raise ClientError("_INVALID_ARG", f"security.protocol {protocol} is not one of {known}")
        default = conf.get("sasl.mechanisms", "GSSAPI")  # librdkafka's older name and default
        mechanism = str(conf.get("sasl.mechanism", default)).upper()
        if protocol.startswith("SASL_") and mechanism not in MECHANISMS:
            known = ", ".join(MECHANISMS)
            message = f"sasl.mechanism {mechanism}: this client logs in with {known} only"
            raise ClientError("_INVALID_ARG", message)
        return cls(
            bootstrap=parse_bootstrap(str(conf.get("bootstrap.servers", ""))),
            client_id=str(conf.get("client.id", cls.client_id)),
            security_protocol=protocol,
            sasl_mechanism=mechanism,
            sasl_username=str(conf.get("sasl.username", "")),
            sasl_password=str(conf.get("sasl.password", "")),
            tls=_tls_context(conf) if protocol in ("SSL", "SASL_SSL") else None,
        )


class BrokerConnection:
    """An open, logged-in connection; ``request`` sends one request and returns its answer."""

    def __init__(self, sock: socket.socket, host: str, port: int, client_id: str, deadline: float):
        self._sock = sock
        self.host, self.port = host, port
        self._client_id = client_id
        self._deadline = deadline
        self._correlation_id = 0
        self.versions: dict[int, int] = {}  # api key -> the version requests go at

    @classmethod
    def open(
        cls, host: str, port: int, settings: ConnectionSettings, deadline: float
    ) -> BrokerConnection:
        left = max(0.01, deadline - time.monotonic())
        try:
            sock = socket.create_connection((host, port), timeout=left)
        except TimeoutError:
            raise ConnectionFailure(
                "_TIMED_OUT", f"could not connect to {host}:{port} in time", f"{host}:{port}"
            ) from None
        except OSError as err:
            raise ConnectionFailure(
                "_TRANSPORT", f"could not connect to {host}:{port}: {err}", f"{host}:{port}"
            ) from err
        if settings.tls is not None:
            try:
                sock = settings.tls.wrap_socket(sock, server_hostname=host)
            except (OSError, ValueError) as err:
                sock.close()
                raise ConnectionFailure(
                    "_SSL", f"TLS with {host}:{port} failed: {err}", f"{host}:{port}"
                ) from err
        conn = cls(sock, host, port, settings.client_id, deadline)
        try:
            conn._negotiate_versions()
            if settings.security_protocol.startswith("SASL_"):
                conn._login(settings)
        except BaseException:
            conn.close()
            raise
        return conn

    def __enter__(self) -> BrokerConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._sock.close()

    def request(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` sent at the negotiated version of ``api_key``; the decoded answer."""
        version = self.versions.get(api_key)
        if version is None:
            raise ClientError(
                UnsupportedVersionError.message,
                f"the broker at {self.host}:{self.port} serves no version of {api_key.name}"
                " this client knows",
                UnsupportedVersionError.errno,
            )
        return self._exchange(api_key, version, body)

    def _exchange(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self._correlation_id += 1
        frame = encode_request(api_key, version, self._correlation_id, self._client_id, body)
        where = f"{self.host}:{self.port}"
        try:
            self._sock.settimeout(max(0.01, self._deadline - time.monotonic()))
            self._sock.sendall(frame)
            (size,) = _SIZE.unpack(self._read(4))
            payload = self._read(size)
        except TimeoutError:
            raise ConnectionFailure(
                "_TIMED_OUT", f"no answer from {where} in time", where
            ) from None
        except OSError as err:
            raise ConnectionFailure("_TRANSPORT", f"connection to {where}: {err}", where) from err
        try:
            if response_correlation_id(payload) != self._correlation_id:
                raise InvalidRequestError("the answer is not to the request sent")
            return decode_response(api_key, version, payload)
        except InvalidRequestError as err:
            raise ClientError("_BAD_MSG", f"answer from {where}: {err}") from err

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self._sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by the broker")
            buf += chunk
        return bytes(buf)

    def _negotiate_versions(self) -> None:
        answer = self._exchange(ApiKey.API_VERSIONS, 0, {})
        if answer["error_code"]:
            raise ClientError.from_code(answer["error_code"], None, "ApiVersions")
        for entry in answer["api_keys"]:
            ours = SUPPORTED.get(entry["api_key"])
            if ours is not None:
                low, high = max(ours[0], entry["min_version"]), min(ours[1], entry["max_version"])
                if low <= high:
                    self.versions[entry["api_key"]] = high

    def _login(self, settings: ConnectionSettings) -> None:
        mechanism, user = settings.sasl_mechanism, settings.sasl_username
        context = f"login to {self.host}:{self.port} with {mechanism}"
        shake = self._exchange(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism})
        if shake["error_code"]:
            accepted = ", ".join(shake["mechanisms"]) or "none"
            raise ClientError.from_code(
                shake["error_code"], f"the broker accepts {accepted}", context
            )
        if mechanism not in SCRAM_MECHANISMS:
            self._authenticate(plain_token(user, settings.sasl_password), context)
            return
        scram = ScramLogin(mechanism, user, settings.sasl_password)
        try:
            server_first = self._authenticate(scram.first(), context)
            server_final = self._authenticate(scram.final(server_first), context)
            scram.verify(server_final)
        except ValueError as err:
            refused = SaslAuthenticationFailedError
            raise ClientError(refused.message, f"{context}: {err}", refused.errno) from err

    def _authenticate(self, token: bytes, context: str) -> bytes:
        answer = self.request(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token})
        if answer["error_code"]:
            raise ClientError.from_code(answer["error_code"], answer["error_message"], context)
        return bytes(answer["auth_bytes"] or b"")


def open_connection(
    settings: ConnectionSettings, timeout: float, node_id: int | None = None
) -> BrokerConnection:
    """A connection to any bootstrap server (``node_id`` None), or to broker ``node_id``."""
    deadline = time.monotonic() + timeout
    unreachable: ClientError | None = None
    for host, port in settings.bootstrap:
        try:
            conn = BrokerConnection.open(host, port, settings, deadline)
            break
        except ClientError as err:
            if err.name not in ("_TRANSPORT", "_TIMED_OUT"):
                raise
            unreachable = err
    else:
        assert unreachable is not None
        raise unreachable
    if node_id is None:
        return conn
    with conn:
        metadata = conn.request(ApiKey.METADATA, {"topics": [], "allow_auto_topic_creation": False})
    brokers = {b["node_id"]: (b["host"], b["port"]) for b in metadata["brokers"]}
    if node_id not in brokers:
        known = ", ".join(map(str, sorted(brokers))) or "none"
        message = f"no broker {node_id} in the cluster (brokers: {known})"
        raise ClientError(BrokerNotAvailableError.message, message, BrokerNotAvailableError.errno)
    host, port = brokers[node_id]
    return BrokerConnection.open(host, port, settings, deadline)
