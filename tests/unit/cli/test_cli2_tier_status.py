"""``tier status``: its columns are as wide as their widest cell, so a topic name longer than
the 30 characters the partition column had keeps the rows in line with the header; and
``--json`` prints the rows for scripts, as ``tier inspect --json`` does."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tiered_mq.cli import main
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, RemoteSegment, SegmentState, TopicManifest
from tiered_mq.cold.object_store import open_sync_store

LONG = "payments.eu-west-1.settlements-v2"  # 33 characters: longer than the old column


def _bucket(root: Path) -> str:
    store = open_sync_store(f"file://{root}")
    uploaded = RemoteSegment(
        base_offset=0,
        end_offset=1_234_566,
        first_timestamp=1,
        max_timestamp=2,
        size_bytes=987_654_321,
        record_count=1_234_567,
        leader_epochs=[(0, 0)],
        upload_id="u",
        uploader_epoch=0,
        objects={"log": "x"},
        crc32c=0,
        state=SegmentState.COPY_FINISHED,
    )
    for topic, partitions in (("orders", 1), (LONG, 2)):
        store.put(layout.topic_manifest_key("", topic), TopicManifest(topic, partitions).to_json())
    manifest = PartitionManifest(LONG, 0, segments=[uploaded])
    store.put(layout.manifest_key("", LONG, 0), manifest.to_json())
    return str(root)


def _ends(line: str) -> list[int]:
    """Where each right-aligned cell of a line ends (the partition cell left out)."""
    return [m.end() for m in re.finditer(r"\S+(?: \S+)?", line)][1:]


def test_status_columns_fit_a_long_topic_name(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["tier", "status", _bucket(tmp_path)])
    assert r.exit_code == 0, r.output
    header, *rows = r.stdout.splitlines()
    assert [row.split()[0] for row in rows] == ["orders-0", f"{LONG}-0", f"{LONG}-1"]
    assert rows[1].split()[1:] == ["0..1234566", "1", "987654321"]
    for row in rows:
        assert _ends(row) == _ends(header), f"\n{header}\n{row}"


def test_status_json(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["tier", "status", _bucket(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [(row["topic"], row["partition"]) for row in rows] == [
        ("orders", 0),
        (LONG, 0),
        (LONG, 1),
    ]
    assert rows[1] == {
        "topic": LONG,
        "partition": 0,
        "remote_log_start_offset": 0,
        "remote_end_offset": 1_234_566,
        "segments": 1,
        "size_bytes": 987_654_321,
        "copy_lag_segments": None,
        "copy_lag_bytes": None,
    }
    nothing = {"remote_log_start_offset": None, "remote_end_offset": -1, "segments": 0}
    assert all(rows[i].items() >= nothing.items() for i in (0, 2)), rows
