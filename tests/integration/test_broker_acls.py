"""ACLs with real clients: SASL users, confluent-kafka's AdminClient ACL calls, and kcat.

The broker runs Kafka's StandardAuthorizer settings (``authorizer.class.name``,
``super.users=User:admin``) on a SASL_PLAINTEXT listener. The admin grants alice WRITE and READ
on ``orders`` and READ on the group ``billing``, and READ on every topic prefixed ``logs-``;
bob gets nothing. A user checks what Kafka would do: alice produces and consumes, bob's records
are refused (TOPIC_AUTHORIZATION_FAILED) and his metadata does not list ``orders``, alice
cannot use another group, ACLs can be described and deleted, and they survive a restart.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka.admin import (
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    ResourcePatternFilter,
)
from kafka.admin import ResourceType as KpResourceType
from kafka.errors import ClusterAuthorizationFailedError

from tests.integration.broker_process import STANDARD_AUTHORIZER, BrokerProcess, plain_jaas
from tests.integration.client_helpers import sasl_conf, take

pytestmark = pytest.mark.integration

PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
JAAS = plain_jaas(PASSWORDS)
ALLOW = AclPermissionType.ALLOW


def _conf(broker: BrokerProcess, user: str, **more: Any) -> dict[str, Any]:
    return sasl_conf(broker.bootstrap, "SCRAM-SHA-256", user, PASSWORDS[user], **more)


def _grant(user: str, kind: ResourceType, name: str, op: AclOperation, **kw: Any) -> AclBinding:
    pattern = kw.get("pattern", ResourcePatternType.LITERAL)
    return AclBinding(kind, name, pattern, f"User:{user}", "*", op, ALLOW)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    args = [
        "--config",
        f"sasl.jaas.config={JAAS};",
        "--config",
        f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "--config",
        "super.users=User:admin",
    ]
    data = tmp_path_factory.mktemp("acls") / "data"
    with BrokerProcess(data, sasl_plain=("admin", PASSWORDS["admin"]), extra_args=args) as b:
        admin = AdminClient(_conf(b, "admin"))
        for name in ("orders", "logs-app", "secret"):
            admin.create_topics([NewTopic(name, 1, 1)])[name].result(20)
        bindings = [
            _grant("alice", ResourceType.TOPIC, "orders", AclOperation.WRITE),
            _grant("alice", ResourceType.TOPIC, "orders", AclOperation.READ),
            _grant("alice", ResourceType.GROUP, "billing", AclOperation.READ),
            _grant(
                "alice",
                ResourceType.TOPIC,
                "logs-",
                AclOperation.READ,
                pattern=ResourcePatternType.PREFIXED,
            ),
        ]
        for future in admin.create_acls(bindings, request_timeout=20).values():
            future.result()
        yield b


def _produce(conf: dict[str, Any], topic: str, values: list[bytes]) -> list[KafkaError | None]:
    outcomes: list[KafkaError | None] = []
    producer = Producer({**conf, "message.timeout.ms": 5000})
    for v in values:
        producer.produce(topic, v, on_delivery=lambda err, _msg: outcomes.append(err))
    producer.flush(15)
    return outcomes


def test_granted_user_produces_and_consumes_in_its_group(broker: BrokerProcess) -> None:
    values = [f"order-{i}".encode() for i in range(50)]
    assert _produce(_conf(broker, "alice"), "orders", values) == [None] * 50
    consumer = Consumer(
        _conf(broker, "alice", **{"group.id": "billing", "auto.offset.reset": "earliest"})
    )
    consumer.subscribe(["orders"])
    try:
        got = take(consumer, 50)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(m.value() or b"" for m in got) == sorted(values)


def test_authorized_operations_follow_the_grants(broker: BrokerProcess) -> None:
    """describe_topics / describe_consumer_groups / describe_cluster with
    include_authorized_operations (Metadata v8+, DescribeGroups v3+; KIP-430): what alice may
    do, with DESCRIBE implied by READ and WRITE; the super user may do everything."""
    alice = AdminClient(_conf(broker, "alice"))
    ask = {"include_authorized_operations": True, "request_timeout": 20}
    topic = alice.describe_topics(TopicCollection(["orders"]), **ask)["orders"].result()
    want = {AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE}
    assert set(topic.authorized_operations) == want
    group = alice.describe_consumer_groups(["billing"], **ask)["billing"].result()
    assert set(group.authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE}
    assert not alice.describe_cluster(**ask).result().authorized_operations
    admin = AdminClient(_conf(broker, "admin"))
    cluster = admin.describe_cluster(**ask).result()
    assert {AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CREATE} <= set(
        cluster.authorized_operations
    )
    secret = admin.describe_topics(TopicCollection(["secret"]), **ask)["secret"].result()
    assert len(secret.authorized_operations) == 8  # every topic operation


def test_user_without_acls_is_refused_and_sees_no_topics(broker: BrokerProcess) -> None:
    outcomes = _produce(_conf(broker, "bob"), "orders", [b"not allowed"])
    assert len(outcomes) == 1 and outcomes[0] is not None
    assert outcomes[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    listed = AdminClient(_conf(broker, "bob")).list_topics(timeout=10).topics
    assert "orders" not in listed and "secret" not in listed
    alice_sees = AdminClient(_conf(broker, "alice")).list_topics(timeout=10).topics
    assert {"orders", "logs-app"} <= set(alice_sees) and "secret" not in alice_sees


def test_other_group_and_unlisted_topic_are_refused(broker: BrokerProcess) -> None:
    consumer = Consumer(
        _conf(broker, "alice", **{"group.id": "not-billing", "auto.offset.reset": "earliest"})
    )
    consumer.subscribe(["orders"])
    codes: set[int] = set()
    deadline = time.monotonic() + 15
    try:
        while KafkaError.GROUP_AUTHORIZATION_FAILED not in codes:
            assert time.monotonic() < deadline, f"no group authorization error, saw {codes}"
            try:
                for m in consumer.consume(10, 0.5):
                    err = m.error()
                    assert err is not None, "a message reached an unauthorized group"
                    codes.add(err.code())
            except KafkaException as e:
                codes.add(e.args[0].code())
    finally:
        consumer.close()
    outcomes = _produce(_conf(broker, "alice"), "logs-app", [b"read-only"])
    assert outcomes[0] is not None
    assert outcomes[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kcat_reads_under_a_prefixed_acl(broker: BrokerProcess) -> None:
    admin_producer = _produce(_conf(broker, "admin"), "logs-app", [b"line-1", b"line-2"])
    assert admin_producer == [None, None]
    login = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN"]
    login += ["-X", "sasl.username=alice", "-X", f"sasl.password={PASSWORDS['alice']}"]
    out = subprocess.run(
        ["kcat", "-b", broker.bootstrap, *login, "-C", "-t", "logs-app", "-e", "-o", "beginning"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["line-1", "line-2"]


def test_acls_are_described_deleted_and_survive_a_restart(broker: BrokerProcess) -> None:
    admin = AdminClient(_conf(broker, "admin"))
    everything = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    described = admin.describe_acls(everything, request_timeout=10).result()
    assert len(described) == 4
    assert {(b.name, b.operation) for b in described if b.principal == "User:alice"} >= {
        ("orders", AclOperation.WRITE),
        ("billing", AclOperation.READ),
    }
    # only a principal with DESCRIBE on the cluster may list ACLs; librdkafka's describe_acls
    # drops the response's top-level error (an empty list), so kafka-python checks the refusal

    alice = KafkaAdminClient(
        bootstrap_servers=broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_plain_username="alice",
        sasl_plain_password=PASSWORDS["alice"],
    )
    anything = ResourcePatternFilter(KpResourceType.ANY, None, ACLResourcePatternType.ANY)
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            alice.describe_acls(
                ACLFilter(None, "*", ACLOperation.ANY, ACLPermissionType.ANY, anything)
            )
    finally:
        alice.close()

    broker.restart()
    admin = AdminClient(_conf(broker, "admin"))
    assert len(admin.describe_acls(everything, request_timeout=10).result()) == 4
    group_acls = AclBindingFilter(
        ResourceType.GROUP,
        "billing",
        ResourcePatternType.LITERAL,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    deleted = admin.delete_acls([group_acls], request_timeout=10)[group_acls].result()
    assert [(b.name, b.operation) for b in deleted] == [("billing", AclOperation.READ)]
    assert len(admin.describe_acls(everything, request_timeout=10).result()) == 3


def test_acl_calls_without_an_authorizer_say_security_is_disabled(
    broker_factory: Any,
) -> None:
    plain = broker_factory()
    admin = AdminClient({"bootstrap.servers": plain.bootstrap})
    binding = AclBinding(
        ResourceType.TOPIC,
        "t",
        ResourcePatternType.LITERAL,
        "User:x",
        "*",
        AclOperation.READ,
        ALLOW,
    )
    with pytest.raises(KafkaException) as refused:
        admin.create_acls([binding], request_timeout=10)[binding].result()
    assert refused.value.args[0].code() == KafkaError.SECURITY_DISABLED


def test_transactions_need_write_on_the_transactional_id(broker: BrokerProcess) -> None:
    refused = Producer(_conf(broker, "alice", **{"transactional.id": "tx-alice-1"}))
    with pytest.raises(KafkaException) as no_grant:
        refused.init_transactions(15)
    assert no_grant.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED

    admin = AdminClient(_conf(broker, "admin"))
    txn_ids = _grant(
        "alice",
        ResourceType.TRANSACTIONAL_ID,
        "tx-alice-",
        AclOperation.WRITE,
        pattern=ResourcePatternType.PREFIXED,
    )
    audit = _grant("alice", ResourceType.GROUP, "audit", AclOperation.READ)
    for future in admin.create_acls([txn_ids, audit], request_timeout=10).values():
        future.result()
    producer = Producer(_conf(broker, "alice", **{"transactional.id": "tx-alice-2"}))
    producer.init_transactions(15)
    producer.begin_transaction()
    producer.produce("orders", b"in a transaction")
    producer.commit_transaction(15)
    consumer = Consumer(
        _conf(
            broker,
            "alice",
            **{"group.id": "audit", "isolation.level": "read_committed"},
        )
    )
    consumer.assign([TopicPartition("orders", 0, 0)])
    try:
        values = {m.value() for m in take(consumer, 51, timeout=10)}  # 50 earlier, 1 here
    finally:
        consumer.close()
    assert b"in a transaction" in values
