"""Static checks of docker-compose.yml and the Dockerfile (no Docker engine runs here)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from tiered_mq.cli.dev import command as dev_command

ROOT = Path(__file__).resolve().parents[3]
BROKERS = ("broker1", "broker2", "broker3")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return dict(compose["services"])


def _default(value: str) -> str:
    """``${VAR:-default}`` -> ``default`` (what compose uses with no .env)."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


def _options(cmd: list[str]) -> dict[str, list[str]]:
    opts: dict[str, list[str]] = {}
    for arg in cmd:
        if arg.startswith("--"):
            key, _, value = arg.partition("=")
            opts.setdefault(key, []).append(value)
    return opts


def test_expected_services(services: dict[str, Any]) -> None:
    assert {"minio", "createbuckets", "zookeeper", *BROKERS, "spark-master", "spark-worker"} <= set(
        services
    )


def test_depends_on_targets_exist_with_valid_conditions(services: dict[str, Any]) -> None:
    for name, svc in services.items():
        for dep, spec in dict(svc.get("depends_on", {})).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            condition = spec["condition"]
            assert condition in {
                "service_started",
                "service_healthy",
                "service_completed_successfully",
            }
            if condition == "service_healthy":
                assert "healthcheck" in services[dep], (
                    f"{name} waits for {dep}'s missing healthcheck"
                )
    assert services["createbuckets"]["depends_on"]["minio"]["condition"] == "service_healthy"
    for b in BROKERS:
        deps = services[b]["depends_on"]
        assert deps["createbuckets"]["condition"] == "service_completed_successfully"
        assert deps["zookeeper"]["condition"] == "service_healthy"


def test_long_running_services_have_healthchecks(services: dict[str, Any]) -> None:
    for name in ("minio", "zookeeper", *BROKERS, "spark-master"):
        test = services[name]["healthcheck"]["test"]
        assert test[0] in {"CMD", "CMD-SHELL"} and len(test) > 1


def test_published_host_ports_are_unique(services: dict[str, Any]) -> None:
    seen: dict[str, str] = {}
    for name, svc in services.items():
        for mapping in svc.get("ports", []):
            host = str(mapping).split(":")[0]
            assert host not in seen, f"{name} and {seen.get(host)} both publish {host}"
            seen[host] = name


def test_broker_commands_use_real_dev_options(services: dict[str, Any]) -> None:
    known = {opt for p in dev_command.params if isinstance(p, click.Option) for opt in p.opts}
    ports, ids, prefixes = set(), set(), set()
    for b in BROKERS:
        cmd = services[b]["command"]
        assert cmd[0] == "dev"
        opts = _options(cmd)
        assert set(opts) <= known, f"{b} uses options tiered-mq dev lacks: {set(opts) - known}"
        # the command line must also parse with the real click command
        ctx = dev_command.make_context("dev", [_default(a) for a in cmd[1:]])
        assert ctx.params["host"] == "0.0.0.0"
        port = str(ctx.params["port"])
        # same port inside and outside: the broker advertises the port it binds
        assert f"{port}:{port}" in services[b]["ports"]
        hc = " ".join(services[b]["healthcheck"]["test"])
        assert f", {port})" in hc
        configs = dict(c.split("=", 1) for c in ctx.params["configs"])
        assert configs["advertised.listeners"] == f"PLAINTEXT://localhost:{port}"
        ports.add(port)
        ids.add(configs["broker.id"])
        prefixes.add(ctx.params["cold_url"])
        assert services[b]["volumes"][0].endswith(":" + ctx.params["data_dir"].as_posix())
    assert len(ports) == len(ids) == len(prefixes) == 3


def test_s3_settings_consistent(services: dict[str, Any]) -> None:
    minio_env = services["minio"]["environment"]
    api_port = next(str(p).split(":")[1] for p in services["minio"]["ports"] if "9000" in str(p))
    endpoint = f"http://minio:{api_port}"
    for name in ("createbuckets", *BROKERS, "spark-master", "spark-worker"):
        env = services[name]["environment"]
        assert env["AWS_ACCESS_KEY_ID"] == minio_env["MINIO_ROOT_USER"], name
        assert env["AWS_SECRET_ACCESS_KEY"] == minio_env["MINIO_ROOT_PASSWORD"], name
        assert env["TIERED_MQ_S3_ENDPOINT"] == endpoint, name
    bucket = services["createbuckets"]["environment"]["TIERED_MQ_BUCKET"]
    assert "mc mb" in " ".join(services["createbuckets"]["command"])
    assert "${TIERED_MQ_BUCKET}" in " ".join(services["createbuckets"]["command"])
    for b in BROKERS:
        opts = _options(services[b]["command"])
        assert opts["--cold-url"][0].startswith(f"s3://{bucket}/")
        assert opts["--s3-endpoint"] == [endpoint]
    assert "2181:2181" in services["zookeeper"]["ports"]


def test_each_broker_keeps_its_metadata_in_its_own_zookeeper_chroot(
    services: dict[str, Any],
) -> None:
    """One broker per chroot until replication (the broker refuses a second one)."""
    chroots = set()
    for b in BROKERS:
        ctx = dev_command.make_context("dev", [_default(a) for a in services[b]["command"][1:]])
        configs = dict(c.split("=", 1) for c in ctx.params["configs"])
        address, _, chroot = configs["zookeeper.connect"].partition("/")
        assert address == "zookeeper:2181" and chroot
        chroots.add(chroot)
        assert "zookeeper" in services[b]["depends_on"]
    assert len(chroots) == len(BROKERS)


def test_named_volumes_declared(compose: dict[str, Any], services: dict[str, Any]) -> None:
    declared = set(compose["volumes"])
    for svc in services.values():
        for vol in svc.get("volumes", []):
            source = vol.split(":")[0]
            if not source.startswith((".", "/")):
                assert source in declared


def test_dockerfile_targets_exist(services: dict[str, Any]) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    stages = set(re.findall(r"^FROM \S+ AS (\S+)$", dockerfile, re.MULTILINE))
    for name, svc in services.items():
        build = svc.get("build")
        if build:
            assert build["dockerfile"] == "Dockerfile", name
            assert build["target"] in stages, name
    assert "pip install ." in dockerfile
    assert 'pip install ".[spark]"' in dockerfile
    assert 'ENTRYPOINT ["tiered-mq"]' in dockerfile
