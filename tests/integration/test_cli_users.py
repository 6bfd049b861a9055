"""``tiered-mq users`` against a real broker with a SASL listener: a user created from the
CLI logs in with SCRAM at once, is listed with its mechanisms, and is refused once deleted.
With ACLs on, ``list`` by a user without DESCRIBE on the cluster exits 1 with a clear error
(never the abort librdkafka 2.16 hits on Kafka's top-level refusal)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from click.testing import CliRunner, Result
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from tests.integration.broker_process import STANDARD_AUTHORIZER, BrokerProcess, plain_jaas
from tests.integration.client_helpers import confluent_round_trip, sasl_conf
from tiered_mq.cli import main

pytestmark = pytest.mark.integration

ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
JAAS = plain_jaas({ADMIN: ADMIN_PASSWORD})


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("cli-users") / "data"
    args = ["--config", f"sasl.jaas.config={JAAS}"]
    with BrokerProcess(data, sasl_plain=(ADMIN, ADMIN_PASSWORD), extra_args=args) as broker:
        yield broker


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """ACLs on, the admin a super user; frank has no ACL, auditor may DESCRIBE the cluster."""
    data = tmp_path_factory.mktemp("cli-users-acls") / "data"
    args = [
        *("--config", f"sasl.jaas.config={JAAS}"),
        *("--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"),
        *("--config", f"super.users=User:{ADMIN}"),
    ]  # fmt: skip
    with BrokerProcess(data, sasl_plain=(ADMIN, ADMIN_PASSWORD), extra_args=args) as broker:
        for user in ("frank", "auditor"):
            made = users(broker, "set", user, "--password-stdin", input=f"{user}-secret\n")
            assert made.exit_code == 0, made.output
        admin = AdminClient(client_conf(broker, "PLAIN", ADMIN_PASSWORD, user=ADMIN))
        describe = AclBinding(
            ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:auditor",
            "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW,
        )  # fmt: skip
        admin.create_acls([describe], request_timeout=20)[describe].result(20)
        yield broker


def login(mechanism: str, user: str, password: str) -> list[str]:
    return [
        "-X", "security.protocol=SASL_PLAINTEXT",
        "-X", f"sasl.mechanism={mechanism}",
        "-X", f"sasl.username={user}",
        "-X", f"sasl.password={password}",
    ]  # fmt: skip


def users(
    broker: BrokerProcess, *args: str, input: str | None = None, who: Sequence[str] = ()
) -> Result:
    """``tiered-mq users ARGS``, logged in as ``who`` (``login(...)``; the admin by default)."""
    who = who or login("PLAIN", ADMIN, ADMIN_PASSWORD)
    argv = ["users", *args, "-b", broker.bootstrap, "--timeout", "10", *who]
    return CliRunner().invoke(main, argv, input=input)


def client_conf(
    broker: BrokerProcess, mechanism: str, password: str, user: str = "carol"
) -> dict[str, Any]:
    return sasl_conf(broker.bootstrap, mechanism, user, password)


def can_log_in(broker: BrokerProcess, mechanism: str, password: str) -> bool:
    admin = AdminClient({**client_conf(broker, mechanism, password), "socket.timeout.ms": 4000})
    try:
        admin.list_topics(timeout=4)
        return True
    except Exception:
        return False


def test_set_list_log_in_delete(sasl_broker: BrokerProcess) -> None:
    assert not can_log_in(sasl_broker, "SCRAM-SHA-256", "carol-secret")
    made = users(sasl_broker, "set", "carol", "--password-stdin", input="carol-secret\n")
    assert made.exit_code == 0, made.output
    assert "SCRAM-SHA-256 credential of carol (8192 iterations)" in made.output
    made = users(
        sasl_broker, "set", "carol", "-m", "scram-sha-512", "--iterations", "4096",
        "--password-stdin", input="carol-512\n",
    )  # fmt: skip
    assert made.exit_code == 0, made.output

    listed = users(sasl_broker, "list")
    assert listed.exit_code == 0, listed.output
    rows = [line.split() for line in listed.output.splitlines()]
    assert ["carol", "SCRAM-SHA-256", "8192"] in rows
    assert ["carol", "SCRAM-SHA-512", "4096"] in rows

    confluent_round_trip(client_conf(sasl_broker, "SCRAM-SHA-256", "carol-secret"), "carol-1", 50)
    confluent_round_trip(client_conf(sasl_broker, "SCRAM-SHA-512", "carol-512"), "carol-2", 50)
    assert not can_log_in(sasl_broker, "SCRAM-SHA-256", "carol-512")  # per-mechanism password

    gone = users(sasl_broker, "delete", "carol")
    assert gone.exit_code == 0, gone.output
    assert not can_log_in(sasl_broker, "SCRAM-SHA-256", "carol-secret")
    assert can_log_in(sasl_broker, "SCRAM-SHA-512", "carol-512")
    rows = [line.split() for line in users(sasl_broker, "list").output.splitlines()]
    assert ["carol", "SCRAM-SHA-256", "8192"] not in rows


def test_errors_are_reported(sasl_broker: BrokerProcess) -> None:
    missing = users(sasl_broker, "delete", "nobody")
    assert missing.exit_code == 1
    assert "RESOURCE_NOT_FOUND" in missing.output
    low = users(sasl_broker, "set", "dave", "--iterations", "100", "--password-stdin", input="x\n")
    assert low.exit_code == 2  # refused before asking the broker
    empty = users(sasl_broker, "set", "dave", "--password-stdin", input="\n")
    assert empty.exit_code == 2 and "empty" in empty.output


def test_list_needs_describe_on_the_cluster(acl_broker: BrokerProcess) -> None:
    # In a subprocess: Kafka refuses "describe all users" at the top level, and librdkafka
    # 2.16 then aborts the process; the CLI must check first and exit cleanly.
    frank = login("SCRAM-SHA-256", "frank", "frank-secret")
    argv = ["users", "list", "-b", acl_broker.bootstrap, "--timeout", "10", *frank]
    refused = subprocess.run(
        [sys.executable, "-m", "tiered_mq", *argv], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 1, (refused.returncode, refused.stderr)
    error = (
        "Error: CLUSTER_AUTHORIZATION_FAILED: "
        "not authorized: listing SCRAM users needs DESCRIBE on the cluster"
    )
    assert error in refused.stderr.splitlines(), refused.stderr
    assert refused.stdout == ""

    auditor = login("SCRAM-SHA-256", "auditor", "auditor-secret")
    for who in (auditor, ()):  # DESCRIBE granted by an ACL; the super user
        listed = users(acl_broker, "list", who=who)
        assert listed.exit_code == 0, listed.output
        rows = [line.split() for line in listed.output.splitlines()]
        assert rows[1:] == [
            ["auditor", "SCRAM-SHA-256", "8192"],
            ["frank", "SCRAM-SHA-256", "8192"],
        ]
