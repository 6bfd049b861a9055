"""``tiered-mq topics`` and ``groups`` against a SASL_PLAINTEXT listener, logged in with
SCRAM through ``-X``; without ``-X`` they fail with the original error and a hint that the
listener may need TLS or SASL settings."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_cli_users import ADMIN, ADMIN_PASSWORD, JAAS, login, users
from tiered_mq.cli import main

pytestmark = pytest.mark.integration

SCRAM = login("SCRAM-SHA-512", "erin", "erin-secret")


@pytest.fixture(scope="module")
def scram_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A SASL_PLAINTEXT broker (PLAIN admin from its JAAS config) with SCRAM user erin."""
    data = tmp_path_factory.mktemp("cli-sasl") / "data"
    args = ["--config", f"sasl.jaas.config={JAAS}"]
    with BrokerProcess(data, sasl_plain=(ADMIN, ADMIN_PASSWORD), extra_args=args) as broker:
        made = users(
            broker, "set", "erin", "-m", "SCRAM-SHA-512", "--password-stdin", input="erin-secret\n"
        )
        assert made.exit_code == 0, made.output
        yield broker


def cli(broker: BrokerProcess, *args: str, input: str | None = None) -> Result:
    """``tiered-mq ARGS -b BROKER`` logged in as erin with SCRAM-SHA-512; must succeed."""
    result = CliRunner().invoke(main, [*args, "-b", broker.bootstrap, *SCRAM], input=input)
    assert result.exit_code == 0, result.output
    return result


def test_topics_and_groups_through_scram(scram_broker: BrokerProcess) -> None:
    topic, group = f"sasl-{uuid.uuid4().hex[:8]}", f"sasl-grp-{uuid.uuid4().hex[:8]}"
    made = cli(scram_broker, "topics", "create", topic, "-p", "2", "-c", "retention.ms=3600000")
    assert f"Created topic {topic} (2 partitions" in made.output
    assert topic in cli(scram_broker, "topics", "list").output.splitlines()
    described = cli(scram_broker, "topics", "describe", topic).output.splitlines()
    assert described[0] == f"Topic: {topic}  Partitions: 2  ReplicationFactor: 1"
    assert any(line.split()[:2] == ["retention.ms", "3600000"] for line in described)
    cli(scram_broker, "topics", "alter-config", topic, "--set", "segment.bytes=1048576")
    assert "segment.bytes" in cli(scram_broker, "topics", "describe", topic).output

    cli(scram_broker, "produce", topic, "-p", "0", input="a\nb\nc\n")
    consumed = cli(scram_broker, "consume", topic, "-g", group, "--from-beginning", "-n", "3")
    assert consumed.stdout.splitlines() == ["a", "b", "c"]
    listed = cli(scram_broker, "groups", "list").output.splitlines()
    assert any(line.split()[0] == group for line in listed[1:])
    out = cli(scram_broker, "groups", "describe", group).output.splitlines()
    assert out[0].startswith(f"Group: {group}  State: EMPTY")
    row = next(line.split() for line in out if line.startswith(topic))
    assert row[:5] == [topic, "0", "3", "3", "0"]
    assert "Total lag: 0" in out

    cli(scram_broker, "topics", "delete", topic)
    assert topic not in cli(scram_broker, "topics", "list").output.splitlines()


def test_broker_configs_through_scram_and_plain(scram_broker: BrokerProcess) -> None:
    """``configs`` logs in on a connection of its own (client/connection.py): SCRAM as erin,
    PLAIN as the admin; a wrong password is refused with the broker's error, in one line."""
    ok = cli(scram_broker, "configs", "alter", "--broker-default", "--set", "log.roll.ms=3600000")
    assert ok.stdout == "Altered configs of the broker default: log.roll.ms=3600000\n"
    out = cli(scram_broker, "configs", "describe", "--broker", "0").stdout.splitlines()
    assert ["log.roll.ms", "3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG"] in [ln.split() for ln in out]
    argv = ["configs", "alter", "--broker-default", "--delete", "log.roll.ms"]
    admin = login("PLAIN", ADMIN, ADMIN_PASSWORD)
    ok = CliRunner().invoke(main, [*argv, "-b", scram_broker.bootstrap, *admin])
    assert ok.exit_code == 0, ok.output

    wrong = login("SCRAM-SHA-512", "erin", "not-erins-secret")
    argv = ["configs", "describe", "--broker-default", "-b", scram_broker.bootstrap, *wrong]
    refused = CliRunner().invoke(main, argv)
    assert refused.exit_code == 1
    [error] = refused.stderr.splitlines()
    assert error.startswith(
        f"Error: SASL_AUTHENTICATION_FAILED: login to {scram_broker.bootstrap} with SCRAM-SHA-512"
    ), error


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        (
            ["configs", "describe", "--broker-default"],
            ("Error: _TRANSPORT: connection to ",),  # closed by the broker: not logged in
        ),
        # the listener closes the connection of a client that does not log in: librdkafka
        # reports every broker down (and then the admin client gives up at once), or reports
        # the metadata request the listener drops as either error first
        (
            ["topics", "list"],
            (
                "Error: _TRANSPORT: list topics: no broker could be reached",
                "Error: _TRANSPORT: list topics: Failed to get metadata: ",
                "Error: _TIMED_OUT: list topics: Failed to get metadata: ",
            ),
        ),
        (["groups", "list"], ("Error: _TRANSPORT: list groups: no broker could be reached",)),
    ],
)
def test_without_x_the_error_says_why(
    scram_broker: BrokerProcess, args: list[str], errors: tuple[str, ...]
) -> None:
    argv = [*args, "-b", scram_broker.bootstrap, "--timeout", "3"]
    refused = CliRunner().invoke(main, argv)
    assert refused.exit_code == 1
    lines = refused.stderr.splitlines()
    assert lines[-2].startswith(errors), refused.stderr
    lead = "could not talk to" if "_TRANSPORT" in lines[-2] else "no answer from"
    # configs --broker-default goes over the CLI's own connection: librdkafka logs nothing
    log = "" if args[0] == "configs" else " -v shows librdkafka's log"
    assert lines[-1] == (
        f"hint: {lead} the broker at {scram_broker.bootstrap}: is it running, and does its"
        f" listener need TLS or SASL (-X security.protocol=...)?{log}"
    )


@pytest.mark.parametrize(
    "args", [["topics", "list"], ["topics", "create", "t"], ["groups", "list"]]
)
def test_a_wrong_password_is_named_at_once(scram_broker: BrokerProcess, args: list[str]) -> None:
    wrong = login("SCRAM-SHA-512", "erin", "not-erins-secret")
    started = time.monotonic()
    refused = CliRunner().invoke(main, [*args, "-b", scram_broker.bootstrap, *wrong])
    assert refused.exit_code == 1
    error = refused.stderr.splitlines()[-1]
    assert error.startswith("Error: _AUTHENTICATION: "), refused.stderr
    assert "Authentication failed" in error
    assert time.monotonic() - started < 10  # not after the 15 s timeout, as _TIMED_OUT
