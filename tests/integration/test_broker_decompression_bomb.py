"""A decompression bomb sent to a `tiered-mq dev` broker where it decodes records.

A zstd batch of ~40 KiB inflating to 1 GiB, produced raw (no client library would build one) to a
topic whose ``compression.type`` differs from the batch's codec, and to a compacted topic (the
key check): the broker answers MESSAGE_TOO_LARGE (10) naming ``message.max.decompressed.bytes``,
appends nothing (ListOffsets latest unchanged), its peak RSS (VmHWM) barely moves, and a real
client produces right after. While a gzip bomb decompresses up to the default bound (256 MiB,
the slowest codec: most of a second), other connections are answered at once.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.integration.broker_process import BrokerProcess, proc_status_kib, request
from tests.integration.conftest import BrokerFactory
from tests.unit.record.bombs import GiB, MiB, bomb_batch
from tiered_mq.record.compression import GZIP, ZSTD

pytestmark = pytest.mark.integration

PRODUCE, LIST_OFFSETS, METADATA, CREATE_TOPICS = 0, 2, 3, 19
BOUND = 16 * MiB


def _vm_hwm_kib(pid: int) -> int:
    return proc_status_kib(pid, "VmHWM")


def _create(broker: BrokerProcess, topic: str, configs: dict[str, str]) -> None:
    body = {
        "topics": [
            {
                "name": topic,
                "num_partitions": 1,
                "replication_factor": 1,
                "configs": [{"name": k, "value": v} for k, v in configs.items()],
            }
        ],
        "timeout_ms": 10000,
    }
    assert request(broker.port, CREATE_TOPICS, 4, body)["topics"][0]["error_code"] == 0


def _produce(broker: BrokerProcess, topic: str, records: bytes) -> dict[str, Any]:
    body = {
        "acks": -1,
        "timeout_ms": 10000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    answer = request(broker.port, PRODUCE, 8, body, timeout=30)
    return answer["responses"][0]["partition_responses"][0]  # type: ignore[no-any-return]


def _latest(broker: BrokerProcess, topic: str) -> int:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    answer = request(broker.port, LIST_OFFSETS, 5, body)
    return int(answer["topics"][0]["partitions"][0]["offset"])


@pytest.mark.parametrize(
    "configs",
    [{"compression.type": "lz4"}, {"cleanup.policy": "compact"}],
    ids=["compression-type-lz4", "compacted"],
)
def test_bomb_gets_message_too_large_and_broker_keeps_serving(
    broker_factory: BrokerFactory, configs: dict[str, str]
) -> None:
    broker = broker_factory(extra_args=["--config", f"message.max.decompressed.bytes={BOUND}"])
    assert broker.proc is not None
    _create(broker, "bombed", configs)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": "gzip"})
    for i in range(3):
        producer.produce("bombed", key=b"k%d" % i, value=b"v" * 100)
    assert producer.flush(10) == 0
    latest = _latest(broker, "bombed")
    assert latest == 3

    bomb = bomb_batch(ZSTD, GiB)
    assert len(bomb) < 100_000
    hwm_before = _vm_hwm_kib(broker.proc.pid)
    for _ in range(3):
        answer = _produce(broker, "bombed", bomb)
        assert answer["error_code"] == 10, answer
        assert "message.max.decompressed.bytes" in (answer["error_message"] or "")
    growth_mib = (_vm_hwm_kib(broker.proc.pid) - hwm_before) / 1024
    assert growth_mib < 100, f"broker peak RSS grew {growth_mib:.0f} MiB"
    assert _latest(broker, "bombed") == latest  # nothing appended

    producer.produce("bombed", key=b"after", value=b"fine")
    assert producer.flush(10) == 0
    assert _latest(broker, "bombed") == latest + 1
    assert broker.running


def test_other_clients_are_served_while_a_bomb_decompresses(broker_factory: BrokerFactory) -> None:
    broker = broker_factory()  # the default bound, 256 MiB
    _create(broker, "slow", {"compression.type": "lz4", "max.message.bytes": str(8 * MiB)})
    bomb = bomb_batch(GZIP, GiB)
    outcome: dict[str, Any] = {}

    def send_bomb() -> None:
        started = time.monotonic()
        outcome["answer"] = _produce(broker, "slow", bomb)
        outcome["took"] = time.monotonic() - started

    sender = threading.Thread(target=send_bomb)
    sender.start()
    waits = []
    while sender.is_alive():
        started = time.monotonic()
        request(broker.port, METADATA, 1, {"topics": []})
        if sender.is_alive():  # answered while the bomb was still being decompressed
            waits.append(time.monotonic() - started)
        time.sleep(0.01)
    sender.join()
    assert outcome["answer"]["error_code"] == 10, outcome
    assert len(waits) >= 3, f"the bomb took only {outcome['took']:.2f} s"
    assert max(waits) < outcome["took"] / 4, f"waits {waits} during a {outcome['took']:.2f} s bomb"
