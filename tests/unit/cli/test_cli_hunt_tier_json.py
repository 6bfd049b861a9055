"""``tier inspect --json`` tells a deleted topic's manifest (its topic id not topic.json's)
from a live one, as the text output does ("stale"); a script reading the JSON counted it as
the live topic's."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tiered_mq.cli import main
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, TopicManifest
from tiered_mq.cold.object_store import open_sync_store


def test_inspect_json_marks_stale_manifests(tmp_path: Path) -> None:
    store = open_sync_store(f"file://{tmp_path}")
    store.put(layout.topic_manifest_key("", "t"), TopicManifest("t", 2, topic_id="new").to_json())
    for partition, topic_id in ((0, "new"), (1, "old")):
        manifest = PartitionManifest("t", partition, topic_id=topic_id)
        store.put(layout.manifest_key("", "t", partition), manifest.to_json())

    r = CliRunner().invoke(main, ["tier", "inspect", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [(m["partition"], m["stale"]) for m in doc["t"]] == [(0, False), (1, True)]
    text = CliRunner().invoke(main, ["tier", "inspect", str(tmp_path)]).stdout
    assert "partition 1:" in text and "stale" in text.split("partition 1:")[1]


def test_inspect_of_a_topic_with_nothing_uploaded_names_it(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["tier", "inspect", str(tmp_path), "--topic", "orders"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == "topic orders: nothing in the bucket"
