"""``tiered-mq consume TOPIC``: print record values, one a line.

Where reading starts:

- ``--group G`` alone: join group G (subscribe, once the topic's metadata says it exists: a
  broker that cannot be reached is an error, as without a group: ``_reach.py``, the admin
  commands' fast failure when every broker is down); a partition with a
  committed offset resumes there, one without starts at the log end (``--from-beginning``: at
  the log start offset).
- no group, or ``--partition``/``--offset``/``--timestamp``: read the chosen partitions
  (all by default) from the log end, the log start offset (``--from-beginning`` or
  ``--offset earliest``), offset N (``--offset N``; ``--offset latest``: the log end) or the
  first record with timestamp >= T ms (``--timestamp``).

With a group, offsets of printed records are committed (at-least-once). Each output line is
``[CreateTime:MS SEP][Partition:P SEP Offset:O SEP][k1:v1,k2:v2 SEP][key SEP]value``: the
fields of ``--print-timestamp``, ``--print-offset`` (two fields), ``--print-headers`` and
``--print-key``, as kafka-console-consumer.sh prints those of ``print.timestamp``,
``print.partition`` with ``print.offset``, ``print.headers`` and ``print.key``; a null key,
value or header value prints as ``null``.
kafka-console-consumer's formatter properties (``-X print.key=true``, ``key.separator``,
``print.partition``, ``null.literal``, ...) shape the line as in Kafka (``_line_format.py``);
the other ``-X`` properties go to librdkafka, but for ``group.id``, which is the group as
``--group`` is (both given: they must match), and an ``auto.offset.reset`` other than earliest,
which ``--from-beginning`` contradicts (a usage error, as kafka-console-consumer makes both).
The run ends after ``--max-messages`` records, after ``--idle-timeout`` seconds without a
record (counted from the first assignment when joining a group, which takes a few seconds),
on Ctrl-C (within about a second, also while the partitions and offsets are looked up),
on SIGTERM (the same, as kafka-console-consumer's shutdown hook does it, then exit status 143,
the JVM's after a SIGTERM), or when stdout's reader goes away (``| head``: exit status 0, no
traceback), noticed at the next write or, while no records come, within one poll (0.5 s);
the count (``Processed a total of N messages``) goes to stderr. Offsets of the records
written before are committed (the consumer closes before the count is printed).
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from types import FrameType

import click

from tiered_mq.cli._common import (
    bootstrap_option,
    client_property_option,
    parse_pairs,
    reports_errors,
    topic_argument,
    verbose_option,
)
from tiered_mq.cli._line_format import (
    FORMATTER_PROPERTIES,
    LineFormat,
    split_properties,
    unescape,
)
from tiered_mq.cli._reach import BrokerWatch, reach
from tiered_mq.cli._stdout import discard_stdout, reader_gone
from tiered_mq.client.config import ConsumerConfig, DeliverySemantics
from tiered_mq.client.consumer import OFFSET_BEGINNING, OFFSET_END, Consumer
from tiered_mq.topic_partition import TopicPartition

EARLIEST_NAMES = ("earliest", "smallest", "beginning")
"""librdkafka's names of ``auto.offset.reset=earliest``."""
JOIN_GRACE_S = 30.0
"""Extra idle time allowed while a subscribing consumer waits for its first assignment."""
TERMINATED_STATUS = 128 + signal.SIGTERM
"""The exit status after SIGTERM (143), as the JVM exits once kafka-console-consumer's shutdown
hook has printed the count."""
REACH_TIMEOUT_S = 10.0
"""How long the start looks for the topic's metadata (``_reach.py``: every broker down fails
at once)."""


def start_offsets(
    consumer: Consumer,
    topic: str,
    existing: list[int],
    partitions: tuple[int, ...],
    from_beginning: bool,
    offset: int | None,
    timestamp: int | None,
) -> dict[TopicPartition, int]:
    """Starting offset for each chosen partition (all ``existing`` partitions when none are
    chosen)."""
    chosen = list(partitions) or existing
    missing = sorted(set(chosen) - set(existing))
    if missing:
        raise click.ClickException(
            f"UNKNOWN_TOPIC_OR_PARTITION: {topic} has no partition {missing[0]}"
            f" (partitions: 0-{len(existing) - 1})"
        )
    tps = [TopicPartition(topic, p) for p in chosen]
    if timestamp is not None:
        return consumer.offsets_for_time(tps, timestamp)
    if offset is not None:
        return dict.fromkeys(tps, offset)
    return dict.fromkeys(tps, OFFSET_BEGINNING if from_beginning else OFFSET_END)


def consumer_group(
    group: str | None, from_beginning: bool, client_props: dict[str, str]
) -> str | None:
    """The run's group: ``--group``, or ``-X group.id`` (taken out of ``client_props``), as
    kafka-console-consumer takes either; two different ones are a usage error, as is
    ``--from-beginning`` with an ``-X auto.offset.reset`` other than earliest (Kafka's checks)."""
    reset = client_props.get("auto.offset.reset")
    if from_beginning and reset is not None and reset.lower() not in EARLIEST_NAMES:
        raise click.UsageError(
            f"give --from-beginning or -X auto.offset.reset={reset}, not both (they conflict)"
        )
    from_x = client_props.pop("group.id", None)
    if group is not None and from_x is not None and from_x != group:
        raise click.UsageError(
            f"two group ids given: --group {group} and -X group.id={from_x} (they must match)"
        )
    return group if group is not None else from_x


class StartOffset(click.ParamType[int]):
    """``--offset``: a non-negative offset, ``earliest`` (OFFSET_BEGINNING) or ``latest``
    (OFFSET_END), as kafka-console-consumer's ``--offset`` takes."""

    name = "OFFSET|earliest|latest"
    _NAMED = {"earliest": OFFSET_BEGINNING, "latest": OFFSET_END}

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text in self._NAMED:
            return self._NAMED[text]
        try:
            offset = int(text)
        except ValueError:
            offset = -1
        if offset < 0:
            self.fail(f"{value!r}: give a non-negative offset, earliest or latest", param, ctx)
        return offset


@click.command("consume")
@topic_argument
@bootstrap_option
@verbose_option
@click.option(
    "-g", "--group", metavar="GROUP", default=None, help="Consumer group (offsets are committed)."
)
@click.option("--from-beginning", is_flag=True, help="Start at the log start offset.")
@click.option(
    "-o",
    "--offset",
    type=StartOffset(),
    metavar="N|earliest|latest",
    default=None,
    help="Start offset: a number, earliest (log start offset) or latest (log end).",
)
@click.option(
    "-t",
    "--timestamp",
    type=click.IntRange(min=0),
    default=None,
    help="Start at the first record with this timestamp or later (ms since epoch).",
)
@click.option(
    "-p",
    "--partition",
    "partitions",
    type=click.IntRange(min=0),
    multiple=True,
    help="Read only this partition (repeatable).",
)
@click.option(
    "-n",
    "--max-messages",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many records.",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0),
    default=None,
    help="Stop after this many seconds without a record (default: wait forever).",
)
@click.option(
    "--timeout-ms",
    type=click.IntRange(min=0),
    default=None,
    help="--idle-timeout in milliseconds, as kafka-console-consumer.sh takes it.",
)
@click.option("--print-key", is_flag=True, help="Print the key before the value.")
@click.option(
    "--print-offset",
    is_flag=True,
    help="Print Partition:P and Offset:O (-X print.partition=true -X print.offset=true).",
)
@click.option("--print-timestamp", is_flag=True, help="Print CreateTime:MS (or LogAppendTime:MS).")
@click.option("--print-headers", is_flag=True, help="Print headers as k1:v1,k2:v2 (NO_HEADERS).")
@click.option(
    "--separator",
    default="\\t",
    show_default="tab",
    help="Field separator (kcat's escapes: '\\t' is a tab).",
)
@client_property_option(
    "kafka-console-consumer's formatter",
    FORMATTER_PROPERTIES,
    aliases=("--consumer-property", "--command-property", "--formatter-property"),
)
@reports_errors
def command(
    topic: str,
    bootstrap: str,
    group: str | None,
    from_beginning: bool,
    offset: int | None,
    timestamp: int | None,
    partitions: tuple[int, ...],
    max_messages: int | None,
    idle_timeout: float | None,
    timeout_ms: int | None,
    print_key: bool,
    print_offset: bool,
    print_timestamp: bool,
    print_headers: bool,
    separator: str,
    properties: tuple[str, ...],
) -> None:
    """Print the records of TOPIC, one value a line."""
    if timeout_ms is not None:
        if idle_timeout is not None:
            raise click.UsageError("give --idle-timeout or --timeout-ms, not both")
        idle_timeout = timeout_ms / 1000
    if not separator:  # the fields would run together (-X key.separator= is refused too)
        raise click.BadParameter("the separator cannot be empty", param_hint="--separator")
    if sum(x for x in (from_beginning, offset is not None, timestamp is not None)) > 1:
        raise click.UsageError("give at most one of --from-beginning, --offset, --timestamp")
    formatter_props, client_props = split_properties(
        parse_pairs(properties, "--property"), FORMATTER_PROPERTIES
    )
    group = consumer_group(group, from_beginning, client_props)
    line = LineFormat.of(
        formatter_props,
        timestamp=print_timestamp,
        partition=print_offset,
        offset=print_offset,
        headers=print_headers,
        key=print_key,
        separator=unescape(separator),
    ).formatter()
    watch = BrokerWatch(note_when_lost=True)
    assign = bool(partitions) or offset is not None or timestamp is not None or group is None
    config = ConsumerConfig(
        bootstrap_servers=bootstrap,
        group_id=group,
        semantics=DeliverySemantics.AT_LEAST_ONCE,
        client_id=f"tiered-mq-cli-consumer-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest" if from_beginning else "latest",
        extra={"error_cb": watch, **client_props},
    )
    out = click.get_binary_stream("stdout")
    count = 0
    interrupted, terminated = threading.Event(), threading.Event()
    # SIGTERM ends the run as Ctrl-C does (kafka-console-consumer's shutdown hook: the count,
    # the consumer closed); during the look-up, at once, as Ctrl-C there
    previous_term = signal.signal(signal.SIGTERM, _stop_look_up(terminated))
    try:
        with Consumer(config) as consumer:
            try:  # the look-ups run no Python callback: a KeyboardInterrupt comes between rounds
                # the topic's metadata first: an unreachable broker or unknown topic is an error
                # now, not a group join that waits out --idle-timeout and exits 0
                existing = reach(
                    lambda seconds: consumer.partitions_for(topic, seconds),
                    lambda: consumer.poll(0),  # nothing assigned yet: serves error_cb only
                    watch,
                    topic,
                    REACH_TIMEOUT_S,
                )
                if assign:
                    consumer.assign(
                        start_offsets(
                            consumer, topic, existing, partitions, from_beginning, offset, timestamp
                        )
                    )
                else:
                    consumer.subscribe([topic])
            except KeyboardInterrupt:
                interrupted.set()
            last_data = time.monotonic()
            joined = assign
            # Ctrl-C and SIGTERM set a flag read between polls: a KeyboardInterrupt raised inside
            # librdkafka's log callback (a broker gone away logs on every reconnect) surfaced as
            # a SystemError traceback from consume()
            previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
            signal.signal(signal.SIGTERM, _stop_polling(terminated, interrupted))
            try:
                while not interrupted.is_set() and (max_messages is None or count < max_messages):
                    want = 500 if max_messages is None else min(500, max_messages - count)
                    records = consumer.consume(want, timeout=0.5)
                    if not joined and consumer.assignment():
                        joined = True  # the idle clock starts once the group has assigned us
                        last_data = time.monotonic()
                    if not records:
                        if reader_gone(out):
                            discard_stdout()
                            break
                        if idle_timeout is None:
                            continue
                        limit = idle_timeout if joined else idle_timeout + JOIN_GRACE_S
                        if time.monotonic() - last_data >= limit:
                            break
                        continue
                    out.write(b"".join([line(r) for r in records]))
                    out.flush()
                    consumer.ack(*records)
                    count += len(records)
                    last_data = time.monotonic()
            except BrokenPipeError:  # the reader went away (| head): the end, as for Unix tools
                discard_stdout()
            finally:
                signal.signal(signal.SIGINT, previous)
    finally:  # the consumer has closed (its offsets committed) or never opened
        signal.signal(signal.SIGTERM, previous_term)
    click.echo(f"Processed a total of {count} messages", err=True)
    if terminated.is_set():  # the JVM's status after kafka-console-consumer's shutdown hook
        raise click.exceptions.Exit(TERMINATED_STATUS)


def _stop_look_up(terminated: threading.Event) -> Callable[[int, FrameType | None], None]:
    """The SIGTERM handler while the partitions and offsets are looked up: ends the look-up as
    Ctrl-C does there (``KeyboardInterrupt`` between two rounds)."""

    def handle(signum: int, frame: FrameType | None) -> None:
        terminated.set()
        raise KeyboardInterrupt

    return handle


def _stop_polling(
    terminated: threading.Event, interrupted: threading.Event
) -> Callable[[int, FrameType | None], None]:
    """The SIGTERM handler while records are polled: the flag Ctrl-C sets, read between polls."""

    def handle(signum: int, frame: FrameType | None) -> None:
        terminated.set()
        interrupted.set()

    return handle
