"""Plain-text tables of the CLI (``topics describe``, ``groups``, ``tier status``, ...): no
client import, so that ``tier`` (which needs no broker) does not load librdkafka."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from typing import Any


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "-"
    return str(value)


def format_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Container[int] = ()
) -> str:
    """Columns as wide as their widest cell, separated by two spaces, left-aligned but for the
    column indexes in ``right`` (numbers); ``None`` shows as ``-``; no trailing spaces."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = [
        "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in [list(headers), *cells]
    ]
    return "\n".join(lines)
