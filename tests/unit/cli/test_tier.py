"""``tiered-mq tier`` given a local directory instead of a URL, and its config listing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tiered_mq.cli import main
from tiered_mq.cli.tier import store_url
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import PartitionManifest, TopicManifest
from tiered_mq.cold.object_store import open_sync_store

CONFIGS = {"retention.ms": "-1", "cleanup.policy": "delete", "remote.storage.enable": "true"}


@pytest.fixture
def bucket(tmp_path: Path) -> Path:
    """A file bucket (no prefix) with topic ``orders``: its topic.json and an empty partition."""
    root = tmp_path / "cold"
    store = open_sync_store(f"file://{root}")
    store.put(
        layout.topic_manifest_key("", "orders"), TopicManifest("orders", 1, CONFIGS).to_json()
    )
    store.put(layout.manifest_key("", "orders", 0), PartitionManifest("orders", 0).to_json())
    return root


def test_store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store_url("s3://b/p") == "s3://b/p"
    assert store_url("file:///x/y?prefix=c") == "file:///x/y?prefix=c"
    assert store_url(str(tmp_path)) == f"file://{tmp_path.resolve()}"
    monkeypatch.chdir(tmp_path.parent)
    assert store_url(f"./{tmp_path.name}/") == f"file://{tmp_path.resolve()}"


@pytest.mark.parametrize("command", ["inspect", "status", "scrub"])
def test_a_local_path_is_a_file_bucket(
    bucket: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    runner = CliRunner()
    by_url = runner.invoke(main, ["tier", command, f"file://{bucket}"])
    assert by_url.exit_code == 0, by_url.output
    assert runner.invoke(main, ["tier", command, str(bucket)]).output == by_url.output
    monkeypatch.chdir(bucket.parent)
    relative = runner.invoke(main, ["tier", command, bucket.name])
    assert relative.exit_code == 0, relative.output
    assert relative.output == by_url.output
    assert "orders" in by_url.output or command == "scrub"


def test_a_missing_directory_is_refused_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    r = CliRunner().invoke(main, ["tier", "inspect", str(missing)])
    assert r.exit_code == 2
    assert f"{missing}: no such directory" in r.output
    assert not missing.exists()


def test_inspect_lists_configs_one_a_line(bucket: Path) -> None:
    r = CliRunner().invoke(main, ["tier", "inspect", str(bucket)])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[:5] == [
        "topic orders: 1 partition(s)",
        "  configs:",
        "    cleanup.policy         delete",
        "    remote.storage.enable  true",
        "    retention.ms           -1",
    ]


def test_inspect_says_a_partition_without_segments_has_none(bucket: Path) -> None:
    r = CliRunner().invoke(main, ["tier", "inspect", str(bucket)])
    assert "partition 0: leader epoch" in r.output
    assert "offsets no readable segment, 0 segment(s)" in r.output
    assert "None" not in r.output
