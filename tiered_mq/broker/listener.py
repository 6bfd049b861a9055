"""The broker's listeners: ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map`` (Kafka's names and formats).

``listeners`` is a comma-separated list of ``NAME://host:port`` (empty: ``PLAINTEXT://`` on
``--host``/``--port``; an empty host binds every interface, port 0 any free port). A NAME is a
name that ``listener.security.protocol.map`` maps to a security protocol (PLAINTEXT, SSL,
SASL_PLAINTEXT, SASL_SSL). Kafka's default map takes each protocol's name to itself; a map that
is set replaces it whole, as in Kafka (``INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL`` leaves no
PLAINTEXT listener name), and a listener whose name it lacks is refused at start.
``advertised.listeners`` gives, per listener name, the host:port clients are told to use
(default: ``advertised.host.name``, else the listener's own host, with the listener's port;
port 0 means the bound port). A host that binds every interface (empty, ``0.0.0.0``, ``::``)
is advertised as the machine's canonical host name, as Kafka advertises an empty host
(``InetAddress.getLocalHost().getCanonicalHostName()``, ListenerInfo's
``withWildcardHostnamesResolved``): the forward lookup of the host name, then the reverse
lookup of that address (the address itself when the reverse lookup fails), looked up once at
start. Kafka refuses ``0.0.0.0`` there instead ("cannot use the nonroutable meta-address") and
sends ``::`` as it is; here both bind every interface, so the host name reaches them, from this
machine and from others that resolve it. A client elsewhere that cannot resolve the name
needs ``advertised.listeners`` (as in Kafka).

Each listener is its own server: a client that connected to one is answered, in Metadata and
FindCoordinator, with that listener's advertised address, so it never crosses to another
listener's protocol (internal and external addresses, as in Kafka's docker setups). TLS
settings: tls.py; SASL: sasl.py. As in Kafka, each ``ssl.*``/``sasl.*`` setting may be given
per listener, ``listener.name.<name>.<setting>`` (name in lower case), and a SASL one per
mechanism too, ``listener.name.<name>.<mechanism>.<setting>`` (``setting``). A wrong setting
raises ValueError naming the key.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, replace
from typing import Final

from tiered_mq.broker.config import BrokerConfig

PLAINTEXT: Final = "PLAINTEXT"
SSL: Final = "SSL"
SASL_PLAINTEXT: Final = "SASL_PLAINTEXT"
SASL_SSL: Final = "SASL_SSL"
PROTOCOLS: Final = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
# Kafka's PASSWORD-typed ssl.*/sasl.* configs: DescribeConfigs never shows their values
_SENSITIVE: Final = (
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "sasl.jaas.config",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
)
# Kafka's other ssl.*/sasl.* broker configs, none a password: shown as they are
_KNOWN_PLAIN: Final = frozenset(
    {
        "ssl.keystore.type", "ssl.keystore.location", "ssl.truststore.type",
        "ssl.truststore.location", "ssl.client.auth", "ssl.enabled.protocols", "ssl.protocol",
        "ssl.provider", "ssl.cipher.suites", "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm",
        "ssl.secure.random.implementation", "ssl.engine.factory.class",
        "ssl.principal.mapping.rules", "ssl.allow.dn.changes", "ssl.allow.san.changes",
        "sasl.enabled.mechanisms", "sasl.mechanism.inter.broker.protocol",
        "sasl.server.max.receive.size", "sasl.server.callback.handler.class",
        "sasl.client.callback.handler.class", "sasl.login.class",
        "sasl.login.callback.handler.class", "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds", "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms", "sasl.login.retry.backoff.ms",
        "sasl.login.retry.backoff.max.ms", "sasl.kerberos.service.name",
        "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules", "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.clock.skew.seconds",
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    }
)  # fmt: skip
_BIND_ALL: Final = frozenset({"", "0.0.0.0", "::"})


def canonical_host_name() -> str:
    """The machine's canonical host name, as Java's
    ``InetAddress.getLocalHost().getCanonicalHostName()`` finds it: the host name's address,
    then that address's name (the address when no name is found). A host name with no address
    here (Java's getLocalHost throws, and Kafka fails to start) is advertised as 127.0.0.1, what
    this broker advertised before: a name the machine cannot resolve would send every client,
    local ones included, nowhere."""
    host = socket.gethostname()
    try:
        address = socket.gethostbyname(host)
    except OSError:
        return "127.0.0.1"
    try:
        return socket.gethostbyaddr(address)[0]
    except OSError:
        return address


def is_sensitive(key: str) -> bool:
    """Whether DescribeConfigs must hide ``key``'s value: one of Kafka's password settings,
    also in its per-listener and per-mechanism forms (``listener.name.<l>[.<m>].<key>``). Only
    ``ssl.key.password`` and ``sasl.jaas.config`` are used here; the others are accepted as
    Kafka configs (copied server.properties hold them) and must not leak either.

    An ``ssl.*``/``sasl.*`` key that is not one of Kafka's configs (a misspelt
    ``ssl.keystore.pasword``, a plugin's secret) is hidden too: Kafka treats a config whose
    type it does not know as a password."""
    if any(key == name or key.endswith("." + name) for name in _SENSITIVE):
        return True
    base = _without_listener_prefix(key)
    return base.startswith(("ssl.", "sasl.")) and base not in _KNOWN_PLAIN


def _without_listener_prefix(key: str) -> str:
    """``ssl.x`` of ``listener.name.<l>.ssl.x`` and ``sasl.x`` of
    ``listener.name.<l>.<mechanism>.sasl.x``."""
    if not key.startswith("listener.name."):
        return key
    parts = key.split(".")[3:]  # after listener.name.<l>
    for i, part in enumerate(parts):
        if part in ("ssl", "sasl"):
            return ".".join(parts[i:])
    return ".".join(parts)


@dataclass(frozen=True)
class Listener:
    name: str  # PLAINTEXT, INTERNAL, ...
    protocol: str  # one of PROTOCOLS
    host: str  # to bind ("": every interface)
    port: int  # to bind (0: any), then the bound port
    advertised_host: str
    advertised_port: int  # 0: the bound port

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"

    @property
    def tls(self) -> bool:
        return self.protocol in (SSL, SASL_SSL)

    @property
    def sasl(self) -> bool:
        return self.protocol in (SASL_PLAINTEXT, SASL_SSL)

    @property
    def endpoint(self) -> tuple[str, int]:
        """(host, port) that clients of this listener are told to use."""
        return self.advertised_host, self.advertised_port or self.port

    def bound(self, port: int) -> Listener:
        return replace(self, port=port)


def setting(config: BrokerConfig, listener: str, key: str, mechanism: str = "") -> tuple[str, str]:
    """(key found, value) of ``key`` for ``listener``: the most specific of
    ``listener.name.<listener>.<mechanism>.<key>``, ``listener.name.<listener>.<key>`` and
    ``<key>`` that is set (value "" when none is)."""
    prefix = f"listener.name.{listener.lower()}."
    keys = [f"{prefix}{mechanism.lower()}.{key}"] if mechanism else []
    for name in [*keys, prefix + key, key]:
        value = config.get(name)
        if value:
            return name, value
    return key, ""


def listeners(config: BrokerConfig) -> list[Listener]:
    """The listeners ``config`` asks for, in the order given."""
    spec = (config.get("listeners") or "").strip()
    entries = _parse("listeners", spec) if spec else [(PLAINTEXT, config.host, config.port)]
    protocols = _protocol_map(config.get("listener.security.protocol.map") or "")
    advertised = {
        name: (host, port)
        for name, host, port in _parse(
            "advertised.listeners", (config.get("advertised.listeners") or "").strip()
        )
    }
    names = [name for name, _, _ in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"listeners={spec!r}: each listener name may appear once")
    ports = [port for _, _, port in entries if port]
    if len(set(ports)) != len(ports):
        raise ValueError(f"listeners={spec!r}: two listeners on one port")
    unknown = sorted(set(advertised) - set(names))
    if unknown:
        raise ValueError(f"advertised.listeners names {unknown} that listeners does not")
    if any(host in ("0.0.0.0", "::") for host, _ in advertised.values()):
        raise ValueError("advertised.listeners cannot use the meta-address 0.0.0.0 (or ::)")
    host_name = config.get("advertised.host.name") or ""
    out = []
    canonical = ""
    for name, host, port in entries:
        if name not in protocols:
            raise ValueError(
                f"listener {name}: no security protocol defined for it in "
                "listener.security.protocol.map"
            )
        ad_host, ad_port = advertised.get(name, (host_name or host, port))
        if ad_host in _BIND_ALL:  # Kafka: a blank host is advertised as the canonical name
            canonical = canonical or canonical_host_name()
            ad_host = canonical
        out.append(Listener(name, protocols[name], host, port, ad_host, ad_port))
    return out


def _parse(key: str, spec: str) -> list[tuple[str, str, int]]:
    out = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, address = item.partition("://")
        host, colon, port = address.rpartition(":")
        if not sep or not name or not colon or not port.isdigit():
            raise ValueError(f"{key}={spec!r}: expected NAME://host:port[,...]")
        if int(port) > 65535:
            raise ValueError(f"{key}={spec!r}: port {port} out of range 0-65535")
        out.append((name.upper(), host.strip("[]"), int(port)))
    return out


def _protocol_map(spec: str) -> dict[str, str]:
    """Listener name (upper case) -> security protocol, from ``NAME:PROTOCOL,...``: only the
    names ``spec`` gives (Kafka's default gives each protocol's own name)."""
    protocols: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or protocol not in PROTOCOLS:
            raise ValueError(
                f"listener.security.protocol.map: {item!r} (NAME:PROTOCOL, PROTOCOL one of "
                f"{', '.join(PROTOCOLS)})"
            )
        protocols[name.strip().upper()] = protocol
    return protocols
