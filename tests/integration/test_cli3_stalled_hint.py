"""Records that wait too long for a broker which IS reached (a topic whose records it refuses:
replicas [0, 1] with broker 1 down and min.insync.replicas 2 is NOT_ENOUGH_REPLICAS, retried by
librdkafka; tests/integration/absent_replica.py) get no
"is it running ...?" hint: the error says the broker answers and names the last delivery error
(or that none came yet, with the -v -X debug=msg hint). A broker not reached keeps the hint."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.integration.absent_replica import DEAF, deaf_broker  # noqa: F401  (the fixture)
from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (deaf_broker's)
from tiered_mq.cli._common import error_message
from tiered_mq.client import ClientError, Producer, ProducerConfig
from tiered_mq.client.admin import Admin
from tiered_mq.client.errors import StalledError

pytestmark = pytest.mark.integration

QUEUE = {
    "queue.buffering.max.messages": 50,
    "message.timeout.ms": 120_000,
    "retries": 2_147_483_647,  # librdkafka's own: produce retries 3 times (as Kafka's tool)
}
CLI = [sys.executable, "-m", "tiered_mq", "produce"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}
UNREACHABLE_HINT = "is it running"


@pytest.fixture(scope="module")
def topics(deaf_broker: BrokerProcess) -> BrokerProcess:  # noqa: F811
    Admin(bootstrap_servers=deaf_broker.bootstrap).create_topic(
        "small", config={"max.message.bytes": "100"}
    )
    return deaf_broker


def produce(bootstrap: str, lines: bytes, *extra: str) -> str:
    args = [*CLI, DEAF, "--max-block-ms", "1500", "-b", bootstrap, *extra]
    args += [f"-X{key}={value}" for key, value in QUEUE.items()]
    done = subprocess.run(args, input=lines, capture_output=True, timeout=60, env=ENV)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    return stderr


def test_a_reached_broker_that_refuses_the_records_gets_no_unreachable_hint(
    topics: BrokerProcess,
) -> None:
    stderr = produce(topics.bootstrap, b"".join(b"%d\n" % i for i in range(200)))
    assert "Error: _TIMED_OUT: produce to deaf: the producer's queue stayed full" in stderr
    assert "the broker answers but has not acknowledged them: no delivery error" in stderr
    assert "hint: -v -X debug=msg shows the produce requests" in stderr
    assert UNREACHABLE_HINT not in stderr, stderr


def test_a_broker_not_reached_keeps_the_hint() -> None:
    config = ProducerConfig(
        bootstrap_servers=f"127.0.0.1:{free_port()}", max_block_ms=500, extra=QUEUE
    )
    producer = Producer(config)
    for i in range(50):
        producer.send("t", b"v%d" % i)
    with pytest.raises(StalledError) as raised:
        producer.send("t", b"one too many")
    assert not raised.value.broker_reached
    assert "answers" not in str(raised.value)
    assert UNREACHABLE_HINT in error_message(raised.value, config.bootstrap_servers)


def test_the_last_delivery_error_is_named(topics: BrokerProcess) -> None:
    config = ProducerConfig(bootstrap_servers=topics.bootstrap, max_block_ms=1000, extra=QUEUE)
    producer = Producer(config)
    producer.send("small", b"x" * 500)  # above the topic's max.message.bytes: refused at once
    with pytest.raises(ClientError):
        producer.flush(10)
    for i in range(50):
        producer.send("deaf", b"v%d" % i)
    with pytest.raises(StalledError) as raised:
        producer.send("deaf", b"one too many")
    assert raised.value.broker_reached
    assert raised.value.last_error is not None
    assert raised.value.last_error.name == "MESSAGE_TOO_LARGE"
    assert "the last delivery error: MESSAGE_TOO_LARGE" in str(raised.value)


def test_the_hinted_debug_log_names_the_brokers_error(topics: BrokerProcess) -> None:
    """-v -X debug=msg: librdkafka's debug lines reach stderr (the logger's inherited WARNING
    level dropped them), the broker's NOT_ENOUGH_REPLICAS among them."""
    stderr = produce(topics.bootstrap, b"x\n" * 200, "-v", "-Xdebug=msg")
    assert "encountered error: Broker: Not enough in-sync replicas" in stderr, stderr
