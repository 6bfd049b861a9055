"""``tiered-mq produce TOPIC``: one record per input line, from stdin or ``--file``.

Before reading any input, the run asks for the topic's metadata (``reach``), as Kafka's producer
waits for it before a send, at most ``--max-block-ms`` (Kafka's ``max.block.ms``, 60 s): a broker
that librdkafka reached (its connection set up, ApiVersions answered) but whose metadata answer
is slow (an overloaded one: ``_TIMED_OUT``) gets that long. When no broker can be reached at all
(connection refused, a name that does not resolve: librdkafka reports every broker down) the run
fails as the admin commands do (``_reach.py``), within about a second, where Kafka's producer
would wait the whole ``max.block.ms``: ``Error: _TRANSPORT: metadata for T: no broker could be
reached: <librdkafka's last connection error>``, the unreachable hint and exit status 1, not a
wait of a minute nor the acknowledgement wait at the end of the input. A Ctrl-C meanwhile exits
130.

A record the broker refuses with a retriable error (``NOT_ENOUGH_REPLICAS``, ...) is sent again
at most ``--message-send-max-retries`` times (3, as kafka-console-producer's option, which sets
the producer's ``retries``), then reported failed: librdkafka's default retries it until
``message.timeout.ms`` (5 minutes). ``-X retries=N`` (or librdkafka's alias
``message.send.max.retries``) sets it too; the option, when given, wins, as Kafka's does over
``--producer-property``; ``--acks`` and ``-X acks`` merge the same way (default ``all``).

A line's terminator (``\\n`` or ``\\r\\n``) is not part of the value. With
``--key-separator SEP`` each line is ``KEY SEP VALUE`` (split at the first SEP, which cannot be
empty); a line without SEP is an error that stops the run after flushing what was already sent.
kafka-console-producer's line reader properties (``-X parse.key=true``, ``key.separator``,
``parse.headers``, ``null.marker``, ``ignore.error``, ...) read lines as Kafka does
(``_line_reader.py``; ``null.marker`` is how to send a null value, a tombstone); the other
``-X`` properties go to librdkafka.
A line whose record is larger than the producer's ``message.max.bytes`` (librdkafka's 1,000,000
unless ``-X`` sets it) is not sent: an error line on stderr names it, its size and the limit,
the size counted as librdkafka counts it (``record_size``: value, key, headers and a fixed
``RECORD_OVERHEAD``, so a line of 999,970 bytes is already refused at the default), and the run
goes on with the next line (as ``kafka-console-producer`` reports a RecordTooLargeException for
that record alone); such lines make the exit status 1. A line that finds the producer's queue
full waits at most ``--max-block-ms`` (Kafka's ``max.block.ms``, 60 s) for room, then the run
ends with ``_TIMED_OUT`` and exit status 1: a broker that is down or unreachable stops a large
input in that time, not after librdkafka's ``message.timeout.ms`` (5 minutes) per queueful.
That error, and the end of the run's acknowledgement wait, say whether the broker answers
(``Producer.stalled``): one that answers but refuses the records (``NOT_ENOUGH_REPLICAS``, which
librdkafka retries) gets the last delivery error, not the unreachable hint.
Reading a file (``--file``, or stdin redirected from a file) shows a progress bar (tqdm, by
bytes) when stderr is a terminal, none in a log file or a pipe. Ctrl-C stops reading: the
records already read are still delivered (as ``kafka-console-producer`` does; a second Ctrl-C
abandons them at once: exit status 1, naming how many). No Ctrl-C ends in a traceback
(``_interrupt.py``). At the end, a summary line (records, bytes, seconds, records/s) goes to
stderr; records the broker did not acknowledge make the exit status 1, after a line saying how
many of those sent it acknowledged (``Produced 10524 of 50000 records to T (39476 not
delivered)``) and the broker's error.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import click
from tqdm import tqdm

from tiered_mq.cli._common import (
    bootstrap_option,
    client_property_option,
    parse_pairs,
    reports_errors,
    topic_argument,
    verbose_option,
)
from tiered_mq.cli._interrupt import CtrlC
from tiered_mq.cli._line_format import READER_PROPERTIES, split_properties, unescape
from tiered_mq.cli._line_reader import Header, LineError, LineReader
from tiered_mq.cli._reach import BrokerWatch
from tiered_mq.cli._reach import reach as reach_broker
from tiered_mq.client.config import COMPRESSIONS, DeliverySemantics, ProducerConfig
from tiered_mq.client.errors import ClientError, DeliveryError
from tiered_mq.client.producer import Producer
from tiered_mq.record.varint import size_of_varint

LIBRDKAFKA_MESSAGE_MAX_BYTES = 1_000_000
"""librdkafka's default ``message.max.bytes``: the largest record it accepts to send."""
FLUSH_TIMEOUT_S = 30.0
"""How long the end of a run waits for the broker to acknowledge what was sent."""
MESSAGE_SEND_MAX_RETRIES = 3
"""kafka-console-producer's ``--message-send-max-retries`` default: the producer's ``retries``."""
RETRIES_PROPERTIES = ("retries", "message.send.max.retries")
"""librdkafka's names of the producer's ``retries`` (the second an alias of the first)."""
ACKS_PROPERTIES = ("acks", "request.required.acks")
"""librdkafka's names of the producer's ``acks`` (the second an alias of the first)."""
LOCAL_TOPIC_ERRORS = frozenset({"_UNKNOWN_TOPIC", "_UNKNOWN_PARTITION"})
"""librdkafka's local errors that are about the topic, not about reaching the broker."""
FLUSH_ROUND_S = 0.2
"""One wait of ``Producer.flush``: a Ctrl-C is seen between two."""
RECORD_OVERHEAD = 36
"""What librdkafka adds to a record's key, value and headers before comparing it with
``message.max.bytes`` (``RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD``): the largest varints of a v2
record's length (5), timestamp delta (10), offset delta, key length, value length and header
count (5 each), and its attributes byte."""
TOO_LARGE = "MESSAGE_TOO_LARGE"
"""The name of the error ``Producer.send`` raises for a record above ``message.max.bytes``."""


def split_line(line: bytes, separator: bytes | None) -> tuple[bytes | None, bytes | None]:
    """(key, value) of one input line, terminator removed; ``LineError`` (a ``ValueError``) if
    SEP is missing."""
    _, key, value = LineReader(key_separator=separator).parse(line)
    return key, value


def header_list(items: Sequence[str]) -> list[Header]:
    """``-H`` values: ``KEY=VALUE`` (split at the first ``=``), or ``KEY`` alone for a header
    with a null value (as kcat's ``-H``); an empty key is a usage error."""
    headers: list[Header] = []
    for item in items:
        if "=" in item:
            [(key, value)] = parse_pairs([item], "--header")
            headers.append((key, value.encode()))
        elif item.strip():
            headers.append((item.strip(), None))
        else:
            raise click.BadParameter("a header needs a key", param_hint="--header")
    return headers


def record_size(key: bytes | None, value: bytes | None, headers: Sequence[Header]) -> int:
    """A record's size as librdkafka compares it with ``message.max.bytes``: key, value, each
    header's name and value with their zigzag-varint lengths, and ``RECORD_OVERHEAD``."""
    size = RECORD_OVERHEAD + len(key or b"") + len(value or b"")
    for name, header_value in headers:
        name_size = len(name.encode())
        size += size_of_varint(name_size) + name_size
        size += size_of_varint(len(header_value or b"")) + len(header_value or b"")
    return size


def too_large_message(lineno: int, size: int, limit: object) -> str:
    """The error line of an input line whose record (``record_size``) is above
    ``message.max.bytes``."""
    return (
        f"Error: line {lineno} not sent: {TOO_LARGE}: its record ({size} bytes with key, headers"
        f" and librdkafka's {RECORD_OVERHEAD}-byte record overhead) is larger than the producer's"
        f" message.max.bytes ({limit}; -X message.max.bytes=N raises it, up to the topic's"
        " max.message.bytes)"
    )


def deliver(
    producer: Producer, topic: str, ctrl_c: CtrlC, timeout: float = FLUSH_TIMEOUT_S
) -> None:
    """Waits for the broker to acknowledge every record sent to ``topic`` (``Producer.flush``
    in rounds of ``FLUSH_ROUND_S``, so that Ctrl-C is seen at once): ``DeliveryError`` for
    records it refused, ``StalledError`` (``_TIMED_OUT``, saying whether the broker answers)
    when some are still in flight after ``timeout`` s, and a Ctrl-C while waiting abandons them
    (exit status 1, naming how many)."""
    seen = ctrl_c.count
    deadline = time.monotonic() + timeout
    try:
        while ctrl_c.count == seen:
            try:
                producer.flush(min(FLUSH_ROUND_S, max(0.0, deadline - time.monotonic())))
                return
            except DeliveryError:
                raise
            except ClientError as err:
                if err.name != "_TIMED_OUT":
                    raise
            if time.monotonic() >= deadline:
                left = producer.in_flight()
                raise producer.stalled(topic, f"{left} record(s) in flight after {timeout}s")
    except KeyboardInterrupt:
        pass
    raise click.ClickException(
        f"interrupted: {producer.in_flight()} record(s) abandoned before the broker"
        " acknowledged them"
    )


def reach(
    producer: Producer, watch: BrokerWatch, topic: str, timeout: float, partition: int | None
) -> None:
    """Asks for ``topic``'s metadata before any input is read, within ``timeout`` s (the run's
    ``max.block.ms``; no broker reachable: ``_reach.py``): a broker that cannot be reached, does
    not answer, or refuses the login is its ``ClientError`` now, not a wait for acknowledgements
    at the end of the input, and so is a ``partition`` (``-p``) the topic does not have
    (``UNKNOWN_TOPIC_OR_PARTITION``, worded as ``consume -p`` words it). The topic's own errors
    are left to the sends (their delivery reports name them), as they were."""
    try:
        partitions = reach_broker(
            lambda seconds: producer.partitions_for(topic, seconds),
            lambda: producer.poll(0),
            watch,
            topic,
            timeout,
        )
    except ClientError as err:
        if err.name.startswith("_") and err.name not in LOCAL_TOPIC_ERRORS:
            raise  # librdkafka's own: no broker, no answer, a login refused, ...
        return  # the broker's answer about the topic (UNKNOWN_TOPIC_OR_PART, no auto-creation)
    if partition is not None and partition not in partitions:
        raise ClientError(
            "UNKNOWN_TOPIC_OR_PARTITION",
            f"{topic} has no partition {partition} (partitions: 0-{len(partitions) - 1})",
            3,
        )


def producer_properties(
    acks: str | None, max_retries: int | None, client_props: dict[str, str]
) -> dict[str, Any]:
    """The librdkafka properties of the run: the ``-X`` ones, with ``acks`` and ``retries`` as
    kafka-console-producer merges its options into the producer's properties: the option
    (``--acks``, ``--message-send-max-retries``) if given, else ``-X acks``/``-X retries`` (or
    librdkafka's alias of either) if given, else the option's default (``all``,
    ``MESSAGE_SEND_MAX_RETRIES``)."""
    props: dict[str, Any] = dict(client_props)
    for names, option, default in (
        (ACKS_PROPERTIES, acks, "all"),
        (RETRIES_PROPERTIES, max_retries, MESSAGE_SEND_MAX_RETRIES),
    ):
        given = [name for name in names if name in props]
        if option is not None:
            for name in given:
                del props[name]
            props[names[0]] = option
        elif not given:
            props[names[0]] = default
    return props


def input_size(stream: IO[bytes]) -> int | None:
    """Bytes left to read in ``stream`` when it is a regular file (``--file``, or stdin
    redirected from one: ``produce T < big.txt``), for the progress bar; None for a pipe or a
    terminal, whose size is unknown."""
    try:
        fd = stream.fileno()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return max(0, info.st_size - stream.tell())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def _lines(stream: IO[bytes], bar: Any) -> Iterator[bytes]:
    for line in stream:
        if bar is not None:
            bar.update(len(line))
        yield line


@click.command("produce")
@topic_argument
@bootstrap_option
@verbose_option
@click.option(
    "-f",
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read lines from this file instead of stdin.",
)
@click.option(
    "-K",
    "--key-separator",
    metavar="SEP",
    default=None,
    help="Split each line into KEY SEP VALUE (kcat's escapes: '\\t' is a tab).",
)
@click.option(
    "-z",
    "--compression",
    "--compression-codec",
    type=click.Choice(COMPRESSIONS),
    default="none",
    show_default=True,
    help="Compression codec of the record batches (the producer's compression.type).",
)
@click.option(
    "--acks",
    "--request-required-acks",
    type=click.Choice(["0", "1", "all", "-1"]),
    default=None,
    show_default="all, or -X acks=...",
    help="Acknowledgements the leader waits for (-1: all, as in Kafka).",
)
@click.option(
    "-p", "--partition", type=click.IntRange(min=0), default=None, help="Send every record here."
)
@click.option(
    "-H",
    "--header",
    "headers",
    multiple=True,
    metavar="KEY[=VALUE]",
    help="Header added to every record (repeatable; a key may repeat, as in Kafka; KEY alone:"
    " a null value, as kcat -H).",
)
@click.option(
    "--linger-ms",
    type=click.FloatRange(min=0, max=900_000),
    default=5.0,
    show_default=True,
    help="How long a batch waits for more records (librdkafka's linger.ms).",
)
@click.option(
    "--max-block-ms",
    type=click.IntRange(min=0),
    default=60_000,
    show_default=True,
    help="How long the start waits for the topic's metadata, and a line for room in the"
    " producer's full queue, before the run fails (Kafka's max.block.ms; every broker down:"
    " a failure at once).",
)
@click.option(
    "--no-progress",
    is_flag=True,
    help="No progress bar when reading a file (--file or < FILE; on a terminal).",
)
@click.option(
    "--message-send-max-retries",
    "max_retries",
    type=click.IntRange(min=0),
    default=None,
    show_default=f"{MESSAGE_SEND_MAX_RETRIES}, or -X retries=N",
    help="How many times a record the broker refused with a retriable error is sent again"
    " before it is reported failed (the producer's retries).",
)
@client_property_option(
    "kafka-console-producer's line reader",
    READER_PROPERTIES,
    aliases=("--producer-property", "--command-property", "--reader-property"),
)
@reports_errors
def command(
    topic: str,
    bootstrap: str,
    path: Path | None,
    key_separator: str | None,
    compression: str,
    acks: str | None,
    partition: int | None,
    headers: tuple[str, ...],
    linger_ms: float,
    max_block_ms: int,
    no_progress: bool,
    max_retries: int | None,
    properties: tuple[str, ...],
) -> None:
    """Produce the lines of stdin (or --file) to TOPIC, one record per line."""
    if key_separator == "":
        raise click.BadParameter("the key separator cannot be empty", param_hint="--key-separator")
    reader_props, client_props = split_properties(
        parse_pairs(properties, "--property"), READER_PROPERTIES
    )
    parse = LineReader.of(reader_props, unescape(key_separator) if key_separator else None).parser()
    watch = BrokerWatch()
    extra = producer_properties(acks, max_retries, client_props)
    config = ProducerConfig(
        bootstrap_servers=bootstrap,
        semantics=DeliverySemantics.AT_LEAST_ONCE,
        client_id="tiered-mq-cli-producer",
        compression=compression,  # type: ignore[arg-type]  # checked by click.Choice
        linger_ms=linger_ms,
        max_block_ms=max_block_ms,
        extra={"error_cb": watch, **extra},
    )
    fixed_headers = header_list(headers)
    producer = Producer(config)
    reach(producer, watch, topic, max_block_ms / 1000, partition)
    stream: IO[bytes]
    bar = None
    stream = path.open("rb") if path is not None else click.get_binary_stream("stdin")
    size = input_size(stream)
    if size is not None and not no_progress:
        bar = tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            file=sys.stderr,
            disable=None,  # drawn on a terminal only: no \r frames in a log or a pipe
        )
    limit = config.to_librdkafka().get("message.max.bytes", LIBRDKAFKA_MESSAGE_MAX_BYTES)
    too_large: list[int] = []  # line numbers of the records refused as above the limit
    count = nbytes = 0
    started = time.monotonic()
    with CtrlC(_lines, Producer.send, Producer.flush) as ctrl_c:
        try:
            for lineno, line in enumerate(_lines(stream, bar), start=1):
                try:
                    line_headers, key, value = parse(line)
                except LineError as err:
                    deliver(producer, topic, ctrl_c)
                    raise click.ClickException(
                        f"line {lineno} has {err} ({count} record(s) sent before it)"
                    ) from None
                record_headers = [*fixed_headers, *line_headers] if line_headers else fixed_headers
                try:
                    producer.send(topic, value, key, partition=partition, headers=record_headers)
                except ClientError as err:
                    if err.name != TOO_LARGE:
                        raise
                    too_large.append(lineno)
                    size = record_size(key, value, record_headers)
                    tqdm.write(too_large_message(lineno, size, limit), file=sys.stderr)
                    continue
                count += 1
                nbytes += len(value) if value is not None else 0
                if ctrl_c.count:
                    break  # a Ctrl-C that came during a librdkafka callback
        except KeyboardInterrupt:
            pass  # Ctrl-C ends the input; what was read is delivered below
        finally:
            if bar is not None:
                bar.close()
            if path is not None:
                stream.close()
        try:
            deliver(producer, topic, ctrl_c)
        except DeliveryError:  # how many got in, then the broker's error
            click.echo(
                f"Produced {producer.delivered} of {count} records to {topic}"
                f" ({count - producer.delivered} not delivered)",
                err=True,
            )
            raise
    elapsed = max(time.monotonic() - started, 1e-9)
    records = "record" if count == 1 else "records"
    click.echo(
        f"Produced {count} {records} ({nbytes} bytes) to {topic} in {elapsed:.2f}s"
        f" ({count / elapsed:,.0f} records/s)",
        err=True,
    )
    if too_large:
        raise click.ClickException(
            f"{len(too_large)} line(s) not sent, larger than message.max.bytes"
            f" (the first: line {too_large[0]})"
        )
