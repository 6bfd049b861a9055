"""``partition.metadata``: the id of the topic a partition directory belongs to (Kafka's
PartitionMetadataFile, KIP-516).

Format (UTF-8 text, two lines, Kafka's exactly)::

    version: 0
    topic_id: <topic id>

The topic id is Kafka's ``Uuid.toString()``: the 16 bytes of the UUID in URL-safe base64
without padding (22 characters); the cluster metadata holds the same UUID as 32 hex digits
(coordination/base.py), which :func:`to_kafka_uuid` / :func:`from_kafka_uuid` convert. A reader
takes ``<key>: <value>`` lines, accepts a trailing newline, and refuses any other version, a
missing or malformed line, a topic id that is not 16 bytes of base64, and the zero UUID (Kafka's
checks): :class:`PartitionMetadataError`, naming the file.

Why: a topic deleted and created again under the same name has a new topic id. A partition
directory of the old topic that a crash left under its plain ``<topic>-<partition>`` name (the
broker died after the topic left the metadata, before the directory was renamed ``-delete``)
carries the old id, so the broker knows it for a stray and never serves its records as the new
topic's (broker/stray_partitions.py). A directory without the file (written before this file
existed, or by a crash between its creation and the write) takes the registered topic's id when
it is opened, as Kafka's upgrade path does.

Crash behaviour: :func:`write` replaces the file durably (``partition.metadata.tmp``, fsync,
rename, fsync of the directory; durable_file.py): after a crash the file is absent, or holds the
whole id. A stale ``.tmp`` is ignored here and removed by log recovery (hot/recovery.py).
:func:`write_many` does the same for many directories (a topic's partitions) with their fsyncs
grouped; each file is renamed only after its ``.tmp`` is on disk, so the same holds per file.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from tiered_mq.durable_file import replace_durably, replace_durably_many
from tiered_mq.errors import StorageError

FILE_NAME: Final = "partition.metadata"
VERSION: Final = 0
_UUID_BYTES: Final = 16


class PartitionMetadataError(StorageError):
    """A ``partition.metadata`` file that cannot be read; ``path`` names it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def to_kafka_uuid(hex_id: str) -> str:
    """32 hex digits -> Kafka's 22-character form (URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(bytes.fromhex(hex_id)).decode().rstrip("=")


def from_kafka_uuid(text: str) -> str:
    """Kafka's 22-character form -> 32 hex digits; ValueError when it is not 16 bytes."""
    if len(text) != 22:
        raise ValueError(f"not a Kafka Uuid (22 characters): {text!r}")
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not a Kafka Uuid (base64): {text!r}") from exc
    if len(raw) != _UUID_BYTES:
        raise ValueError(f"not a Kafka Uuid (16 bytes): {text!r}")
    return raw.hex()


def encode(topic_id: str) -> bytes:
    """The file's bytes for ``topic_id`` (32 hex digits)."""
    return f"version: {VERSION}\ntopic_id: {to_kafka_uuid(topic_id)}".encode()


def decode(data: bytes, path: Path) -> str:
    """The topic id (32 hex digits) in the file's bytes ``data``; PartitionMetadataError
    naming ``path`` when they are not the format above."""
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise PartitionMetadataError(path, "not UTF-8 text") from None
    if len(lines) != 2:
        raise PartitionMetadataError(path, f"{len(lines)} line(s), expected 2")
    version = _value(lines[0], "version", path)
    if version != str(VERSION):
        raise PartitionMetadataError(path, f"unrecognized version {version!r}")
    try:
        topic_id = from_kafka_uuid(_value(lines[1], "topic_id", path))
    except ValueError as exc:
        raise PartitionMetadataError(path, str(exc)) from None
    if int(topic_id, 16) == 0:
        raise PartitionMetadataError(path, "invalid topic id (the zero UUID)")
    return topic_id


def _value(line: str, key: str, path: Path) -> str:
    name, sep, value = line.partition(":")
    if not sep or name.strip() != key or not value.strip():
        raise PartitionMetadataError(path, f"malformed line {line!r}, expected '{key}: <value>'")
    return value.strip()


def path_in(dir: Path) -> Path:
    return dir / FILE_NAME


def read(dir: Path) -> str | None:
    """The topic id recorded in partition directory ``dir``, None when it has no file.
    Raises PartitionMetadataError (a corrupt file) or OSError (it cannot be read)."""
    path = path_in(dir)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return decode(data, path)


def write(dir: Path, topic_id: str) -> None:
    """Record ``topic_id`` (32 hex digits) in partition directory ``dir``, durably."""
    replace_durably(path_in(dir), encode(topic_id))


def write_many(ids: Sequence[tuple[Path, str]], dirs: Iterable[Path] = ()) -> None:
    """:func:`write` for each ``(partition directory, topic id)`` of ``ids``, the fsyncs of
    all grouped (durable_file.replace_durably_many); ``dirs`` are fsynced with them."""
    encoded = {topic_id: encode(topic_id) for topic_id in {topic_id for _, topic_id in ids}}
    replace_durably_many([(path_in(dir), encoded[topic_id]) for dir, topic_id in ids], dirs)
