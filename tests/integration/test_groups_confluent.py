"""Consumer groups with confluent-kafka (librdkafka) against a `tiered-mq dev` broker.

- three consumers over a 6-partition topic get a disjoint, complete assignment, and the
  survivors take over the partitions of one that closes;
- a consumer process killed with SIGKILL stops heartbeating: after its session timeout the
  others own its partitions and keep consuming;
- offsets committed before a broker restart hold after it: produce N, consume and commit half,
  restart, resume the group: exactly the other half arrives, nothing is redelivered.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.conftest import BrokerFactory

pytestmark = pytest.mark.integration

SESSION_MS = 6000


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)


def produce(bootstrap: str, topic: str, count: int, partitions: int, start: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(start, start + count):
        producer.produce(topic, value=str(i).encode(), partition=i % partitions)
    assert producer.flush(15) == 0


def group_consumer(bootstrap: str, group: str, **extra: object) -> Consumer:
    config: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": SESSION_MS,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
    }
    config.update(extra)
    return Consumer(config)


def owned(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def poll_until(
    consumers: list[Consumer],
    done: Callable[[], bool],
    timeout: float,
    sink: list[Message] | None = None,
) -> float:
    """Poll every consumer until ``done()``; returns the seconds it took."""
    start = time.monotonic()
    while not done():
        assert time.monotonic() - start < timeout, "condition not reached in time"
        for c in consumers:
            msg = c.poll(0.05)
            if msg is not None and msg.error() is None and sink is not None:
                sink.append(msg)
    return time.monotonic() - start


def exact_cover(sets: list[set[int]], n: int) -> bool:
    return all(sets) and sum(map(len, sets)) == n and set().union(*sets) == set(range(n))


def test_three_consumers_split_six_partitions_and_rebalance_on_close(
    broker: BrokerProcess, consumers: list[Consumer]
) -> None:
    create_topic(broker.bootstrap, "six", 6)
    produce(broker.bootstrap, "six", 600, 6)
    consumers += [group_consumer(broker.bootstrap, "trio") for _ in range(3)]
    for c in consumers:
        c.subscribe(["six"])
    got: list[Message] = []
    poll_until(consumers, lambda: exact_cover([owned(c) for c in consumers], 6), 30, got)
    # Everyone consumes only its own partitions.
    poll_until(consumers, lambda: len(got) >= 600, 30, got)
    assert sorted(int(m.value()) for m in got) == list(range(600))
    for c in consumers:  # commit positions as members of the current generation
        c.commit(asynchronous=False)

    consumers[2].close()  # LeaveGroup: the survivors rebalance at once
    survivors = consumers[:2]
    took = poll_until(survivors, lambda: exact_cover([owned(c) for c in survivors], 6), 30)
    assert took < SESSION_MS / 1000  # no waiting for a session timeout
    produce(broker.bootstrap, "six", 60, 6, start=600)
    more: list[Message] = []
    poll_until(survivors, lambda: len(more) >= 60, 30, more)
    assert sorted(int(m.value()) for m in more) == list(range(600, 660))


_VICTIM = """
import sys
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
              "auto.offset.reset": "earliest", "session.timeout.ms": SESSION,
              "heartbeat.interval.ms": 500, "enable.auto.commit": False})
c.subscribe([sys.argv[3]])
reported = False
while True:
    c.poll(0.1)
    if c.assignment() and not reported:
        print("ASSIGNED", ",".join(str(tp.partition) for tp in c.assignment()), flush=True)
        reported = True
""".replace("SESSION", str(SESSION_MS))


@pytest.mark.slow
def test_killed_consumer_partitions_move_after_session_timeout(
    broker: BrokerProcess, consumers: list[Consumer]
) -> None:
    create_topic(broker.bootstrap, "six", 6)
    consumers += [group_consumer(broker.bootstrap, "victims") for _ in range(2)]
    for c in consumers:
        c.subscribe(["six"])
    poll_until(consumers, lambda: exact_cover([owned(c) for c in consumers], 6), 30)
    victim = subprocess.Popen(
        [sys.executable, "-c", _VICTIM, broker.bootstrap, "victims", "six"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert victim.stdout is not None
        line = b""
        deadline = time.monotonic() + 30
        while not line.startswith(b"ASSIGNED"):  # the others rebalance while we read
            for c in consumers:
                c.poll(0.05)
            assert time.monotonic() < deadline and victim.poll() is None
            line = victim.stdout.readline() if _readable(victim) else b""
        victim_parts = {int(p) for p in line.split()[1].decode().split(",")}
        poll_until(
            consumers,
            lambda: len(owned(consumers[0]) | owned(consumers[1])) == 6 - len(victim_parts),
            30,
        )
        assert victim_parts.isdisjoint(owned(consumers[0]) | owned(consumers[1]))
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
    took = poll_until(consumers, lambda: exact_cover([owned(c) for c in consumers], 6), 40)
    assert took > 2  # it took the session timeout (6 s) to notice, not a LeaveGroup
    produce(broker.bootstrap, "six", 60, 6)
    got: list[Message] = []
    poll_until(consumers, lambda: len(got) >= 60, 30, got)
    assert {m.partition() for m in got} == set(range(6))


def _readable(proc: subprocess.Popen[bytes]) -> bool:
    import select

    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 0.05)
    return bool(ready)


@pytest.mark.slow
def test_committed_offsets_survive_broker_restart(broker: BrokerProcess) -> None:
    n, parts = 200, 3
    create_topic(broker.bootstrap, "durable", parts)
    produce(broker.bootstrap, "durable", n, parts)
    first = group_consumer(broker.bootstrap, "resume")
    first.subscribe(["durable"])
    consumed: list[Message] = []
    poll_until([first], lambda: len(consumed) >= n // 2, 30, consumed)
    consumed = consumed[: n // 2]
    next_offsets: dict[int, int] = {}
    for m in consumed:
        next_offsets[m.partition()] = max(next_offsets.get(m.partition(), 0), m.offset() + 1)
    first.commit(
        offsets=[TopicPartition("durable", p, o) for p, o in next_offsets.items()],
        asynchronous=False,
    )
    first.close()

    broker.restart()

    second = group_consumer(broker.bootstrap, "resume")
    second.subscribe(["durable"])
    committed = second.committed([TopicPartition("durable", p) for p in range(parts)], 15)
    assert {tp.partition: tp.offset for tp in committed if tp.offset >= 0} == next_offsets
    rest: list[Message] = []
    expected = n - len(consumed)
    poll_until([second], lambda: len(rest) >= expected, 30, rest)
    end = time.monotonic() + 2  # nothing more may arrive
    while time.monotonic() < end:
        msg = second.poll(0.1)
        assert msg is None or msg.error() is not None, f"redelivered {msg.value()!r}"
    second.close()
    first_values = {int(m.value()) for m in consumed}
    rest_values = [int(m.value()) for m in rest]
    assert len(rest_values) == len(set(rest_values)) == expected
    assert first_values.isdisjoint(rest_values)
    assert first_values | set(rest_values) == set(range(n))


@pytest.mark.slow
def test_live_group_rides_through_broker_restart(
    broker: BrokerProcess, consumers: list[Consumer]
) -> None:
    """The group's membership is restored from __consumer_offsets: members keep heartbeating
    with their ids and generation, keep their partitions, and get exactly the new records."""
    create_topic(broker.bootstrap, "live", 2)
    produce(broker.bootstrap, "live", 20, 2)
    auto = {"enable.auto.commit": True, "auto.commit.interval.ms": 100}
    consumers += [group_consumer(broker.bootstrap, "riders", **auto) for _ in range(2)]
    for c in consumers:
        c.subscribe(["live"])
    got: list[Message] = []
    poll_until(consumers, lambda: len(got) >= 20, 30, got)
    before = [owned(c) for c in consumers]
    assert exact_cover(before, 2)
    for c in consumers:
        c.commit(asynchronous=False)
    broker.restart()
    produce(broker.bootstrap, "live", 20, 2, start=20)
    more: list[Message] = []
    poll_until(consumers, lambda: len(more) >= 20, 40, more)
    assert sorted(int(m.value()) for m in more) == list(range(20, 40))
    assert [owned(c) for c in consumers] == before


def scrape(port: int) -> dict[str, float]:
    """The broker's Prometheus samples, by name with labels."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    samples = (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))
    return {name: float(value) for name, _, value in samples if name}


def test_group_lag_and_members_on_the_metrics_endpoint(broker_factory: BrokerFactory) -> None:
    port = free_port()
    broker = broker_factory(extra_args=["--metrics-port", str(port)])
    create_topic(broker.bootstrap, "watched", 2)
    produce(broker.bootstrap, "watched", 10, 2)  # 5 per partition
    consumer = group_consumer(broker.bootstrap, "watchers")
    consumer.subscribe(["watched"])
    got: list[Message] = []
    poll_until([consumer], lambda: len(got) >= 10, 30, got)
    consumer.commit(
        offsets=[TopicPartition("watched", 0, 2), TopicPartition("watched", 1, 5)],
        asynchronous=False,
    )
    lag = 'tiered_mq_consumer_group_lag{group="watchers",partition="%d",topic="watched"}'
    offset = 'tiered_mq_consumer_group_offset{group="watchers",partition="%d",topic="watched"}'
    members = 'tiered_mq_consumer_group_members{group="watchers"}'
    samples = scrape(port)
    assert (samples[offset % 0], samples[lag % 0]) == (2, 3)
    assert (samples[offset % 1], samples[lag % 1]) == (5, 0)
    assert samples[members] == 1

    produce(broker.bootstrap, "watched", 4, 2, start=10)
    consumer.close()
    samples = scrape(port)
    assert (samples[lag % 0], samples[lag % 1]) == (5, 2)
    assert samples[members] == 0
