"""The ``ssl.*`` settings: a context clients can talk to, and the error each mistake gets."""

from __future__ import annotations

import re
import ssl
from pathlib import Path

import pytest
import trustme
from cryptography.hazmat.primitives import serialization

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.tls import ssl_context


def config(tmp_path: Path, **props: str) -> BrokerConfig:
    return BrokerConfig(tmp_path, overrides=props)


@pytest.fixture
def pem(tmp_path: Path) -> tuple[Path, Path]:
    """(server key + chain, CA) PEM files."""
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    keystore, cafile = tmp_path / "server.pem", tmp_path / "ca.pem"
    server.private_key_and_cert_chain_pem.write_to_path(str(keystore))
    ca.cert_pem.write_to_path(str(cafile))
    return keystore, cafile


def test_ssl_context_serves_a_client_that_trusts_the_ca(
    tmp_path: Path, pem: tuple[Path, Path]
) -> None:
    keystore, cafile = pem
    server = ssl_context(config(tmp_path, **{"ssl.keystore.location": str(keystore)}))
    assert server.verify_mode == ssl.CERT_NONE
    assert server.minimum_version == ssl.TLSVersion.TLSv1_2
    client = ssl.create_default_context(cafile=str(cafile))
    a, b = ssl.MemoryBIO(), ssl.MemoryBIO()
    c_in, c_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    s = server.wrap_bio(a, b, server_side=True)
    c = client.wrap_bio(c_in, c_out, server_hostname="localhost")
    for _ in range(10):  # handshake through memory
        for side in (c, s):
            try:
                side.do_handshake()
            except ssl.SSLWantReadError:
                pass
        a.write(c_out.read())
        c_in.write(b.read())
    c.write(b"ping")
    a.write(c_out.read())
    assert s.read() == b"ping"


def test_client_auth_required_needs_a_truststore(tmp_path: Path, pem: tuple[Path, Path]) -> None:
    keystore, cafile = pem
    props = {"ssl.keystore.location": str(keystore), "ssl.client.auth": "required"}
    with pytest.raises(ValueError, match=re.escape("needs ssl.truststore.location")):
        ssl_context(config(tmp_path, **props))
    props["ssl.truststore.location"] = str(cafile)
    assert ssl_context(config(tmp_path, **props)).verify_mode == ssl.CERT_REQUIRED


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "needs ssl.keystore.location"),
        ({"ssl.keystore.type": "JKS"}, "only PEM"),
        ({"ssl.keystore.location": "/nonexistent.pem"}, "ssl.keystore.location=/nonexistent"),
        ({"ssl.client.auth": "maybe"}, "ssl.client.auth=maybe"),
        ({"ssl.enabled.protocols": "TLSv1"}, "ssl.enabled.protocols"),
        ({"ssl.truststore.location": "/nonexistent.pem"}, "ssl.truststore.location"),
    ],
)
def test_bad_ssl_settings_name_the_key(
    tmp_path: Path, pem: tuple[Path, Path], props: dict[str, str], message: str
) -> None:
    keystore, _ = pem
    if props and "ssl.keystore.location" not in props:
        props = {"ssl.keystore.location": str(keystore), **props}
    with pytest.raises(ValueError, match=re.escape(message)):
        ssl_context(config(tmp_path, **props))


def test_encrypted_key_needs_its_password(tmp_path: Path) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("localhost")
    key = serialization.load_pem_private_key(cert.private_key_pem.bytes(), None)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )
    path = tmp_path / "server.pem"
    path.write_bytes(encrypted + b"".join(c.bytes() for c in cert.cert_chain_pems))
    props = {"ssl.keystore.location": str(path), "ssl.key.password": "wrong"}
    with pytest.raises(ValueError, match=re.escape("ssl.keystore.location")):
        ssl_context(config(tmp_path, **props))
    props["ssl.key.password"] = "secret"
    ssl_context(config(tmp_path, **props))


def test_keystore_per_listener(tmp_path: Path, pem: tuple[Path, Path]) -> None:
    keystore, _ = pem
    c = config(tmp_path, **{"listener.name.external.ssl.keystore.location": str(keystore)})
    assert ssl_context(c, "EXTERNAL").verify_mode == ssl.CERT_NONE
    with pytest.raises(ValueError, match=re.escape("TLS listener INTERNAL needs ssl.keystore")):
        ssl_context(c, "INTERNAL")


def test_client_certificate_principal_is_its_rfc2253_subject() -> None:
    from tiered_mq.broker.tls import tls_principal

    subject = (
        (("countryName", "US"),),
        (("organizationName", "Example, Inc"),),
        (("commonName", "client-1"),),
    )
    assert tls_principal({"subject": subject}) == "User:CN=client-1,O=Example\\, Inc,C=US"
    assert tls_principal(None) is None
    assert tls_principal({}) is None


def test_attributes_without_an_rfc2253_keyword_print_as_java_does() -> None:
    """Java's ``X500Principal.getName()`` (Kafka's principal) prints emailAddress as its OID
    and the hex of its DER IA5String; the expected DN is the one Java printed for this subject."""
    from tiered_mq.broker.tls import tls_principal

    subject = (
        (("countryName", "UK"),),
        (("stateOrProvinceName", "Scotland"),),
        (("localityName", "Glasgow"),),
        (("organizationName", "Monkey Machine Ltd"),),
        (("organizationalUnitName", "Open Source Development Lab."),),
        (("commonName", "Luke Taylor"),),
        (("emailAddress", "luke@monkeymachine"),),
    )
    assert tls_principal({"subject": subject}) == (
        "User:1.2.840.113549.1.9.1=#16126c756b65406d6f6e6b65796d616368696e65,CN=Luke Taylor,"
        "OU=Open Source Development Lab.,O=Monkey Machine Ltd,L=Glasgow,ST=Scotland,C=UK"
    )
    long_email = "x" * 200 + "@example.com"  # DER long-form length: 0x81, then one byte
    principal = tls_principal({"subject": ((("emailAddress", long_email),),)})
    assert principal == f"User:1.2.840.113549.1.9.1=#1681d4{long_email.encode().hex()}"
