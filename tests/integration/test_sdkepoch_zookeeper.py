"""Across a leader epoch change, the SDK consumer commits each partition's offset with the epoch
of the record before it (the record acknowledged last), as Java's consumer commits its position
(KIP-320): records read before the change commit the old epoch, those after it the new one.
The change is another tool's leader election (the partition's state znode written with a higher
leader epoch, as Kafka's controller writes it), which the ZooKeeper-mode broker takes."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from tests.integration.test_broker_leader_epoch_zookeeper import latest_answer, wait_for
from tests.integration.test_broker_zookeeper import produce, zk_broker
from tests.integration.test_broker_zookeeper_other_tools import chroot, zk  # noqa: F401
from tests.integration.test_sdkepoch_commits import listed, sdk_consumer, take
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (the fixture)
from tiered_mq.client import Admin, DeliverySemantics
from tiered_mq.coordination import znodes

pytestmark = pytest.mark.integration

NEW_EPOCH = 2


def test_commits_follow_the_records_epoch_across_a_leader_change(
    tmp_path: Path,
    chroot: str,  # noqa: F811
    zk: KazooClient,  # noqa: F811
) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    with zk_broker(tmp_path / "data", chroot) as broker:
        Admin(bootstrap_servers=broker.bootstrap).create_topic("ep")  # latest_answer's topic
        produce(broker.bootstrap, "ep", [b"a%d" % i for i in range(5)])
        with sdk_consumer(broker.bootstrap, group, DeliverySemantics.AT_LEAST_ONCE) as consumer:
            consumer.subscribe(["ep"])
            before = take(consumer, 5)

            path = znodes.partition_state("ep", 0)
            state = json.loads(zk.get(path)[0])
            assert state["leader_epoch"] == 0
            zk.set(path, json.dumps({**state, "leader_epoch": NEW_EPOCH}).encode())
            wait_for(lambda: latest_answer(broker.port, NEW_EPOCH) == (0, NEW_EPOCH), "the epoch")

            produce(broker.bootstrap, "ep", [b"b%d" % i for i in range(5)])
            after = take(consumer, 5)
            assert [r.leader_epoch for r in before + after] == [0] * 5 + [NEW_EPOCH] * 5

            consumer.ack(*before)  # all read, the first five processed
            consumer.commit()
            assert listed(broker.bootstrap, group) == {("ep", 0): (5, 0)}
            consumer.ack(*after)
            consumer.commit()
            assert listed(broker.bootstrap, group) == {("ep", 0): (10, NEW_EPOCH)}
