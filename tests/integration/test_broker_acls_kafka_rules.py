"""ACL decisions where Kafka's rules are subtle, checked with real clients against a broker with
``allow.everyone.if.no.acl.found=true`` (resources without ACLs stay open), ``super.users=
User:admin`` on a SASL_PLAINTEXT listener, and Kafka password settings it accepts but does not use.

- An idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic; Kafka's
  ``authorizeByResourceType`` first asks about a name no one uses, so where ACLs leave a topic
  open, the producer that may write it may also get a producer id, even when the cluster
  resource has ACLs (for someone else).
- Metadata for a missing topic that would be auto-created for a principal who may describe but
  not create it answers TOPIC_AUTHORIZATION_FAILED: the producer fails at once.
- CreateTopics (v5+) describes a created topic only to a principal that may DESCRIBE_CONFIGS it.
- DescribeConfigs never shows Kafka's password settings (``ssl.truststore.password`` ...).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.integration.broker_process import (
    STANDARD_AUTHORIZER,
    BrokerProcess,
    plain_jaas,
    request,
)
from tests.integration.client_helpers import sasl_conf

pytestmark = pytest.mark.integration

PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
CREATE_TOPICS = 19
# accepted as Kafka configs although this broker does not use them: never to be shown
UNUSED_PASSWORDS = {
    "ssl.truststore.password": "truststore-secret",
    "ssl.keystore.password": "keystore-secret",
    "listener.name.sasl_plaintext.ssl.keystore.password": "listener-secret",
    # not Kafka configs at all (a typo, a plugin's setting): Kafka hides what it cannot type
    "ssl.keystore.pasword": "typo-secret",
    "listener.name.sasl_plaintext.plain.sasl.login.token": "plugin-secret",
}


def _conf(broker: BrokerProcess, user: str, **more: Any) -> dict[str, Any]:
    return sasl_conf(broker.bootstrap, "PLAIN", user, PASSWORDS[user], **more)


def _allow(
    user: str, kind: ResourceType, name: str, op: AclOperation, prefixed: bool = False
) -> AclBinding:
    pattern = ResourcePatternType.PREFIXED if prefixed else ResourcePatternType.LITERAL
    return AclBinding(kind, name, pattern, f"User:{user}", "*", op, AclPermissionType.ALLOW)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    args = [
        "--config", f"sasl.jaas.config={plain_jaas(PASSWORDS)}",
        "--config", f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "--config", "allow.everyone.if.no.acl.found=true",
        "--config", "super.users=User:admin",
    ]  # fmt: skip
    for key, value in UNUSED_PASSWORDS.items():
        args += ["--config", f"{key}={value}"]
    data = tmp_path_factory.mktemp("acl-rules") / "data"
    with BrokerProcess(data, sasl_plain=("admin", PASSWORDS["admin"]), extra_args=args) as b:
        admin = AdminClient(_conf(b, "admin"))
        for name in ("open", "orders"):
            admin.create_topics([NewTopic(name, 1, 1)])[name].result(20)
        bindings = [
            _allow("alice", ResourceType.TOPIC, "orders", AclOperation.WRITE),
            _allow("alice", ResourceType.TOPIC, "logs-", AclOperation.READ, prefixed=True),
            _allow("alice", ResourceType.TOPIC, "alice-", AclOperation.CREATE, prefixed=True),
            _allow("alice", ResourceType.TOPIC, "alice-", AclOperation.WRITE, prefixed=True),
            # an ACL on the cluster, for someone else: the cluster is no longer "no ACL found"
            _allow("alice", ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE),
        ]
        for future in admin.create_acls(bindings, request_timeout=20).values():
            future.result()
        yield b


def _produce(conf: dict[str, Any], topic: str) -> tuple[KafkaError | None, float]:
    """The delivery outcome of one record, and how long it took."""
    outcomes: list[KafkaError | None] = []
    producer = Producer({**conf, "message.timeout.ms": 15000})
    started = time.monotonic()
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: outcomes.append(err))
    producer.flush(20)
    return (outcomes[0] if outcomes else None), time.monotonic() - started


def test_idempotent_producer_writes_a_topic_left_open(broker: BrokerProcess) -> None:
    # bob has no ACL at all; "open" has none either, so allow.everyone.if.no.acl.found lets him
    # write it, with or without idempotence (Kafka: authorizeByResourceType asks "hardcode")
    for idempotent in (False, True):
        conf = _conf(broker, "bob", **{"enable.idempotence": idempotent})
        error, _ = _produce(conf, "open")
        assert error is None, (idempotent, error)


def test_missing_topic_its_producer_may_not_create_fails_at_once(broker: BrokerProcess) -> None:
    # alice may describe logs-* (READ implies DESCRIBE) but create (and write) only alice-*
    error, took = _produce(_conf(broker, "alice"), "logs-new")
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error
    assert took < 10
    admin = AdminClient(_conf(broker, "admin"))
    assert "logs-new" not in admin.list_topics(timeout=10).topics
    error, _ = _produce(_conf(broker, "alice"), "alice-auto")  # CREATE granted: auto-created
    assert error is None, error


def test_created_topic_is_described_only_with_describe_configs(broker: BrokerProcess) -> None:
    # alice may create alice-* (and write it), not DESCRIBE_CONFIGS it: Kafka withholds the
    # description (Java's CreateTopicsResult.config() fails with TopicAuthorizationException)
    body = {
        "topics": [
            {
                "name": "alice-made",
                "num_partitions": 2,
                "replication_factor": 1,
                "assignments": [],
                "configs": [{"name": "retention.ms", "value": "3600000"}],
            }
        ],
        "timeout_ms": 10000,
        "validate_only": False,
    }
    alice = ("alice", PASSWORDS["alice"])
    (made,) = request(broker.port, CREATE_TOPICS, 7, body, 10.0, None, alice)["topics"]
    assert made["error_code"] == 0
    assert made["topic_config_error_code"] == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert (made["num_partitions"], made["replication_factor"], made["configs"]) == (-1, -1, [])
    body["topics"][0]["name"] = "admin-made"
    admin = ("admin", PASSWORDS["admin"])
    (made,) = request(broker.port, CREATE_TOPICS, 7, body, 10.0, None, admin)["topics"]
    assert (made["topic_config_error_code"], made["num_partitions"]) == (0, 2)
    configs = {c["name"]: c["value"] for c in made["configs"]}
    assert configs["retention.ms"] == "3600000"


def test_password_settings_are_never_described(broker: BrokerProcess) -> None:
    admin = AdminClient(_conf(broker, "admin"))
    resource = ConfigResource(ResourceType.BROKER, "0")
    configs = admin.describe_configs([resource])[resource].result(20)
    for key in UNUSED_PASSWORDS:
        assert configs[key].value is None, key
        assert configs[key].is_sensitive, key
    shown = " ".join(str(c.value) for c in configs.values())
    assert not any(secret in shown for secret in UNUSED_PASSWORDS.values())
