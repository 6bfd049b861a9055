"""ZooKeeper mode: the cold URL a broker's data dir uploaded to is recorded in that data dir
(its meta.properties), so a restart on another cold URL is refused there too, with the same
line and nothing changed, and the recorded URL still starts and serves every record."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_zookeeper import SESSION_MS
from tests.integration.test_broker_zookeeper_other_tools import chroot  # noqa: F401
from tests.integration.test_cold_url_change import (
    COUNT,
    FAST,
    TIERED,
    configs,
    create,
    earliest_local,
    produce,
    read_all,
    refused_start,
    snapshot,
    wait_for,
)
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration


def test_a_zookeeper_broker_refuses_another_cold_url(tmp_path: Path, chroot: str) -> None:  # noqa: F811
    data = tmp_path / "data"
    zk = configs(f"zookeeper.connect={chroot}", f"zookeeper.session.timeout.ms={SESSION_MS}")
    zk += configs("broker.id=0", *FAST)
    with BrokerProcess(data, extra_args=zk) as broker:
        create(broker.bootstrap, TIERED, tiered=True)
        produce(broker.bootstrap, TIERED, COUNT)
        wait_for(lambda: earliest_local(broker.port, TIERED) >= 30, "uploaded segments to go")
    before = snapshot(data)
    other = tmp_path / "other-cold"

    status, out = refused_start(data, "--cold-url", f"file://{other}", *zk)

    assert status == 1, out
    recorded = f"file://{data.resolve() / 'cold'}"
    assert f"Configured cold tier file://{other} doesn't match the cold tier {recorded}" in out
    assert snapshot(data) == before
    assert not other.exists()
    with BrokerProcess(data, extra_args=zk) as broker:
        assert read_all(broker.bootstrap, TIERED, COUNT) == list(range(COUNT))
