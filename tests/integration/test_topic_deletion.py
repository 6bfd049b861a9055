"""Topic deletion with confluent-kafka against a `tiered-mq dev` broker: a topic deleted and
created again under the same name holds only the new records (consumed from the beginning, and
again after a restart), and partition directories renamed ``-delete`` (Kafka's
LogManager.asyncDelete) are removed, in the background after the deletion and at start for
one left by a crash or a failed removal."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.client_helpers import produce_values, read_partition
from tests.integration.conftest import BrokerFactory
from tiered_mq.hot.log_dir_deletion import delete_dir_name

pytestmark = pytest.mark.integration

TOPIC = "reused"


def produce(bootstrap: str, *values: bytes) -> None:
    produce_values(bootstrap, TOPIC, *values)


def consume_all(bootstrap: str) -> list[bytes]:
    return read_partition(bootstrap, TOPIC)


def delete_dirs(data_dir: Path) -> list[Path]:
    return [p for p in data_dir.iterdir() if p.name.endswith("-delete")]


def wait_no_delete_dirs(data_dir: Path, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while delete_dirs(data_dir):
        assert time.monotonic() < deadline, f"still there: {delete_dirs(data_dir)}"
        time.sleep(0.1)


def test_a_topic_created_again_holds_only_its_new_records(broker_factory: BrokerFactory) -> None:
    broker = broker_factory()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(15)
    produce(broker.bootstrap, b"old-1", b"old-2", b"old-3")
    assert consume_all(broker.bootstrap) == [b"old-1", b"old-2", b"old-3"]

    # a leftover of a removal that failed (or of a crash) is removed at start, never opened
    broker.stop()
    leftover = broker.data_dir / delete_dir_name(f"{TOPIC}-0")
    shutil.copytree(broker.data_dir / f"{TOPIC}-0", leftover)
    broker.start()
    wait_no_delete_dirs(broker.data_dir)

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.delete_topics([TOPIC], operation_timeout=15)[TOPIC].result(20)
    assert not (broker.data_dir / f"{TOPIC}-0").exists()  # renamed before the answer
    wait_no_delete_dirs(broker.data_dir)  # then removed in the background
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(15)
    produce(broker.bootstrap, b"new-1")
    assert consume_all(broker.bootstrap) == [b"new-1"]

    broker.restart()
    assert consume_all(broker.bootstrap) == [b"new-1"]
    assert delete_dirs(broker.data_dir) == []
