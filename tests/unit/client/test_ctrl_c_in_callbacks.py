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
from collections.abc import Callable
from typing import Any

import pytest

from tiered_mq.client import Consumer, ConsumerConfig, Producer, ProducerConfig
from tiered_mq.topic_partition import TopicPartition

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
