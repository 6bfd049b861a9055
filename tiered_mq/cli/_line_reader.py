"""How ``produce`` reads a record from an input line: Kafka's LineMessageReader with the
``--property`` names of ``kafka-console-producer.sh`` (``_line_format.py`` says how they are
taken out of ``-X`` and read).

A line (terminator ``\\n`` or ``\\r\\n`` removed) is ``[HEADERS D][KEY S]VALUE`` with D
``headers.delimiter`` (a tab) when ``parse.headers=true``, S ``key.separator`` (else
``--key-separator``, else a tab) when ``parse.key=true`` or ``--key-separator`` is given, and
HEADERS ``k1:v1,k2:v2`` (``headers.key.separator``, ``headers.separator``). A key, value or
header value equal to ``null.marker`` (if set) is sent as null (a null value is a tombstone).
A missing delimiter or separator is a ``LineError``, or with ``ignore.error=true`` no headers /
a null key (and a header without ``:`` a null value), as Kafka does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tiered_mq.cli._line_format import flag, separator_property


class LineError(ValueError):
    """An input line that does not have the format asked for; the message says what is
    missing."""


Header = tuple[str, bytes | None]
Parsed = tuple[Sequence[Header], bytes | None, bytes | None]
"""(headers, key, value) of an input line."""
NO_HEADERS: tuple[Header, ...] = ()


def chomp(line: bytes) -> bytes:
    """``line`` without its terminator (``\\n`` or ``\\r\\n``; a lone ``\\r`` stays)."""
    if line[-1:] != b"\n":
        return line
    return line[:-2] if line[-2:] == b"\r\n" else line[:-1]


@dataclass(frozen=True)
class LineReader:
    """How ``produce`` splits an input line (see the module's docstring); ``None``: not parsed."""

    key_separator: bytes | None = None
    headers_delimiter: bytes | None = None
    headers_separator: bytes = b","
    headers_key_separator: bytes = b":"
    null_marker: bytes | None = None
    ignore_error: bool = False

    @classmethod
    def of(cls, props: Mapping[str, str], key_separator: bytes | None) -> LineReader:
        """The reader of ``--key-separator`` (``key_separator``) and the reader ``props``: keys
        are parsed with ``--key-separator`` or ``parse.key=true``, split at ``key.separator``
        (else ``--key-separator``, else a tab)."""
        parse_key = key_separator is not None or flag(props, "parse.key")
        marker = props.get("null.marker")
        return cls(
            key_separator=separator_property(props, "key.separator", key_separator or b"\t")
            if parse_key
            else None,
            headers_delimiter=separator_property(props, "headers.delimiter", b"\t")
            if flag(props, "parse.headers")
            else None,
            headers_separator=separator_property(props, "headers.separator", b","),
            headers_key_separator=separator_property(props, "headers.key.separator", b":"),
            null_marker=marker.encode() if marker else None,
            ignore_error=flag(props, "ignore.error"),
        )

    def _null(self, data: bytes) -> bytes | None:
        return None if self.null_marker is not None and data == self.null_marker else data

    def _headers(self, text: bytes) -> list[Header]:
        if not text:
            return []
        headers: list[Header] = []
        for pair in text.split(self.headers_separator):
            name, sep, value = pair.partition(self.headers_key_separator)
            if not sep and not self.ignore_error:
                raise LineError(f"no header key separator in {pair.decode(errors='replace')!r}")
            if self.null_marker is not None and name == self.null_marker:
                raise LineError(f"a header name cannot be the null marker {name.decode()!r}")
            headers.append((name.decode(errors="replace"), self._null(value) if sep else None))
        return headers

    def parser(self) -> Callable[[bytes], Parsed]:
        """``parse``, or for the usual formats (no headers, no null marker, no ignore.error) a
        shorter function doing the same: the produce loop calls it once per input line."""
        if self.headers_delimiter is not None or self.null_marker is not None or self.ignore_error:
            return self.parse
        separator = self.key_separator

        def plain(line: bytes) -> Parsed:
            line = chomp(line)
            if separator is None:
                return NO_HEADERS, None, line
            key, sep, value = line.partition(separator)
            if not sep:
                raise LineError(f"no key separator {separator.decode()!r}")
            return NO_HEADERS, key, value

        return plain

    def parse(self, line: bytes) -> Parsed:
        """``(headers, key, value)`` of one input line; ``LineError`` if a delimiter is missing
        (unless ``ignore_error``)."""
        line = chomp(line)
        headers: Sequence[Header] = NO_HEADERS
        if self.headers_delimiter is not None:
            raw, sep, rest = line.partition(self.headers_delimiter)
            if sep:
                headers, line = self._headers(raw), rest
            elif not self.ignore_error:
                raise LineError(f"no headers delimiter {self.headers_delimiter.decode()!r}")
        key = None
        if self.key_separator is not None:
            raw, sep, rest = line.partition(self.key_separator)
            if sep:
                key, line = self._null(raw), rest
            elif not self.ignore_error:
                raise LineError(f"no key separator {self.key_separator.decode()!r}")
        return headers, key, self._null(line)
