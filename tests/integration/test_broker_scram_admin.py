"""SCRAM users managed through the Kafka API (AlterUserScramCredentials /
DescribeUserScramCredentials) with confluent-kafka's AdminClient, and kafka-python's, against a
`tiered-mq dev` broker with a SASL_PLAINTEXT listener.

An admin of ``sasl.jaas.config`` creates users; they log in with SCRAM-SHA-256 and -512 at once
and round-trip records; Describe shows mechanisms and iterations; a deleted credential no
longer logs in; users survive a broker restart (in cluster.json, or in ZooKeeper at Kafka's
``/config/users/<user>``); Kafka's per-user errors come back; with an authorizer only a user
with ALTER/DESCRIBE on the cluster may manage users.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from kafka import admin as kafka_admin
from kafka.errors import ClusterAuthorizationFailedError

from tests.integration.broker_process import STANDARD_AUTHORIZER, BrokerProcess, plain_jaas
from tests.integration.client_helpers import confluent_round_trip, sasl_conf
from tests.integration.conftest import BrokerFactory
from tests.integration.zookeeper_server import (  # noqa: F401  (the fixture)
    ZooKeeperServer,
    kazoo_client,
    zookeeper,
)

pytestmark = pytest.mark.integration

ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
JAAS = plain_jaas({ADMIN: ADMIN_PASSWORD})
SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
NAMES = {SHA256: "SCRAM-SHA-256", SHA512: "SCRAM-SHA-512"}


def _sasl_broker(broker_factory: BrokerFactory, *more: str) -> BrokerProcess:
    args = ["--config", f"sasl.jaas.config={JAAS}", *more]
    return broker_factory(sasl_plain=(ADMIN, ADMIN_PASSWORD), extra_args=args)


def _conf(broker: BrokerProcess, user: str, password: str, mechanism: str) -> dict[str, Any]:
    return sasl_conf(broker.bootstrap, mechanism, user, password)


def _admin(broker: BrokerProcess, user: str = ADMIN, password: str = ADMIN_PASSWORD) -> AdminClient:
    return AdminClient(_conf(broker, user, password, "SCRAM-SHA-256"))


def _alter(admin: AdminClient, changes: list[Any]) -> dict[str, KafkaError | None]:
    """The per-user outcome of one AlterUserScramCredentials request (None: done)."""
    outcome: dict[str, KafkaError | None] = {}
    for user, future in admin.alter_user_scram_credentials(changes, request_timeout=20).items():
        try:
            future.result(20)
            outcome[user] = None
        except KafkaException as e:
            outcome[user] = e.args[0]
    return outcome


def _python_admin(broker: BrokerProcess, user: str, password: str) -> Any:
    return kafka_admin.KafkaAdminClient(
        bootstrap_servers=broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username=user,
        sasl_plain_password=password,
    )


def _upsert(user: str, password: str, mechanism: ScramMechanism, iterations: int = 8192) -> Any:
    info = ScramCredentialInfo(mechanism, iterations)
    return UserScramCredentialUpsertion(user, info, password.encode())


def _described(admin: AdminClient, user: str) -> dict[str, int]:
    """Mechanism name -> iterations, as DescribeUserScramCredentials shows ``user``."""
    description = admin.describe_user_scram_credentials([user], request_timeout=20)[user].result(20)
    assert description.user == user
    return {NAMES[i.mechanism]: i.iterations for i in description.scram_credential_infos}


def _login_error(conf: dict[str, Any]) -> KafkaError:
    """The error a producer with ``conf`` reports when it cannot log in."""
    errors: list[KafkaError] = []
    producer = Producer({**conf, "message.timeout.ms": 3000, "error_cb": errors.append})
    producer.produce("never-written", b"x")
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    producer.flush(10)
    assert errors, "the login did not fail"
    return errors[0]


@pytest.fixture
def broker(broker_factory: BrokerFactory) -> BrokerProcess:
    """conftest's ``broker``, on a SASL_PLAINTEXT listener with the admin user."""
    return _sasl_broker(broker_factory)


def test_users_created_through_the_api_log_in_with_both_mechanisms(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    assert _alter(admin, [_upsert("carol", "carol-256", SHA256, 4096)]) == {"carol": None}
    assert _alter(admin, [_upsert("carol", "carol-512", SHA512, 16384)]) == {"carol": None}
    assert _described(admin, "carol") == {"SCRAM-SHA-256": 4096, "SCRAM-SHA-512": 16384}
    everyone = admin.describe_user_scram_credentials(request_timeout=20).result(20)
    assert sorted(everyone) == ["carol"]  # the sasl.jaas.config admin is not an API user
    confluent_round_trip(_conf(broker, "carol", "carol-256", "SCRAM-SHA-256"), "carol-256", 50)
    confluent_round_trip(_conf(broker, "carol", "carol-512", "SCRAM-SHA-512"), "carol-512", 50)
    # each mechanism has its own password: the other one does not log in
    wrong = _login_error(_conf(broker, "carol", "carol-256", "SCRAM-SHA-512"))
    assert wrong.code() == KafkaError._AUTHENTICATION, wrong
    # a new password replaces the old one for the next login
    assert _alter(admin, [_upsert("carol", "carol-new", SHA256)]) == {"carol": None}
    assert _described(admin, "carol")["SCRAM-SHA-256"] == 8192
    confluent_round_trip(_conf(broker, "carol", "carol-new", "SCRAM-SHA-256"), "carol-new", 10)
    old = _login_error(_conf(broker, "carol", "carol-256", "SCRAM-SHA-256"))
    assert old.code() == KafkaError._AUTHENTICATION, old


def test_a_deleted_credential_no_longer_logs_in(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    assert _alter(admin, [_upsert("dan", "dan-secret", SHA512)]) == {"dan": None}
    conf = _conf(broker, "dan", "dan-secret", "SCRAM-SHA-512")
    confluent_round_trip(conf, "dan-before", 10)
    assert _alter(admin, [UserScramCredentialDeletion("dan", SHA512)]) == {"dan": None}
    error = _login_error(conf)
    assert error.code() == KafkaError._AUTHENTICATION, error
    assert "SASL_AUTHENTICATION_FAILED" in error.str()
    with pytest.raises(KafkaException) as gone:
        _described(admin, "dan")
    assert gone.value.args[0].code() == KafkaError.RESOURCE_NOT_FOUND
    again = _alter(admin, [UserScramCredentialDeletion("dan", SHA512)])["dan"]
    assert again is not None and again.code() == KafkaError.RESOURCE_NOT_FOUND


def test_users_survive_a_restart(broker: BrokerProcess) -> None:
    assert _alter(_admin(broker), [_upsert("erin", "erin-secret", SHA256)]) == {"erin": None}
    broker.restart()
    assert _described(_admin(broker), "erin") == {"SCRAM-SHA-256": 8192}
    confluent_round_trip(_conf(broker, "erin", "erin-secret", "SCRAM-SHA-256"), "erin", 10)


def test_kafkas_errors_per_user(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    outcome = _alter(
        admin,
        [
            _upsert("few", "x", SHA256, 1000),
            _upsert("many", "x", SHA512, 16385),
            _upsert("ok", "ok-secret", SHA256),
            _upsert("twice", "x", SHA256),
            _upsert("twice", "y", SHA512),
            UserScramCredentialDeletion("nobody", SHA256),
        ],
    )
    codes = {user: e.code() if e is not None else None for user, e in outcome.items()}
    assert codes == {
        "few": KafkaError.UNACCEPTABLE_CREDENTIAL,
        "many": KafkaError.UNACCEPTABLE_CREDENTIAL,
        "ok": None,
        "twice": KafkaError.DUPLICATE_RESOURCE,  # one change per user and request, as in Kafka
        "nobody": KafkaError.RESOURCE_NOT_FOUND,
    }
    # nothing of a failed user was stored; the valid one was
    everyone = admin.describe_user_scram_credentials(request_timeout=20).result(20)
    assert sorted(everyone) == ["ok"]


def test_kafka_python_manages_users_too(broker: BrokerProcess) -> None:
    """kafka-python 3 salts the password itself (another implementation of the client side);
    confluent-kafka then logs in with it, and kafka-python's Describe sees it."""
    python_admin = _python_admin(broker, ADMIN, ADMIN_PASSWORD)
    try:
        upsert = kafka_admin.UserScramCredentialUpsertion("gina", "SCRAM-SHA-512", "gina-secret")
        assert python_admin.alter_user_scram_credentials([upsert]) == {"gina": None}
        described = python_admin.describe_user_scram_credentials(["gina"])
        assert described["gina"]["error"] is None
        infos = described["gina"]["credential_infos"]
        assert [(int(i["mechanism"]), i["iterations"]) for i in infos] == [(2, 4096)]
    finally:
        python_admin.close()
    confluent_round_trip(_conf(broker, "gina", "gina-secret", "SCRAM-SHA-512"), "gina", 10)


def test_only_a_user_allowed_on_the_cluster_manages_users(broker_factory: BrokerFactory) -> None:
    broker = _sasl_broker(
        broker_factory,
        *("--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"),
        *("--config", f"super.users=User:{ADMIN}"),
    )
    admin = _admin(broker)
    assert _alter(admin, [_upsert("frank", "frank-secret", SHA256)]) == {"frank": None}
    frank = _admin(broker, "frank", "frank-secret")  # logs in, but has no ACL on the cluster
    refused = _alter(frank, [_upsert("mallory", "x", SHA256)])["mallory"]
    assert refused is not None and refused.code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    with pytest.raises(KafkaException) as denied:
        _described(frank, "frank")
    assert denied.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    # all users: Kafka's top-level error (librdkafka 2.16 would abort on it: kafka-python here)
    python_admin = _python_admin(broker, "frank", "frank-secret")
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            python_admin.describe_user_scram_credentials()
    finally:
        python_admin.close()
    everyone = admin.describe_user_scram_credentials(request_timeout=20).result(20)
    assert sorted(everyone) == ["frank"]  # mallory was not created


def test_users_live_in_zookeeper_where_kafka_keeps_them(
    broker_factory: BrokerFactory,
    zookeeper: ZooKeeperServer,  # noqa: F811
) -> None:
    connect = zookeeper.connect_string(zookeeper.new_chroot())
    broker = _sasl_broker(broker_factory, "--config", f"zookeeper.connect={connect}")
    assert _alter(_admin(broker), [_upsert("zoe", "zoe-secret", SHA512)]) == {"zoe": None}
    zk = kazoo_client(connect)
    try:
        stored = json.loads(zk.get("/config/users/zoe")[0])
    finally:
        zk.stop()
    assert stored["version"] == 1 and list(stored["config"]) == ["SCRAM-SHA-512"]
    credential = stored["config"]["SCRAM-SHA-512"]
    assert credential.startswith("salt=") and credential.endswith(",iterations=8192")
    assert "zoe-secret" not in credential
    broker.restart()
    assert _described(_admin(broker), "zoe") == {"SCRAM-SHA-512": 8192}
    confluent_round_trip(_conf(broker, "zoe", "zoe-secret", "SCRAM-SHA-512"), "zoe", 10)
