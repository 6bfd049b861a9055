"""JSON of a document of sections, re-encoding only the entries that changed.

A document is a dict whose values are either sections (dicts of entries: ``topics``,
``partitions``, ...) or plain JSON values. :class:`SectionEncoder` writes::

    {"brokers": {
    "0": {"host": "127.0.0.1", "port": 9092, "rack": null}},
    "cluster_id": "...",
    ...}

top-level keys sorted, one entry a line in the section's order, each entry's keys sorted. It
keeps the text of every entry it encoded with the entry object itself, and reuses that text while
the document holds the same object: entries are never changed in place (a change replaces
them, embedded.py), so a document of thousands of partitions costs a join and the encoding of
what changed, not the encoding of everything (tens of milliseconds holding the GIL).

Not thread-safe: one encode at a time (the coordinator's lock).
"""

from __future__ import annotations

import json
from typing import Any


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class SectionEncoder:
    """Encodes documents, reusing the text of entries seen in the previous one."""

    def __init__(self) -> None:
        # section name -> entry key -> (entry object, its JSON); strong references, so an
        # object's identity is never reused while its text is kept
        self._texts: dict[str, dict[str, tuple[Any, str]]] = {}

    def encode(self, document: dict[str, Any]) -> str:
        parts = []
        texts: dict[str, dict[str, tuple[Any, str]]] = {}
        for name in sorted(document):
            value = document[name]
            if isinstance(value, dict):
                texts[name] = section = self._section(name, value)
                body = ",\n".join(f"{_dumps(k)}: {text}" for k, (_, text) in section.items())
                parts.append(f"{_dumps(name)}: {{\n{body}}}" if body else f"{_dumps(name)}: {{}}")
            else:
                parts.append(f"{_dumps(name)}: {_dumps(value)}")
        self._texts = texts
        return "{" + ",\n".join(parts) + "}\n"

    def _section(self, name: str, entries: dict[str, Any]) -> dict[str, tuple[Any, str]]:
        known = self._texts.get(name, {})
        section: dict[str, tuple[Any, str]] = {}
        for key, entry in entries.items():
            seen = known.get(key)
            if seen is not None and seen[0] is entry:
                section[key] = seen
            else:
                section[key] = (entry, _dumps(entry))
        return section
