"""``tiered-mq tier``: look at and tidy the bucket, with no broker running.

    tiered-mq tier inspect URL [--topic T] [--json]    topics, partitions, remote segments
    tiered-mq tier scrub URL [--delete]                orphaned objects (listed; deleted on request)
    tiered-mq tier status URL [--data-dir D] [--json]  per partition: bucket range and copy lag

URL is the tiered storage URL of the brokers (``s3://bucket/prefix``, ``file:///path``); a
local directory path without a scheme (``/tmp/x/cold``, ``./cold``) means ``file://`` that
directory, which must exist.
S3 options: ``--s3-endpoint`` (MinIO, SeaweedFS), ``--s3-region``, ``--s3-access-key``,
``--s3-secret-key``, ``--s3-path-style``, also from TIERED_MQ_S3_ENDPOINT, ... and otherwise
the standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, ...).

A partition manifest whose topic id is not its topic.json's belongs to a deleted topic of the
same name (the bucket's copy was never deleted): ``inspect`` marks it stale (``--json``: a
``"stale": true`` field in each manifest, false for the others), ``status`` leaves
it out and ``scrub --delete`` removes it with the objects only it names.

``status`` reads the manifests from the bucket and lists every partition of each topic.json
(one with nothing uploaded yet shows ``-``) and, given ``--data-dir`` (a broker's log
directory, one ``{topic}-{partition}`` folder per partition; one that does not exist is a usage
error, not a lag of 0), counts the rolled local segments whose data is above the highest
uploaded offset: the copy lag (a live broker also exports it as the
``tiered_mq_remote_copy_lag_*`` metrics). Its columns are as wide as their widest cell (a long
topic name does not push the others out of line); ``--json`` prints the same rows as a JSON
array (``_status_rows`` states the fields). A bucket with no topic in it is ``no topics`` in
both ``inspect`` and ``status`` (``--json``: ``{}`` and ``[]``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import click

from tiered_mq.cli._table import format_table
from tiered_mq.cold import layout
from tiered_mq.cold.manifest import (
    ManifestFormatError,
    PartitionManifest,
    is_foreign,
    parse_partition_manifest,
)
from tiered_mq.cold.object_store import SyncObjectStore, open_sync_store, parse_store_url
from tiered_mq.cold.scrub import read_topic_manifest, scrub
from tiered_mq.errors import ObjectNotFoundError, StorageError


def _s3_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--s3-endpoint",
            envvar="TIERED_MQ_S3_ENDPOINT",
            help="S3 endpoint URL (MinIO, SeaweedFS, ...).",
            show_envvar=True,
        ),
        click.option(
            "--s3-region", envvar="TIERED_MQ_S3_REGION", help="S3 region.", show_envvar=True
        ),
        click.option(
            "--s3-access-key",
            envvar="TIERED_MQ_S3_ACCESS_KEY",
            help="S3 access key.",
            show_envvar=True,
        ),
        click.option(
            "--s3-secret-key",
            envvar="TIERED_MQ_S3_SECRET_KEY",
            help="S3 secret key.",
            show_envvar=True,
        ),
        click.option(
            "--s3-path-style/--s3-virtual-host",
            envvar="TIERED_MQ_S3_PATH_STYLE",
            show_envvar=True,
            default=False,
            help="Path-style addressing (most self-hosted servers).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def store_url(url: str) -> str:
    """``url`` as given, or a local directory path (no scheme) as ``file://<absolute path>``."""
    if urlparse(url).scheme:
        return url
    path = Path(url).expanduser().resolve()
    if not path.is_dir():
        raise click.BadParameter(f"{url}: no such directory", param_hint="URL")
    if "?" in str(path) or "#" in str(path):
        raise click.BadParameter(f"{url}: '?' and '#' cannot be in a file URL", param_hint="URL")
    return f"file://{path}"


def _open(url: str, opts: dict[str, Any]) -> tuple[SyncObjectStore, str]:
    url = store_url(url)
    try:
        parsed = parse_store_url(url)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="URL") from e
    try:
        store = open_sync_store(
            url,
            endpoint_url=opts.get("s3_endpoint"),
            region=opts.get("s3_region"),
            access_key=opts.get("s3_access_key"),
            secret_key=opts.get("s3_secret_key"),
            path_style=bool(opts.get("s3_path_style")),
        )
    except ValueError as e:  # botocore's "Invalid endpoint: ...", "Invalid IPv6 URL", ...
        raise click.UsageError(f"S3 settings: {e}") from e
    return store, parsed.prefix


def _ts(ms: int) -> str:
    if ms < 0:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _manifests(
    store: SyncObjectStore, prefix: str, topic: str | None
) -> dict[str, list[PartitionManifest]]:
    root = layout.topic_prefix(prefix, topic) if topic else layout.topics_prefix(prefix)
    found: dict[str, list[PartitionManifest]] = {}
    for obj in store.list(root):
        parsed = layout.parse_key(prefix, obj.key)
        if parsed is None:
            continue
        if parsed.kind == "topic":
            found.setdefault(parsed.topic, [])
        elif parsed.kind == "manifest":
            try:
                manifest = parse_partition_manifest(store.get(obj.key)[0])
            except (ManifestFormatError, ObjectNotFoundError) as e:
                click.echo(f"warning: {obj.key}: {e}", err=True)
                continue
            found.setdefault(parsed.topic, []).append(manifest)
    for manifests in found.values():
        manifests.sort(key=lambda m: m.partition)
    return found


def _config_lines(configs: Mapping[str, str]) -> list[str]:
    """A topic's configs, one a line with the values aligned (none: no lines)."""
    if not configs:
        return []
    width = max(len(k) for k in configs)
    return ["  configs:", *(f"    {k:<{width}}  {v}" for k, v in sorted(configs.items()))]


def _json_doc(
    store: SyncObjectStore, prefix: str, topics: Mapping[str, list[PartitionManifest]]
) -> dict[str, list[dict[str, Any]]]:
    """``inspect --json``: topic -> its partition manifests, each with ``"stale": true`` when
    its topic id is not its topic.json's (a deleted topic's, which ``inspect`` marks stale)."""
    doc = {}
    for name, manifests in sorted(topics.items()):
        tm = read_topic_manifest(store, prefix, name)
        doc[name] = [
            {**m.to_dict(), "stale": tm is not None and is_foreign(m.topic_id, tm.topic_id)}
            for m in manifests
        ]
    return doc


def _run(fn: Callable[[], None]) -> None:
    try:
        fn()
    except StorageError as e:
        raise click.ClickException(str(e)) from e


@click.group("tier")
def command() -> None:
    """Tiered storage: inspect and scrub the bucket, show tiering status."""


@command.command("inspect")
@click.argument("url")
@click.option("--topic", help="Only this topic.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print the manifests as JSON ({topic: [manifest + "stale": bool, ...]}).',
)
@_s3_options
def inspect_cmd(url: str, topic: str | None, as_json: bool, **opts: Any) -> None:
    """Topics, partitions and remote segments (offsets, times, sizes) from the bucket alone."""
    store, prefix = _open(url, opts)

    def body() -> None:
        topics = _manifests(store, prefix, topic)
        if as_json:
            click.echo(json.dumps(_json_doc(store, prefix, topics), indent=1))
            return
        if not topics:
            click.echo(f"topic {topic}: nothing in the bucket" if topic else "no topics")
        for name, manifests in sorted(topics.items()):
            tm = read_topic_manifest(store, prefix, name)
            if tm is None:
                click.echo(f"topic {name}: (no topic.json)")
            else:
                topic_id = f", topic id {tm.topic_id}" if tm.topic_id else ""
                click.echo(f"topic {name}: {tm.partition_count} partition(s){topic_id}")
                for line in _config_lines(tm.configs):
                    click.echo(line)
            for m in manifests:
                start = m.remote_log_start_offset()
                offsets = "no readable segment" if start is None else f"{start}..{m.end_offset()}"
                stale = tm is not None and is_foreign(m.topic_id, tm.topic_id)
                click.echo(
                    f"  partition {m.partition}: leader epoch {m.leader_epoch}, log start "
                    f"{m.log_start_offset}, offsets {offsets}"
                    f", {len(m.readable_segments())} segment(s), {m.size_bytes()} bytes"
                    + (f" (stale: topic id {m.topic_id}, a deleted topic's)" if stale else "")
                )
                for s in m.segments:
                    click.echo(
                        f"    {s.base_offset:>12}..{s.end_offset:<12} {s.state:<14} "
                        f"{s.record_count:>9} records {s.size_bytes:>12} bytes  "
                        f"{_ts(s.first_timestamp)} .. {_ts(s.max_timestamp)}  epoch "
                        f"{s.uploader_epoch} id {s.upload_id}"
                    )

    _run(body)


@command.command("scrub")
@click.argument("url")
@click.option("--delete", is_flag=True, help="Delete the orphaned objects (and stale manifests).")
@_s3_options
def scrub_cmd(url: str, delete: bool, **opts: Any) -> None:
    """Objects no manifest references (orphans); deleted with --delete."""
    store, prefix = _open(url, opts)

    def body() -> None:
        report = scrub(store, prefix, delete=delete)
        for o in report.orphans:
            click.echo(f"orphan  {o.key} ({o.size} bytes)")
        for o in report.unknown:
            click.echo(f"unknown {o.key} (not tiered-mq's layout; kept)")
        for key in report.missing:
            click.echo(f"missing {key} (named by a manifest)")
        for key in report.bad_manifests:
            click.echo(f"bad manifest {key} (its partition's objects were not judged)")
        for key in report.stale_manifests:
            click.echo(f"stale   {key} (a deleted topic's: topic id not topic.json's)")
        verb = "deleted" if delete else "found"
        click.echo(f"{len(report.orphans)} orphan(s), {report.orphan_bytes} bytes {verb}")
        if report.stale_manifests:
            click.echo(f"{len(report.stale_manifests)} stale manifest(s) {verb}")

    _run(body)


def _local_lag(data_dir: Path, topic: str, partition: int, uploaded_end: int) -> tuple[int, int]:
    folder = data_dir / f"{topic}-{partition}"
    logs = sorted(folder.glob("*.log")) if folder.is_dir() else []
    rolled = logs[:-1]  # the last is the active segment
    bases = [int(p.stem) for p in logs]
    lag = [
        p for i, p in enumerate(rolled) if bases[i + 1] - 1 > uploaded_end and p.stat().st_size > 0
    ]
    return len(lag), sum(p.stat().st_size for p in lag)


def _status_rows(
    store: SyncObjectStore, prefix: str, data_dir: Path | None
) -> list[dict[str, Any]]:
    """``status``'s rows, one per partition of each topic in the bucket, by topic and
    partition: ``topic``, ``partition``, ``remote_log_start_offset`` (None: nothing readable
    in the bucket), ``remote_end_offset`` (the highest offset uploaded, -1 when none),
    ``segments`` and ``size_bytes`` (the readable remote segments), and, with ``data_dir``,
    ``copy_lag_segments`` and ``copy_lag_bytes`` (None without it)."""
    rows: list[dict[str, Any]] = []
    for name, manifests in sorted(_manifests(store, prefix, None).items()):
        tm = read_topic_manifest(store, prefix, name)
        live = {
            m.partition: m
            for m in manifests
            if tm is None or not is_foreign(m.topic_id, tm.topic_id)
        }  # a deleted topic's manifests are left out (inspect shows them, scrub removes them)
        count = max([tm.partition_count if tm else 0, *(p + 1 for p in live)])
        for partition in range(count):
            m = live.get(partition)  # None: nothing uploaded yet
            end = -1 if m is None else m.end_offset()
            lag = _local_lag(data_dir, name, partition, end) if data_dir else (None, None)
            rows.append(
                {
                    "topic": name,
                    "partition": partition,
                    "remote_log_start_offset": None if m is None else m.remote_log_start_offset(),
                    "remote_end_offset": end,
                    "segments": 0 if m is None else len(m.readable_segments()),
                    "size_bytes": 0 if m is None else m.size_bytes(),
                    "copy_lag_segments": lag[0],
                    "copy_lag_bytes": lag[1],
                }
            )
    return rows


def _status_table(rows: list[dict[str, Any]], with_lag: bool) -> str:
    """``status``'s text: the partition (``topic-N``) left-aligned, the numbers right-aligned
    (``format_table``)."""
    headers = ["partition", "remote offsets", "segments", "bytes"]
    headers += ["lag segs", "lag bytes"] if with_lag else []
    cells = []
    for r in rows:
        start = r["remote_log_start_offset"]
        span = "-" if start is None else f"{start}..{r['remote_end_offset']}"
        row = [f"{r['topic']}-{r['partition']}", span, r["segments"], r["size_bytes"]]
        row += [r["copy_lag_segments"], r["copy_lag_bytes"]] if with_lag else []
        cells.append(row)
    return format_table(headers, cells, right=range(1, len(headers)))


@command.command("status")
@click.argument("url", envvar="TIERED_MQ_TIER_URL")
@click.option(
    "--data-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A broker's log directory: adds the copy lag of its partitions.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the rows as a JSON array of objects (topic, partition, remote_log_start_offset,"
    " remote_end_offset, segments, size_bytes, copy_lag_segments, copy_lag_bytes).",
)
@_s3_options
def status_cmd(url: str, data_dir: Path | None, as_json: bool, **opts: Any) -> None:
    """Per partition: offsets in the bucket, and the copy lag against a local log directory."""
    store, prefix = _open(url, opts)

    def body() -> None:
        rows = _status_rows(store, prefix, data_dir)
        if as_json:
            click.echo(json.dumps(rows, indent=1))
        elif not rows:
            click.echo("no topics")  # as inspect says it
        else:
            click.echo(_status_table(rows, with_lag=data_dir is not None))

    _run(body)
