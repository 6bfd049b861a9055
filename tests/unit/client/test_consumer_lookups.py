"""The SDK consumer's look-ups against a port nobody listens on (real librdkafka): a Ctrl-C ends
them within about a second (they were one 10 s librdkafka call, deaf to it), their timeout
still holds, and a closed consumer raises ``ClientError`` ``_STATE``."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest

from tiered_mq.client import ClientError, Consumer, ConsumerConfig
from tiered_mq.topic_partition import TopicPartition

TP = TopicPartition("t", 0)


def dead_port() -> int:
    """A port nobody listens on (bound, then closed: connecting is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def consumer() -> Iterator[Consumer]:
    c = Consumer(ConsumerConfig(bootstrap_servers=f"127.0.0.1:{dead_port()}"))
    yield c
    c.close()


LOOKUPS: dict[str, Callable[[Consumer], Any]] = {
    "partitions_for": lambda c: c.partitions_for("t"),
    "watermarks": lambda c: c.watermarks(TP),
    "offsets_for_time": lambda c: c.offsets_for_time([TP], 1_700_000_000_000),
}


@pytest.mark.parametrize("lookup", LOOKUPS)
def test_ctrl_c_ends_a_lookup_within_a_second(consumer: Consumer, lookup: str) -> None:
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            LOOKUPS[lookup](consumer)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 1.8


def test_a_lookup_keeps_its_timeout(consumer: Consumer) -> None:
    started = time.monotonic()
    with pytest.raises(ClientError) as raised:
        consumer.partitions_for("t", timeout=2.5)
    assert 2.4 <= time.monotonic() - started < 3.5
    assert raised.value.name == "_TRANSPORT" and "metadata for t" in str(raised.value)


CALLS: dict[str, Callable[[Consumer], Any]] = {
    **LOOKUPS,
    "assign": lambda c: c.assign({TP: 0}),
    "assignment": lambda c: c.assignment(),
    "poll": lambda c: c.poll(0),
    "consume": lambda c: c.consume(1, 0),
    "commit": lambda c: c.commit(),
    "positions": lambda c: c.positions(),
}


@pytest.mark.parametrize("call", CALLS)
def test_a_closed_consumer_raises_client_error(call: str) -> None:
    """As Java's KafkaConsumer (IllegalStateException); confluent-kafka's bare RuntimeError
    escaped before, past a caller's ``except ClientError``."""
    c = Consumer(ConsumerConfig(bootstrap_servers=f"127.0.0.1:{dead_port()}", group_id="g"))
    c.close()
    with pytest.raises(ClientError) as raised:
        CALLS[call](c)
    assert raised.value.name == "_STATE"
    assert "This consumer has already been closed." in str(raised.value)
    c.close()  # closing again is allowed


def test_a_reached_but_slow_broker_gets_the_rest_of_the_timeout_in_one_call(
    consumer: Consumer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a _TIMED_OUT (a broker answered the connection, not the request in time), the
    look-up is not asked again every second: a slow answer (a timestamp in the cold tier)
    would be abandoned each time."""
    asked: list[float] = []

    def offsets_for_times(query: Any, timeout: float) -> Any:
        asked.append(timeout)
        code = confluent_kafka.KafkaError._TRANSPORT if len(asked) == 1 else None
        code = confluent_kafka.KafkaError._TIMED_OUT if len(asked) == 2 else code
        if code is not None:
            raise confluent_kafka.KafkaException(confluent_kafka.KafkaError(code))
        return [confluent_kafka.TopicPartition("t", 0, 42)]

    monkeypatch.setattr(consumer, "_consumer", FakeLookups(offsets_for_times))
    assert consumer.offsets_for_time([TP], 1, timeout=10.0) == {TP: 42}
    assert asked[:2] == [1.0, 1.0] and 8.5 < asked[2] <= 10.0, asked


class FakeLookups:
    def __init__(self, offsets_for_times: Callable[..., Any]) -> None:
        self.offsets_for_times = offsets_for_times

    def close(self) -> None:
        pass
