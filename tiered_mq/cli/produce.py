"""``tiered-mq produce TOPIC``: one record per input line, from stdin or ``--file``.

A line's terminator (``\\n`` or ``\\r\\n``) is not part of the value. With
``--key-separator SEP`` each line is ``KEY SEP VALUE`` (split at the first SEP); a line
without SEP is an error that stops the run after flushing what was already sent. Reading
a file shows a progress bar (tqdm, on stderr, by bytes). Ctrl-C stops reading: the records
already read are still delivered (as ``kafka-console-producer`` does; a second Ctrl-C abandons
them). At the end, a summary line (records, bytes, seconds, records/s) goes to stderr; records
the broker did not acknowledge make the exit status 1.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click
from tqdm import tqdm

from tiered_mq.cli._common import bootstrap_option, parse_kv, property_option, reports_errors
from tiered_mq.client.config import COMPRESSIONS, DeliverySemantics, ProducerConfig
from tiered_mq.client.producer import Producer


def split_line(line: bytes, separator: bytes | None) -> tuple[bytes | None, bytes]:
    """(key, value) of one input line, terminator removed; ``ValueError`` if SEP is missing."""
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    if separator is None:
        return None, line
    key, sep, value = line.partition(separator)
    if not sep:
        raise ValueError("no key separator")
    return key, value


def _lines(stream: IO[bytes], bar: Any) -> Iterator[bytes]:
    for line in stream:
        if bar is not None:
            bar.update(len(line))
        yield line


@click.command("produce")
@click.argument("topic")
@bootstrap_option
@click.option(
    "-f",
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read lines from this file instead of stdin.",
)
@click.option("-K", "--key-separator", default=None, help="Split each line into KEY SEP VALUE.")
@click.option(
    "-z", "--compression", type=click.Choice(COMPRESSIONS), default="none", show_default=True
)
@click.option(
    "--acks",
    type=click.Choice(["0", "1", "all"]),
    default="all",
    show_default=True,
    help="Acknowledgements the leader waits for.",
)
@click.option("-p", "--partition", type=int, default=None, help="Send every record here.")
@click.option(
    "-H",
    "--header",
    "headers",
    multiple=True,
    metavar="KEY=VALUE",
    help="Header added to every record (repeatable).",
)
@click.option("--linger-ms", type=float, default=5.0, show_default=True)
@click.option("--no-progress", is_flag=True, help="No progress bar when reading a file.")
@property_option
@reports_errors
def command(
    topic: str,
    bootstrap: str,
    path: Path | None,
    key_separator: str | None,
    compression: str,
    acks: str,
    partition: int | None,
    headers: tuple[str, ...],
    linger_ms: float,
    no_progress: bool,
    properties: tuple[str, ...],
) -> None:
    """Produce the lines of stdin (or --file) to TOPIC, one record per line."""
    extra: dict[str, Any] = {"acks": acks}
    extra.update(parse_kv(properties, "--property"))
    config = ProducerConfig(
        bootstrap_servers=bootstrap,
        semantics=DeliverySemantics.AT_LEAST_ONCE,
        client_id="tiered-mq-cli-producer",
        compression=compression,  # type: ignore[arg-type]  # checked by click.Choice
        linger_ms=linger_ms,
        extra=extra,
    )
    record_headers = [(k, v.encode()) for k, v in parse_kv(headers, "--header").items()]
    separator = key_separator.encode() if key_separator else None
    producer = Producer(config)
    stream: IO[bytes]
    bar = None
    if path is not None:
        stream = path.open("rb")
        if not no_progress:
            bar = tqdm(total=path.stat().st_size, unit="B", unit_scale=True, file=sys.stderr)
    else:
        stream = click.get_binary_stream("stdin")
    count = nbytes = 0
    started = time.monotonic()
    try:
        for lineno, line in enumerate(_lines(stream, bar), start=1):
            try:
                key, value = split_line(line, separator)
            except ValueError:
                producer.flush()
                raise click.ClickException(
                    f"line {lineno} has no key separator {key_separator!r}"
                    f" ({count} record(s) sent before it)"
                ) from None
            producer.send(topic, value, key, partition=partition, headers=record_headers)
            count += 1
            nbytes += len(value)
    except KeyboardInterrupt:
        pass  # Ctrl-C ends the input; what was read is delivered below
    finally:
        if bar is not None:
            bar.close()
        if path is not None:
            stream.close()
    producer.flush()
    elapsed = max(time.monotonic() - started, 1e-9)
    records = "record" if count == 1 else "records"
    click.echo(
        f"Produced {count} {records} ({nbytes} bytes) to {topic} in {elapsed:.2f}s"
        f" ({count / elapsed:,.0f} records/s)",
        err=True,
    )
