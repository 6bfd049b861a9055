"""``tiered-mq tier`` on a file:// bucket filled by the real uploader."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from click.testing import CliRunner

from tests.unit.cold.helpers import Clock, fill, open_log
from tiered_mq.cli.tier import command
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import SegmentState, parse_partition_manifest
from tiered_mq.cold.object_store import (
    ObjectInfo,
    SyncObjectStore,
    open_object_store,
    open_sync_store,
)
from tiered_mq.cold.remote_log_manager import RemoteLogManager
from tiered_mq.cold.scrub import scrub
from tiered_mq.cold.uploader import UploaderSettings
from tiered_mq.topic_partition import TopicPartition


async def _bucket(tmp_path: Path) -> str:
    url = f"file://{tmp_path}/bucket?prefix=c1"
    store = open_object_store(url)
    rlm = RemoteLogManager(
        store,
        "c1",
        tmp_path / "cache",
        1 << 20,
        settings=UploaderSettings(check_interval_s=3600, local_retention=False),
        clock=Clock(),
    )
    log = open_log(tmp_path / "data" / "orders-0")
    fill(log, 3)
    tp = TopicPartition("orders", 0)
    rlm.on_become_leader(tp, log, log.config, lambda: 40, leader_epoch=3)
    uploader = rlm.uploader(tp)
    assert uploader is not None
    await uploader.stop()
    await uploader.run_pass()
    await rlm.write_topic_manifest("orders", 1, {"retention.ms": "-1"})
    await rlm.close()
    return url


async def test_inspect_status_scrub(tmp_path: Path) -> None:
    url = await _bucket(tmp_path)
    runner = CliRunner()
    out = runner.invoke(command, ["inspect", url])
    assert out.exit_code == 0, out.output
    assert "topic orders: 1 partition(s)\n  configs:\n    retention.ms  -1\n" in out.output
    assert "partition 0: leader epoch 3, log start 0, offsets 0..39, 2 segment(s)" in out.output
    assert "COPY_FINISHED" in out.output
    assert "2023-11-14T22:13:20.000Z" in out.output  # first timestamp of segment 0

    status = runner.invoke(command, ["status", url, "--data-dir", str(tmp_path / "data")])
    assert status.exit_code == 0, status.output
    row = next(line for line in status.output.splitlines() if line.startswith("orders-0"))
    # Segment 40-59 is rolled but not uploaded (above the HWM): the copy lag.
    assert row.split()[1:] == ["0..39", "2", "1960", "1", "1000"]

    # An orphan: a segment object no manifest names.
    sync = open_sync_store(url)
    orphan = "c1/topics/orders/0/00000000000000000099-3-deadbeef.log"
    sync.put(orphan, b"junk")
    sync.put("c1/topics/stray.txt", b"?")
    listed = runner.invoke(command, ["scrub", url])
    assert f"orphan  {orphan}" in listed.output
    assert "unknown c1/topics/stray.txt" in listed.output
    assert "1 orphan(s), 4 bytes found" in listed.output
    assert sync.head(orphan) is not None
    deleted = runner.invoke(command, ["scrub", url, "--delete"])
    assert "1 orphan(s), 4 bytes deleted" in deleted.output
    assert sync.head(orphan) is None
    again = runner.invoke(command, ["scrub", url])
    assert "0 orphan(s)" in again.output


def test_missing_bucket_is_a_clear_error(tmp_path: Path) -> None:
    out = CliRunner().invoke(command, ["inspect", "gs://nope"])
    assert out.exit_code != 0
    assert "unsupported object store scheme" in out.output


async def test_scrub_reports_as_missing_only_objects_readers_would_serve(tmp_path: Path) -> None:
    """An upload in flight (COPY_STARTED, objects not written yet) or finished after the scrub's
    listing is not "missing"; a COPY_FINISHED segment whose .log is gone is."""
    url = await _bucket(tmp_path)
    sync = open_sync_store(url)
    manifest_key = layout.manifest_key("c1", "orders", 0)
    manifest = parse_partition_manifest(sync.get(manifest_key)[0])
    finished = manifest.segments[0]
    in_flight = replace(
        finished,
        upload_id="feedface",
        objects={"log": "c1/topics/orders/0/00000000000000000000-4-feedface.log"},
        state=SegmentState.COPY_STARTED,
    )
    manifest.segments.append(in_flight)
    sync.put(manifest_key, manifest.to_json())
    assert scrub(sync, "c1").missing == []

    class ListedBeforeUpload:  # the listing misses an object that is there when manifests are read
        def __init__(self, store: SyncObjectStore) -> None:
            self.store = store

        def list(self, prefix: str) -> list[ObjectInfo]:
            return [o for o in self.store.list(prefix) if o.key != finished.key("log")]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.store, name)

    assert scrub(cast(SyncObjectStore, ListedBeforeUpload(sync)), "c1").missing == []

    lost = finished.key("log")
    assert lost is not None
    sync.delete(lost)
    out = CliRunner().invoke(command, ["scrub", url])
    assert f"missing {lost} (named by a manifest)" in out.output
    assert out.output.count("missing ") == 1


async def test_status_lists_a_tiered_partition_with_nothing_uploaded(tmp_path: Path) -> None:
    """A partition of topic.json without a manifest yet is listed (``-``), with all its rolled
    segments as copy lag, instead of being left out as if it were not tiered."""
    url = await _bucket(tmp_path)
    store = open_object_store(url)
    rlm = RemoteLogManager(store, "c1", tmp_path / "cache2", 1 << 20)
    await rlm.write_topic_manifest("orders", 2, {"retention.ms": "-1"})
    await rlm.close()
    fill(open_log(tmp_path / "data" / "orders-1"), 2)  # two rolled segments, none uploaded

    out = CliRunner().invoke(command, ["status", url, "--data-dir", str(tmp_path / "data")])
    assert out.exit_code == 0, out.output
    rows = {line.split()[0]: line.split()[1:] for line in out.output.splitlines()[1:]}
    assert rows["orders-0"] == ["0..39", "2", "1960", "1", "1000"]
    lag_bytes = sum(p.stat().st_size for p in (tmp_path / "data" / "orders-1").glob("*.log"))
    assert rows["orders-1"] == ["-", "0", "0", "2", str(lag_bytes)]
