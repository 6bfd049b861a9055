"""The SDK's producer and ``tiered-mq produce`` when no broker takes the records (a port nobody
listens on, or a topic whose records the broker never acknowledges; real librdkafka): a send
that finds the queue full gives up after ``max.block.ms`` instead of waiting for librdkafka's
``message.timeout.ms`` per queueful, and a Ctrl-C while the run waits for acknowledgements
abandons them at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.integration.absent_replica import DEAF, deaf_broker  # noqa: F401  (the fixture)
from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.zookeeper_server import zookeeper  # noqa: F401  (deaf_broker's)
from tiered_mq.client import ClientError, Producer, ProducerConfig

pytestmark = pytest.mark.integration

QUEUE = {
    "queue.buffering.max.messages": 50,
    "message.timeout.ms": 120_000,
    "retries": 2_147_483_647,  # librdkafka's own: produce retries 3 times (as Kafka's tool)
}
"""A small librdkafka queue, and records that would wait two minutes for the broker."""

CLI = [sys.executable, "-c", "import sys; from tiered_mq.cli import main; sys.exit(main())"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def test_a_send_into_a_full_queue_gives_up_after_max_block_ms() -> None:
    """The 51st send finds the queue full of records no broker takes: it raises a retriable
    ``_TIMED_OUT`` naming max.block.ms after about 1 s (it waited for the two-minute record
    time-out before), and the records already queued stay queued."""
    config = ProducerConfig(
        bootstrap_servers=f"127.0.0.1:{free_port()}", max_block_ms=1000, extra=QUEUE
    )
    producer = Producer(config)
    for i in range(50):
        producer.send("t", b"v%d" % i)
    started = time.monotonic()
    with pytest.raises(ClientError) as raised:
        producer.send("t", b"one too many")
    waited = time.monotonic() - started
    assert 0.9 <= waited < 5, waited
    assert raised.value.name == "_TIMED_OUT" and raised.value.retriable
    assert "queue stayed full for 1000 ms (max.block.ms) with 50 record(s)" in str(raised.value)


def test_max_block_ms_is_kafkas_and_checked() -> None:
    assert ProducerConfig().max_block_ms == 60_000  # the Java producer's default
    with pytest.raises(ValueError, match="max_block_ms"):
        ProducerConfig(max_block_ms=-1)
    assert "max.block.ms" not in ProducerConfig().to_librdkafka()  # librdkafka has no such key


@pytest.fixture(scope="module")
def deaf_topic() -> str:
    """A topic whose records the broker never acknowledges (acks=all, the CLI's default):
    replicas [0, 1] with broker 1 down and min.insync.replicas 2 is NOT_ENOUGH_REPLICAS, which
    librdkafka retries until message.timeout.ms (absent_replica.py). The broker is reached, so
    ``produce`` gets past its look-up."""
    return DEAF


def test_produce_into_a_broker_that_takes_nothing_ends_after_max_block_ms(
    deaf_broker: BrokerProcess,  # noqa: F811
    deaf_topic: str,
) -> None:
    """2,000 lines into a 50-record queue: exit status 1 within seconds, one error naming the
    queue and max.block.ms. (A broker that cannot be reached at all fails before the input is
    read: test_cli2_produce_unreachable.py.)"""
    lines = b"".join(b"%d\n" % i for i in range(2000))
    args = ["produce", deaf_topic, "--max-block-ms", "1500", "-b", deaf_broker.bootstrap]
    args += [f"-X{key}={value}" for key, value in QUEUE.items()]
    started = time.monotonic()
    done = subprocess.run(CLI + args, input=lines, capture_output=True, timeout=60, env=ENV)
    elapsed = time.monotonic() - started
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert elapsed < 20, elapsed
    assert (
        f"Error: _TIMED_OUT: produce to {deaf_topic}: the producer's queue stayed full for 1500 ms"
        in stderr
    )


def test_ctrl_c_while_waiting_for_the_broker_abandons_at_once(
    deaf_broker: BrokerProcess,  # noqa: F811
    deaf_topic: str,
) -> None:
    """Two lines the broker does not acknowledge: at the end of the input the run waits (30 s)
    for them; a Ctrl-C then ends it at once, exit status 1, naming the 2 records abandoned
    (before: "Aborted!" without a count, or, when the signal landed in a librdkafka log
    callback, a SystemError traceback once the 30 s had passed)."""
    args = ["produce", deaf_topic, "-v", "-b", deaf_broker.bootstrap, "-Xretries=2147483647"]
    with subprocess.Popen(
        CLI + args, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    ) as process:
        assert process.stdin is not None and process.stderr is not None
        process.stdin.write(b"a\nb\n")
        process.stdin.close()
        time.sleep(3)  # start-up, the broker's metadata, the two sends: it is waiting
        assert process.poll() is None
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        rest = process.stderr.read().decode()
        assert process.wait(timeout=40) == 1, rest
    assert time.monotonic() - started < 5
    assert "Error: interrupted: 2 record(s) abandoned before the broker acknowledged them" in rest
    assert "Traceback" not in rest and "SystemError" not in rest, rest
