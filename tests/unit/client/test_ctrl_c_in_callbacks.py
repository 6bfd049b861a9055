"""Ctrl-C during the SDK's ``Producer.flush`` and ``Consumer.poll``/``consume`` against a port
nobody listens on (real librdkafka, which logs every failed reconnect through a Python
callback): ``KeyboardInterrupt`` within about a second. A SIGINT whose KeyboardInterrupt was
raised inside the log callback was lost in confluent-kafka's C code: the call ran to its
timeout, then failed with ``SystemError: ... returned NULL without setting an exception``."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.unit.client.fakes import FakeMessage, FakeRdConsumer
from tiered_mq.client import Consumer, ConsumerConfig, Producer, ProducerConfig
from tiered_mq.client import consumer as consumer_mod
from tiered_mq.topic_partition import TopicPartition


@pytest.fixture(autouse=True)
def python_default_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the test, whatever an earlier test in the process
    installed (SparkContext installs its own, which the SDK rightly leaves alone)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


FAST_RECONNECTS = {"reconnect.backoff.ms": 1, "reconnect.backoff.max.ms": 5}
"""A reconnect, and a log line, every few milliseconds: SIGINT lands in the log callback."""


def dead_address() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return f"127.0.0.1:{port}"


def interrupted_within(call: Callable[[], Any], limit: float, after: float = 0.5) -> float:
    """Seconds ``call`` took to raise KeyboardInterrupt after a SIGINT sent ``after`` s in."""
    timer = threading.Timer(after, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    elapsed = time.monotonic() - started
    assert elapsed < limit
    return elapsed


@pytest.mark.parametrize("after", [0.1, 0.25, 0.4, 0.55, 0.7, 0.85])
def test_ctrl_c_ends_a_flush(after: float) -> None:
    """Whether the signal lands in a log callback depends on its timing: six of them (the old
    code lost about half of them)."""
    producer = Producer(ProducerConfig(bootstrap_servers=dead_address(), extra=FAST_RECONNECTS))
    for i in range(100):
        producer.send("t", b"never acknowledged %d" % i)
    interrupted_within(lambda: producer.flush(5), after + 1.0, after)
    assert producer.in_flight() == 100
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("how", ["poll", "consume"])
def test_ctrl_c_ends_a_poll(how: str) -> None:
    config = ConsumerConfig(bootstrap_servers=dead_address(), extra=FAST_RECONNECTS)
    with Consumer(config) as consumer:
        consumer.assign({TopicPartition("t", 0): 0})
        if how == "poll":
            interrupted_within(lambda: consumer.poll(15), 2.0)
        else:
            interrupted_within(lambda: consumer.consume(10, 15), 2.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


class InterruptedRdConsumer(FakeRdConsumer):
    """librdkafka's consumer whose first ``consume`` gets a SIGINT while it runs Python code
    of its own (as a log callback would) and still returns its messages."""

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self.seeks: list[tuple[str, int, int]] = []
        self.interrupt = True

    def consume(self, n: int, timeout: float) -> list[FakeMessage]:
        if self.interrupt:
            self.interrupt = False
            signal.raise_signal(signal.SIGINT)  # its handler runs here, inside the call
        return super().consume(n, timeout)

    def seek(self, tp: Any) -> None:
        self.seeks.append((tp.topic, tp.partition, tp.offset))
        self.queue = [FakeMessage(tp.topic, tp.partition, tp.offset, b"again"), *self.queue]


def test_records_of_the_interrupted_round_are_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The KeyboardInterrupt comes once the call has returned, not from inside it; the records
    it fetched are not handed out (nor committed) and the consumer is sought back to them."""
    monkeypatch.setattr(consumer_mod.confluent_kafka, "Consumer", InterruptedRdConsumer)
    consumer = Consumer(ConsumerConfig(group_id="g", semantics="at-most-once"))
    rd = consumer._consumer
    assert isinstance(rd, InterruptedRdConsumer)
    rd.queue = [FakeMessage("t", 0, 5, b"a"), FakeMessage("t", 1, 9, b"b")]
    with pytest.raises(KeyboardInterrupt):
        consumer.consume(10, 1.0)
    assert rd.seeks == [("t", 0, 5), ("t", 1, 9)] and rd.calls == []
    assert [(r.partition, r.offset) for r in consumer.consume(10, 1.0)] == [(1, 9), (0, 5)]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_programs_own_handler_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a handler of its own in place (the CLI's), the SIGINT is the program's business."""
    monkeypatch.setattr(consumer_mod.confluent_kafka, "Consumer", InterruptedRdConsumer)
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        consumer = Consumer(ConsumerConfig())
        assert isinstance(consumer._consumer, InterruptedRdConsumer)
        consumer._consumer.queue = [FakeMessage("t", 0, 5, b"a")]
        assert [r.offset for r in consumer.consume(10, 1.0)] == [5]
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.SIGINT]
