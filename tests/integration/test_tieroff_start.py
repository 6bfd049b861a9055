"""A broker started with tiered storage off (``remote.log.storage.system.enable=false``) while
the metadata holds topics with ``remote.storage.enable=true`` refuses the start, as Kafka's
broker does (KAFKA-15267: "You have to delete all topics with the property
remote.storage.enable=true before disabling tiered storage cluster-wide"): exit status 1, one
error line naming the topics, the recorded cold URL and what to do, nothing in the data dir
changed; started with tiered storage on again, every record is served.

It started: ListOffsets EARLIEST answered offset 0 (the records below the local log start live
only in the cold tier) while every Fetch there answered OFFSET_OUT_OF_RANGE, so a consumer with
``auto.offset.reset=earliest`` reset to 0 again and again and read nothing, for ever."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration import test_cold_url_change
from tests.integration.broker_process import BrokerProcess
from tests.integration.test_broker_zookeeper import SESSION_MS
from tests.integration.test_broker_zookeeper_other_tools import chroot  # noqa: F401
from tests.integration.test_cold_url_change import (
    COUNT,
    FAST,
    configs,
    create,
    earliest_local,
    produce,
    read_all,
    snapshot,
    wait_for,
)
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration

TIERED = "tiered-then-off"
EMPTY = "tiered-but-empty"
OFF = configs("remote.log.storage.system.enable=false", *FAST)
KAFKA = (
    "You have to delete all topics with the property remote.storage.enable=true before "
    "disabling tiered storage cluster-wide"
)


def refused_start(data_dir: Path, *args: str) -> tuple[int, str]:
    """``tiered-mq dev`` on ``data_dir`` expected to stop on its own: (exit status, output)."""
    try:
        return test_cold_url_change.refused_start(data_dir, *args)
    except AssertionError as e:
        started = str(e).partition("\n")[2]
        raise AssertionError(f"the broker started with tiered storage off:\n{started}") from None


def tier_some(broker: BrokerProcess) -> None:
    """A tiered topic with uploaded records (half of them left only in the cold tier), an
    empty tiered one and an untiered one."""
    create(broker.bootstrap, TIERED, tiered=True)
    create(broker.bootstrap, EMPTY, tiered=True)
    create(broker.bootstrap, "local-only", tiered=False)
    produce(broker.bootstrap, TIERED, COUNT)
    wait_for(lambda: earliest_local(broker.port, TIERED) >= 30, "uploaded segments to go")


def the_error_line(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, out
    return lines[0]


def test_tiering_off_is_refused_while_topics_are_tiered(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data, extra_args=configs(*FAST)) as broker:
        tier_some(broker)
    before = snapshot(data)

    status, out = refused_start(data, *OFF)

    assert status == 1, out
    line = the_error_line(out)
    assert KAFKA in line
    # both tiered topics, the empty one too (Kafka checks the config, not the bucket), and
    # neither the untiered nor an internal topic
    assert f"2 topic(s) in the embedded cluster.json have it ({EMPTY}, {TIERED})" in line
    assert f"the cold URL file://{data.resolve() / 'cold'}" in line
    assert "remote.storage.enable=false,remote.log.delete.on.disable=true" in line
    assert f"Nothing in {data} was changed." in line
    assert snapshot(data) == before

    with BrokerProcess(data, extra_args=configs(*FAST)) as broker:  # tiering on still serves
        assert read_all(broker.bootstrap, TIERED, COUNT) == list(range(COUNT))


def test_a_zookeeper_broker_refuses_tiering_off_too(tmp_path: Path, chroot: str) -> None:  # noqa: F811
    """Kafka's own case (ZkConfigManager at start). The metadata is ZooKeeper's, so a fresh
    data dir on the same chroot is refused too."""
    zk = configs(f"zookeeper.connect={chroot}", f"zookeeper.session.timeout.ms={SESSION_MS}")
    zk += configs("broker.id=0")
    data = tmp_path / "data"
    with BrokerProcess(data, extra_args=[*zk, *configs(*FAST)]) as broker:
        tier_some(broker)
    before = snapshot(data)

    status, out = refused_start(data, *zk, *OFF)

    assert status == 1, out
    line = the_error_line(out)
    assert f"{KAFKA}: 2 topic(s) in zookeeper.connect={chroot} have it" in line
    assert snapshot(data) == before

    status, out = refused_start(tmp_path / "fresh", *zk, *OFF)
    assert status == 1, out
    assert f"({EMPTY}, {TIERED})" in the_error_line(out)
    assert "a cold URL)" in out  # the fresh data dir recorded none

    with BrokerProcess(data, extra_args=[*zk, *configs(*FAST)]) as broker:
        assert read_all(broker.bootstrap, TIERED, COUNT) == list(range(COUNT))


def test_a_broker_default_tiering_every_topic_is_refused_with_tiering_off(
    tmp_path: Path,
) -> None:
    """``--config remote.storage.enable=true`` (every topic tiered) with tiered storage off:
    Kafka's message for a topic configured so on such a broker. It started, and its topics
    then kept every segment (local retention waits for uploads that never come)."""
    data = tmp_path / "data"

    status, out = refused_start(data, *OFF, *configs("remote.storage.enable=true"))

    assert status == 1, out
    line = the_error_line(out)
    assert "Tiered Storage functionality is disabled in the broker." in line
    assert "topic defaults set remote.storage.enable=true" in line
