"""The broker's listener: ``listeners`` (Kafka's name) and, for SSL, its TLS context.

``listeners`` holds one entry, ``PROTOCOL://host:port``; empty (the default) means
``PLAINTEXT://`` on ``--host``/``--port``. An empty host binds every interface. PROTOCOL is
PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (SASL: broker/sasl.py); a second listener (a broker
here has one) is refused. Metadata and FindCoordinator advertise this listener's port, so a
client only ever talks the listener's protocol.

SSL settings, Kafka's names, PEM files only::

    ssl.keystore.type        PEM (JKS and PKCS12 are refused: convert them with openssl)
    ssl.keystore.location    PEM file holding the private key and its certificate chain
    ssl.key.password         the private key's password, if it is encrypted (sensitive:
                             DescribeConfigs shows it as null)
    ssl.truststore.location  PEM CA certificates that client certificates must chain to
    ssl.client.auth          none | requested | required (the last two need a truststore)
    ssl.enabled.protocols    TLSv1.2,TLSv1.3 (the lowest listed is the minimum)

A setting that is wrong (unknown protocol, missing or unreadable file, wrong password) raises
ValueError naming the key, and the broker does not start. Over TLS the server copies fetch data
through the encryption instead of using sendfile (response_writer.py).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Final

from tiered_mq.broker.config import BrokerConfig

PLAINTEXT: Final = "PLAINTEXT"
SSL: Final = "SSL"
SASL_PLAINTEXT: Final = "SASL_PLAINTEXT"
SASL_SSL: Final = "SASL_SSL"
PROTOCOLS: Final = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
SENSITIVE: Final = frozenset({"ssl.key.password", "sasl.jaas.config"})

_TLS_VERSIONS: Final = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH: Final = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


@dataclass(frozen=True)
class Listener:
    protocol: str  # one of PROTOCOLS
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.protocol}://{self.host}:{self.port}"

    @property
    def tls(self) -> bool:
        return self.protocol in (SSL, SASL_SSL)

    @property
    def sasl(self) -> bool:
        return self.protocol in (SASL_PLAINTEXT, SASL_SSL)


def listener(config: BrokerConfig) -> Listener:
    """The listener ``config`` asks for (``listeners``, else --host/--port in plaintext)."""
    spec = (config.get("listeners") or "").strip()
    if not spec:
        return Listener(PLAINTEXT, config.host, config.port)
    if "," in spec:
        raise ValueError(f"listeners={spec!r}: one listener per broker is supported")
    protocol, sep, address = spec.partition("://")
    host, colon, port = address.rpartition(":")
    if not sep or not colon or not port.isdigit():
        raise ValueError(f"listeners={spec!r}: expected PROTOCOL://host:port")
    protocol = protocol.upper()
    if protocol not in PROTOCOLS:
        raise ValueError(f"listeners={spec!r}: {protocol} is not one of {', '.join(PROTOCOLS)}")
    return Listener(protocol, host.strip("[]"), int(port))


def ssl_context(config: BrokerConfig) -> ssl.SSLContext:
    """The server-side TLS context of an SSL or SASL_SSL listener, from ``ssl.*``."""
    kind = (config.get("ssl.keystore.type") or "PEM").upper()
    if kind != "PEM":
        raise ValueError(f"ssl.keystore.type={kind}: only PEM is supported (convert with openssl)")
    keystore = config.get("ssl.keystore.location") or ""
    if not keystore:
        raise ValueError("a TLS listener needs ssl.keystore.location (PEM key and certificate)")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = _minimum_version(config.get("ssl.enabled.protocols") or "")
    try:
        ctx.load_cert_chain(keystore, password=config.get("ssl.key.password") or None)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"ssl.keystore.location={keystore}: {e}") from None
    auth = (config.get("ssl.client.auth") or "none").lower()
    if auth not in _CLIENT_AUTH:
        raise ValueError(f"ssl.client.auth={auth}: expected none, requested or required")
    truststore = config.get("ssl.truststore.location") or ""
    if truststore:
        try:
            ctx.load_verify_locations(cafile=truststore)
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"ssl.truststore.location={truststore}: {e}") from None
    elif auth != "none":
        raise ValueError(f"ssl.client.auth={auth} needs ssl.truststore.location")
    ctx.verify_mode = _CLIENT_AUTH[auth]
    return ctx


def _minimum_version(enabled: str) -> ssl.TLSVersion:
    names = [p.strip() for p in enabled.split(",") if p.strip()] or ["TLSv1.2"]
    unknown = [n for n in names if n not in _TLS_VERSIONS]
    if unknown:
        raise ValueError(f"ssl.enabled.protocols: {unknown} (supported: TLSv1.2, TLSv1.3)")
    return min((_TLS_VERSIONS[n] for n in names), key=lambda v: v.value)
