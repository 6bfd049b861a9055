"""TLS for SSL and SASL_SSL listeners: the server's ``ssl.SSLContext`` from Kafka's settings.

PEM files only::

    ssl.keystore.type        PEM (JKS and PKCS12 are refused: convert them with openssl)
    ssl.keystore.location    PEM file holding the private key and its certificate chain
    ssl.key.password         the private key's password, if it is encrypted (sensitive:
                             DescribeConfigs shows it as null)
    ssl.truststore.location  PEM CA certificates that client certificates must chain to
    ssl.client.auth          none | requested | required (the last two need a truststore)
    ssl.enabled.protocols    TLSv1.2,TLSv1.3 (the lowest listed is the minimum)
    ssl.principal.mapping.rules  how a client certificate's subject DN becomes the principal's
                             name (Kafka's RULE:pattern/replacement/[LU] and DEFAULT;
                             principal_mapping.py)

A setting that is wrong (missing or unreadable file, wrong password) raises ValueError naming
the key, and the broker does not start. Over TLS the server copies fetch data through the
encryption instead of using sendfile (response_writer.py).
"""

from __future__ import annotations

import ssl
from typing import Any, Final

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.listener import setting
from tiered_mq.broker.principal_mapping import PrincipalMapper

_TLS_VERSIONS: Final = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH: Final = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


def ssl_context(config: BrokerConfig, listener: str = "") -> ssl.SSLContext:
    """The server-side TLS context of an SSL or SASL_SSL listener, from ``ssl.*`` (each may
    be given per listener, ``listener.name.<name>.ssl.*``: listener.setting)."""

    def get(key: str) -> tuple[str, str]:
        return setting(config, listener, key)

    key, kind = get("ssl.keystore.type")
    if (kind or "PEM").upper() != "PEM":
        raise ValueError(f"{key}={kind}: only PEM is supported (convert with openssl)")
    key, keystore = get("ssl.keystore.location")
    if not keystore:
        raise ValueError(
            f"TLS listener {listener or '(default)'} needs ssl.keystore.location "
            "(PEM key and certificate)"
        )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = _minimum_version(*get("ssl.enabled.protocols"))
    try:
        ctx.load_cert_chain(keystore, password=get("ssl.key.password")[1] or None)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"{key}={keystore}: {e}") from None
    auth_key, auth = get("ssl.client.auth")
    auth = (auth or "none").lower()
    if auth not in _CLIENT_AUTH:
        raise ValueError(f"{auth_key}={auth}: expected none, requested or required")
    key, truststore = get("ssl.truststore.location")
    if truststore:
        try:
            ctx.load_verify_locations(cafile=truststore)
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"{key}={truststore}: {e}") from None
    elif auth != "none":
        raise ValueError(f"{auth_key}={auth} needs ssl.truststore.location")
    ctx.verify_mode = _CLIENT_AUTH[auth]
    return ctx


def _minimum_version(key: str, enabled: str) -> ssl.TLSVersion:
    names = [p.strip() for p in enabled.split(",") if p.strip()] or ["TLSv1.2"]
    unknown = [n for n in names if n not in _TLS_VERSIONS]
    if unknown:
        raise ValueError(f"{key}: {unknown} (supported: TLSv1.2, TLSv1.3)")
    return min((_TLS_VERSIONS[n] for n in names), key=lambda v: v.value)


# Python's attribute names -> the RFC 2253 keywords Kafka's principals use
_RDN_KEYWORDS: Final[dict[str, str]] = {
    "commonName": "CN",
    "organizationalUnitName": "OU",
    "organizationName": "O",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "countryName": "C",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


# Attributes RFC 2253 has no keyword for: Java (and so Kafka) prints them as
# ``<dotted OID>=#<hex of the value's DER>``. Python's peer certificate gives OpenSSL's long name
# and the text only, so the DER string type is the one certificate tools write for each
# attribute (PrintableString 0x13, IA5String 0x16, else UTF8String 0x0c, OpenSSL's default).
_OID_ATTRIBUTES: Final[dict[str, tuple[str, int]]] = {
    "emailAddress": ("1.2.840.113549.1.9.1", 0x16),
    "serialNumber": ("2.5.4.5", 0x13),
    "dnQualifier": ("2.5.4.46", 0x13),
    "surname": ("2.5.4.4", 0x0C),
    "title": ("2.5.4.12", 0x0C),
    "description": ("2.5.4.13", 0x0C),
    "businessCategory": ("2.5.4.15", 0x0C),
    "postalCode": ("2.5.4.17", 0x0C),
    "name": ("2.5.4.41", 0x0C),
    "givenName": ("2.5.4.42", 0x0C),
    "initials": ("2.5.4.43", 0x0C),
    "generationQualifier": ("2.5.4.44", 0x0C),
    "pseudonym": ("2.5.4.65", 0x0C),
    "organizationIdentifier": ("2.5.4.97", 0x0C),
}


def tls_principal(
    peercert: dict[str, Any] | None, mapper: PrincipalMapper | None = None
) -> str | None:
    """``User:<name>`` of a verified client certificate: the name ``mapper``
    (``ssl.principal.mapping.rules``, principal_mapping.py) gives its subject DN, by default
    the DN itself (RFC 2253 as Java prints it: most specific part first,
    ``CN=client,O=Example,C=US``, an attribute without an RFC 2253 keyword as its OID and
    hex DER, ``1.2.840.113549.1.9.1=#16...`` for emailAddress); None
    without a certificate. ValueError when no mapping rule applies to the DN."""
    if not peercert or not peercert.get("subject"):
        return None
    parts = []
    for rdn in reversed(peercert["subject"]):
        parts.append("+".join(_rdn_part(k, v) for k, v in rdn))
    dn = ",".join(parts)
    name = mapper.name(dn) if mapper is not None else dn
    if name is None:
        raise ValueError(f"no ssl.principal.mapping.rules rule applies to {dn}")
    return "User:" + name


def _rdn_part(attribute: str, value: str) -> str:
    """One ``type=value`` of a DN as Java's ``X500Principal.getName()`` prints it."""
    if attribute in _RDN_KEYWORDS:
        return f"{_RDN_KEYWORDS[attribute]}={_escape_rdn(value)}"
    if attribute in _OID_ATTRIBUTES:
        oid, tag = _OID_ATTRIBUTES[attribute]
        return f"{oid}=#{_der(tag, value.encode()).hex()}"
    return f"{attribute}={_escape_rdn(value)}"


def _der(tag: int, content: bytes) -> bytes:
    size = len(content)
    if size < 0x80:
        return bytes((tag, size)) + content
    length = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((tag, 0x80 | len(length))) + length + content


def _escape_rdn(value: str) -> str:
    escaped = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if escaped.startswith(("#", " ")):
        escaped = "\\" + escaped
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped
