"""``partition.metadata`` (Kafka's PartitionMetadataFile): the topic id of a partition
directory, in Kafka's text format, replaced durably; a file that is not that format is an
error naming it."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from tiered_mq.hot import partition_metadata as pm

TOPIC_ID = uuid.UUID("8c3b2e5a-4f1d-4a77-9c0e-2b6d5f1e9a10").hex


def test_round_trip_in_kafkas_format(tmp_path: Path) -> None:
    assert pm.read(tmp_path) is None  # no file: a directory from before topic ids
    pm.write(tmp_path, TOPIC_ID)
    assert pm.read(tmp_path) == TOPIC_ID
    # Kafka's bytes: its Uuid.toString() is URL-safe base64 without padding
    assert (tmp_path / "partition.metadata").read_bytes() == (
        b"version: 0\ntopic_id: jDsuWk8dSnecDittXx6aEA"
    )
    other = uuid.uuid4().hex
    pm.write(tmp_path, other)  # replaced whole
    assert pm.read(tmp_path) == other
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partition.metadata"]


def test_a_file_written_by_kafka_is_read(tmp_path: Path) -> None:
    # Kafka accepts any whitespace after the colon and a trailing newline
    (tmp_path / "partition.metadata").write_text("version: 0\ntopic_id:  jDsuWk8dSnecDittXx6aEA\n")
    assert pm.read(tmp_path) == TOPIC_ID


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "0 line(s), expected 2"),
        (b"version: 0\n", "1 line(s), expected 2"),
        (b"version: 1\ntopic_id: jDsuWk8dSnecDittXx6aEA", "unrecognized version '1'"),
        (b"version 0\ntopic_id: jDsuWk8dSnecDittXx6aEA", "malformed line 'version 0'"),
        (b"version: 0\ntopicid: jDsuWk8dSnecDittXx6aEA", "malformed line 'topicid"),
        (b"version: 0\ntopic_id: jDsuWk8dSnec", "not a Kafka Uuid"),
        (b"version: 0\ntopic_id: jDsuWk8dSnecDitt*x6aEA", "not a Kafka Uuid"),
        (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "the zero UUID"),
        (b"version: 0\ntopic_id: \xff\xfe", "not UTF-8 text"),
    ],
)
def test_a_corrupt_file_is_an_error_naming_it(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "partition.metadata"
    path.write_bytes(content)
    with pytest.raises(pm.PartitionMetadataError, match=re.escape(reason)) as info:
        pm.read(tmp_path)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ")


def test_a_stale_temporary_file_is_not_the_file(tmp_path: Path) -> None:
    """A crash before the rename leaves ``partition.metadata.tmp``: the id is not recorded,
    and the next write replaces it."""
    (tmp_path / "partition.metadata.tmp").write_bytes(b"version: 0\ntopic_id: jDsu")
    assert pm.read(tmp_path) is None
    pm.write(tmp_path, TOPIC_ID)
    assert pm.read(tmp_path) == TOPIC_ID
    assert not (tmp_path / "partition.metadata.tmp").exists()


def test_kafka_uuid_form() -> None:
    assert pm.from_kafka_uuid(pm.to_kafka_uuid(TOPIC_ID)) == TOPIC_ID
    assert len(pm.to_kafka_uuid(uuid.uuid4().hex)) == 22
    with pytest.raises(ValueError, match="22 characters"):
        pm.from_kafka_uuid(TOPIC_ID)  # the hex form is not Kafka's
