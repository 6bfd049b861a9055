"""``ssl.principal.mapping.rules`` with mutual TLS and ACLs, driven by confluent-kafka.

The broker maps a certificate subject ``CN=<name>,OU=Services,O=Example`` to ``<name>`` in lower
case; any other subject has no rule (no ``DEFAULT``), so its client's connection is closed, as
Kafka closes it. ``super.users=User:ops`` then means the certificate whose CN is ``Ops``: it may
create a topic, while the certificate of ``Reader`` (no ACL) may not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import STANDARD_AUTHORIZER, BrokerProcess
from tests.integration.client_helpers import broker_certificate

pytestmark = pytest.mark.integration

RULES = r"RULE:^CN=([^,]+),OU=Services,O=Example$/$1/L"


def _client_cert(ca: trustme.CA, directory: Path, cn: str, ou: str) -> tuple[Path, Path]:
    cert = ca.issue_cert(
        f"{cn.lower()}.clients.test",
        common_name=cn,
        organization_name="Example",
        organization_unit_name=ou,
    )
    chain, key = directory / f"{cn}-{ou}-chain.pem", directory / f"{cn}-{ou}-key.pem"
    chain.write_bytes(b"".join(c.bytes() for c in cert.cert_chain_pems))
    cert.private_key_pem.write_to_path(str(key))
    return chain, key


@pytest.fixture(scope="module")
def mtls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, Any, Path]]:
    directory = tmp_path_factory.mktemp("tls-principals")
    pki = broker_certificate(directory)
    ca = trustme.CA()  # the clients' CA, the broker's truststore
    client_ca = directory / "client-ca.pem"
    ca.cert_pem.write_to_path(str(client_ca))
    args = [
        "--config", f"ssl.keystore.location={pki.keystore}",
        "--config", f"ssl.truststore.location={client_ca}",
        "--config", "ssl.client.auth=required",
        "--config", f"ssl.principal.mapping.rules={RULES}",
        "--config", f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "--config", "super.users=User:ops",
    ]  # fmt: skip
    ready = pki.client  # the readiness check logs in with a certificate that maps
    ready.load_cert_chain(*_client_cert(ca, directory, "Probe", "Services"))
    with BrokerProcess(directory / "data", tls=ready, extra_args=args) as broker:
        yield broker, ca, pki.cafile


def _admin(broker: BrokerProcess, cafile: Path, cert: tuple[Path, Path]) -> AdminClient:
    chain, key = cert
    return AdminClient(
        {
            "bootstrap.servers": broker.bootstrap,
            "security.protocol": "SSL",
            "ssl.ca.location": str(cafile),
            "ssl.certificate.location": str(chain),
            "ssl.key.location": str(key),
            "socket.timeout.ms": 5000,
        }
    )


def test_mapped_name_is_the_principal(mtls: tuple[BrokerProcess, Any, Path]) -> None:
    broker, ca, cafile = mtls
    ops = _client_cert(ca, broker.data_dir.parent, "Ops", "Services")
    admin = _admin(broker, cafile, ops)
    admin.create_topics([NewTopic("made-by-ops", 1, 1)])["made-by-ops"].result(20)
    assert "made-by-ops" in admin.list_topics(timeout=10).topics
    reader = _client_cert(ca, broker.data_dir.parent, "Reader", "Services")
    reader_admin = _admin(broker, cafile, reader)
    refused = reader_admin.create_topics([NewTopic("made-by-reader", 1, 1)])
    with pytest.raises(KafkaException, match="TOPIC_AUTHORIZATION_FAILED"):
        refused["made-by-reader"].result(20)


def test_certificate_no_rule_maps_is_turned_away(mtls: tuple[BrokerProcess, Any, Path]) -> None:
    broker, ca, cafile = mtls
    stranger = _client_cert(ca, broker.data_dir.parent, "Ops", "Elsewhere")  # OU has no rule
    with pytest.raises(KafkaException):
        _admin(broker, cafile, stranger).list_topics(timeout=5)
    assert "no ssl.principal.mapping.rules rule applies to CN=Ops,OU=Elsewhere" in (
        broker.log_tail(50)
    )
    ops = _client_cert(ca, broker.data_dir.parent, "Ops", "Services")
    assert _admin(broker, cafile, ops).list_topics(timeout=10).topics  # others still served
