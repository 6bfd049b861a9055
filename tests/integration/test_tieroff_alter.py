"""A tiered topic's ``remote.storage.enable`` true -> false through every admin path a user has
(confluent-kafka's IncrementalAlterConfigs SET and DELETE, the classic AlterConfigs that
replaces all overrides, ``validate_only``, and the CLI's ``topics alter-config`` and
``configs alter``) is refused as Kafka 3.9/4.x refuses it (KIP-950,
``LogConfig.validateTurningOffRemoteStorageWithDelete``): INVALID_CONFIG with Kafka's message,
and the topic stays tiered; with ``remote.log.delete.on.disable=true`` it is accepted."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_cold_url_change import FAST, LAUNCH, configs, create

pytestmark = pytest.mark.integration

TOPIC = "tiered"
KAFKA = (
    "It is invalid to disable remote storage without deleting remote data. If you want to "
    "keep the remote data and turn to read only, please set "
    "`remote.storage.enable=true,remote.log.copy.disable=true`. If you want to disable remote "
    "storage and delete all remote data, please set "
    "`remote.storage.enable=false,remote.log.delete.on.disable=true`."
)
SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE


def incremental(admin: AdminClient, *entries: ConfigEntry, validate_only: bool = False) -> None:
    resource = ConfigResource("topic", TOPIC, incremental_configs=list(entries))
    futures = admin.incremental_alter_configs([resource], validate_only=validate_only)
    futures[resource].result(15)


def classic(admin: AdminClient, overrides: dict[str, str]) -> None:
    resource = ConfigResource("topic", TOPIC, set_config=overrides)
    with warnings.catch_warnings():  # deprecated in the client, still Kafka's AlterConfigs
        warnings.simplefilter("ignore", DeprecationWarning)
        admin.alter_configs([resource])[resource].result(15)


def remote_storage_enable(admin: AdminClient) -> str:
    resource = ConfigResource("topic", TOPIC)
    return str(
        admin.describe_configs([resource])[resource].result(15)["remote.storage.enable"].value
    )


def cli(bootstrap: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", LAUNCH, *args, "-b", bootstrap]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_turning_remote_storage_off_needs_delete_on_disable(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data", extra_args=configs(*FAST)) as broker:
        create(broker.bootstrap, TOPIC, tiered=True)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        refusals = [
            lambda: incremental(
                admin, ConfigEntry("remote.storage.enable", "false", incremental_operation=SET)
            ),
            lambda: incremental(
                admin, ConfigEntry("remote.storage.enable", None, incremental_operation=DELETE)
            ),
            lambda: incremental(
                admin,
                ConfigEntry("remote.storage.enable", "false", incremental_operation=SET),
                validate_only=True,
            ),
            lambda: classic(admin, {"retention.ms": "86400000"}),  # drops the override
        ]
        for refusal in refusals:
            with pytest.raises(KafkaException) as refused:
                refusal()
            error = refused.value.args[0]
            assert (error.code(), error.str()) == (KafkaError.INVALID_CONFIG, KAFKA)
        for args in (
            ("topics", "alter-config", TOPIC, "--set", "remote.storage.enable=false"),
            ("configs", "alter", "--topic", TOPIC, "--delete", "remote.storage.enable"),
        ):
            done = cli(broker.bootstrap, *args)
            assert done.returncode == 1, done
            assert f"INVALID_CONFIG: alter configs of {TOPIC}: {KAFKA}" in done.stderr
        assert remote_storage_enable(admin) == "true"

        incremental(
            admin,
            ConfigEntry("remote.storage.enable", "false", incremental_operation=SET),
            ConfigEntry("remote.log.delete.on.disable", "true", incremental_operation=SET),
        )
        assert remote_storage_enable(admin) == "false"
