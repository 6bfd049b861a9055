"""Object keys of the bucket: the one place that owns them (pure; no I/O, no asyncio).

Layout under a prefix ``P`` (keys start at ``topics/`` when the prefix is empty)::

    P/topics/{topic}/topic.json                                  topic manifest
    P/topics/{topic}/{partition}/manifest.json                   partition manifest
    P/topics/{topic}/{partition}/{base:020d}-{epoch}-{upload_id}.log        record batches v2
    P/topics/{topic}/{partition}/{base:020d}-{epoch}-{upload_id}.index      offset index
    P/topics/{topic}/{partition}/{base:020d}-{epoch}-{upload_id}.timeindex  time index
    P/topics/{topic}/{partition}/{base:020d}-{epoch}-{upload_id}.snapshot   producer state
    P/topics/{topic}/{partition}/{base:020d}-{epoch}-{upload_id}.txnindex   aborted txns

``base`` is the segment's base offset zero-padded to 20 digits (so listings sort by offset),
``epoch`` the uploading leader's epoch, ``upload_id`` a random hex id of one upload attempt: two
attempts (a retry, or two leaders racing) never write the same key, so an object is written
once and never overwritten; only the manifest says which attempt counts. Each file is a byte
copy of the broker's local file of the same suffix (formats in tiered_mq/hot/).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

LOG: Final = "log"
INDEX: Final = "index"
TIME_INDEX: Final = "timeindex"
SNAPSHOT: Final = "snapshot"
TXN_INDEX: Final = "txnindex"
SEGMENT_SUFFIXES: Final = (LOG, INDEX, TIME_INDEX, SNAPSHOT, TXN_INDEX)

MANIFEST_NAME: Final = "manifest.json"
TOPIC_MANIFEST_NAME: Final = "topic.json"

_SEGMENT_NAME = re.compile(
    r"^(?P<base>\d{20})-(?P<epoch>\d+)-(?P<upload>[0-9A-Za-z]+)\.(?P<suffix>[a-z]+)$"
)


def _root(prefix: str) -> str:
    prefix = prefix.strip("/")
    return f"{prefix}/topics/" if prefix else "topics/"


def topics_prefix(prefix: str) -> str:
    """The key prefix under which every topic lives (``P/topics/``)."""
    return _root(prefix)


def topic_prefix(prefix: str, topic: str) -> str:
    return f"{_root(prefix)}{topic}/"


def partition_prefix(prefix: str, topic: str, partition: int) -> str:
    return f"{_root(prefix)}{topic}/{partition}/"


def manifest_key(prefix: str, topic: str, partition: int) -> str:
    return partition_prefix(prefix, topic, partition) + MANIFEST_NAME


def topic_manifest_key(prefix: str, topic: str) -> str:
    return topic_prefix(prefix, topic) + TOPIC_MANIFEST_NAME


def segment_key(
    prefix: str,
    topic: str,
    partition: int,
    base_offset: int,
    leader_epoch: int,
    upload_id: str,
    suffix: str,
) -> str:
    if suffix not in SEGMENT_SUFFIXES:
        raise ValueError(f"unknown segment suffix {suffix!r}")
    return (
        f"{partition_prefix(prefix, topic, partition)}"
        f"{base_offset:020d}-{leader_epoch}-{upload_id}.{suffix}"
    )


class ParsedKey(NamedTuple):
    """What a key under ``P/topics/`` names: ``kind`` is ``topic``, ``manifest`` or ``segment``
    (segment fields are -1 / "" for the other kinds)."""

    kind: str
    topic: str
    partition: int = -1
    base_offset: int = -1
    leader_epoch: int = -1
    upload_id: str = ""
    suffix: str = ""


def parse_key(prefix: str, key: str) -> ParsedKey | None:
    """Parse a key of this layout; None for anything else (a scrub reports those)."""
    root = _root(prefix)
    if not key.startswith(root):
        return None
    parts = key[len(root) :].split("/")
    if len(parts) == 2 and parts[1] == TOPIC_MANIFEST_NAME and parts[0]:
        return ParsedKey("topic", parts[0])
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit():
        return None
    topic, partition = parts[0], int(parts[1])
    if parts[2] == MANIFEST_NAME:
        return ParsedKey("manifest", topic, partition)
    match = _SEGMENT_NAME.match(parts[2])
    if match is None or match["suffix"] not in SEGMENT_SUFFIXES:
        return None
    return ParsedKey(
        "segment",
        topic,
        partition,
        int(match["base"]),
        int(match["epoch"]),
        match["upload"],
        match["suffix"],
    )
