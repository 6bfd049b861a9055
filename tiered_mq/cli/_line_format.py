"""How ``consume`` writes a record: Kafka's DefaultMessageFormatter, with the ``--property``
names of ``kafka-console-consumer.sh``; and what it shares with the producer's line reader
(``_line_reader.py``, the names of ``kafka-console-producer.sh``).

Those names are taken out of ``-X``/``--property`` (``split_properties``); the rest go to
librdkafka, which has no property of these names. Booleans are ``true`` or ``false`` (any case);
any other value is a usage error (Kafka reads it as false). Separators are taken as given, with no
escape processing (as Kafka does: ``$'\\t'`` in bash for a tab); the CLI's own
``--key-separator`` and ``--separator`` take kcat's escapes (``unescape``: ``'\\t'`` is a tab).

A record's line: ``[TYPE:MS S][Partition:P S][Offset:O S][headers S][key S]value LINE``, the
fields in the order and with the labels of Kafka's DefaultMessageFormatter, where S is
``key.separator`` (``--separator``, a tab), LINE ``line.separator`` (``\\n``), the headers
``k1:v1,k2:v2`` (``headers.key.separator``, ``headers.separator``) or ``NO_HEADERS``, and a
null key, value or header value prints as ``null.literal`` (``null``). ``consume
--print-offset`` prints the partition and offset fields (``print.partition`` and
``print.offset``). ``print.value=false`` drops the value; the last field printed then ends the
line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import click

from tiered_mq.client.record import TIMESTAMP_TYPE_NAMES, ConsumedRecord

FORMATTER_PROPERTIES = frozenset(
    {
        "print.timestamp",
        "print.key",
        "print.offset",
        "print.partition",
        "print.headers",
        "print.value",
        "key.separator",
        "line.separator",
        "headers.separator",
        "headers.key.separator",
        "null.literal",
    }
)
"""kafka-console-consumer.sh's formatter properties."""

READER_PROPERTIES = frozenset(
    {
        "parse.key",
        "key.separator",
        "parse.headers",
        "headers.delimiter",
        "headers.separator",
        "headers.key.separator",
        "null.marker",
        "ignore.error",
    }
)
"""kafka-console-producer.sh's line reader properties (read by ``_line_reader.py``)."""

_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[tnr0\\])")
_ESCAPED = {"t": b"\t", "n": b"\n", "r": b"\r", "0": b"\0", "\\": b"\\"}


def unescape(text: str) -> bytes:
    """The bytes of a separator given to the CLI's own ``--key-separator``/``--separator``,
    with kcat's escapes: ``\\t``, ``\\n``, ``\\r``, ``\\0``, ``\\\\`` and ``\\xNN`` (one byte)
    (so ``-K '\\t'`` splits at a tab, as kcat's ``-K`` does); any other backslash stays."""
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(text):
        out += text[pos : match.start()].encode()
        code = match.group(1)
        out += bytes([int(code[1:], 16)]) if code[0] == "x" else _ESCAPED[code]
        pos = match.end()
    return bytes(out + text[pos:].encode())


def split_properties(
    pairs: Iterable[tuple[str, str]], console: frozenset[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """``(console tool properties, librdkafka properties)`` of the ``-X`` pairs (a repeated name:
    the last value)."""
    tool: dict[str, str] = {}
    client: dict[str, str] = {}
    for name, value in pairs:
        (tool if name in console else client)[name] = value
    return tool, client


def flag(props: Mapping[str, str], name: str, default: bool = False) -> bool:
    """Boolean property ``name``: ``true``/``false`` in any case; other values: usage error."""
    text = props.get(name)
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise click.BadParameter(f"{name}={text!r}: expected true or false", param_hint="-X")
    return text.strip().lower() == "true"


def separator_property(props: Mapping[str, str], name: str, default: bytes) -> bytes:
    """Separator property ``name`` as bytes, ``default`` if not given; empty: usage error."""
    text = props.get(name)
    if text is None:
        return default
    if not text:
        raise click.BadParameter(f"{name} cannot be empty", param_hint="-X")
    return text.encode()


Field = Callable[[ConsumedRecord], bytes]


@dataclass(frozen=True)
class LineFormat:
    """What ``consume`` prints of each record (see the module's docstring)."""

    timestamp: bool = False
    partition: bool = False
    offset: bool = False
    headers: bool = False
    key: bool = False
    value: bool = True
    separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    headers_key_separator: bytes = b":"
    null_literal: bytes = b"null"

    @classmethod
    def of(
        cls,
        props: Mapping[str, str],
        *,
        timestamp: bool = False,
        partition: bool = False,
        offset: bool = False,
        headers: bool = False,
        key: bool = False,
        separator: bytes = b"\t",
    ) -> LineFormat:
        """The format of the command's flags with the formatter ``props`` added: a flag or a
        property turns a field on; ``key.separator`` wins over ``separator``."""
        return cls(
            timestamp=timestamp or flag(props, "print.timestamp"),
            partition=partition or flag(props, "print.partition"),
            offset=offset or flag(props, "print.offset"),
            headers=headers or flag(props, "print.headers"),
            key=key or flag(props, "print.key"),
            value=flag(props, "print.value", default=True),
            separator=separator_property(props, "key.separator", separator),
            line_separator=separator_property(props, "line.separator", b"\n"),
            headers_separator=separator_property(props, "headers.separator", b","),
            headers_key_separator=separator_property(props, "headers.key.separator", b":"),
            null_literal=props["null.literal"].encode() if "null.literal" in props else b"null",
        )

    def _or_null(self, data: bytes | None) -> bytes:
        return self.null_literal if data is None else data

    def _timestamp(self, r: ConsumedRecord) -> bytes:
        name = TIMESTAMP_TYPE_NAMES.get(r.timestamp_type)
        return f"{name}:{r.timestamp_ms}".encode() if name else b"NO_TIMESTAMP"

    def _headers(self, r: ConsumedRecord) -> bytes:
        if not r.headers:
            return b"NO_HEADERS"
        sep, kv = self.headers_separator, self.headers_key_separator
        return sep.join(k.encode() + kv + self._or_null(v) for k, v in r.headers)

    def formatter(self) -> Field:
        """The bytes written for a record: its fields, in the console consumer's order, joined
        by ``separator`` and ended by ``line_separator``. The choices are made once, here."""
        fields: list[Field] = [
            field
            for wanted, field in (
                (self.timestamp, self._timestamp),
                (self.partition, lambda r: f"Partition:{r.partition}".encode()),
                (self.offset, lambda r: f"Offset:{r.offset}".encode()),
                (self.headers, self._headers),
                (self.key, lambda r: self._or_null(r.key)),
                (self.value, lambda r: self._or_null(r.value)),
            )
            if wanted
        ]
        sep, end = self.separator, self.line_separator
        if not fields:
            return lambda r: b""
        if len(fields) == 1:
            only = fields[0]
            return lambda r: only(r) + end
        return lambda r: sep.join([f(r) for f in fields]) + end
