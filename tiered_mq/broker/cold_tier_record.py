"""Which cold tier a data dir's tiered partitions were uploaded to, recorded in
``<data_dir>/meta.properties`` (meta_properties.py) and checked at every start.

Why: a tiered partition's records below its local log start offset live only in the cold tier
they were uploaded to, while its log start offset (``log-start-offset-checkpoint``) stays in
the data dir. Started with another cold URL, the broker answered ListOffsets EARLIEST with that
log start offset but every Fetch there with OFFSET_OUT_OF_RANGE (the new bucket has none of
it), so a consumer with ``auto.offset.reset=earliest`` reset to the same offset again and again,
for ever. As Kafka refuses an inconsistent data dir at start (InconsistentClusterIdException),
the broker refuses this start instead, before the cold tier, any partition or the data dir is
touched.

Format: one line of meta.properties, ``remote.log.storage.url=<url>``, the configured URL
reduced to what says where the objects are (``StoreURL``: scheme, bucket, prefix)::

    s3://bucket[/prefix]            (s3a:// is s3://; the endpoint, region and credentials are
                                     not part of it: they may change, the objects stay)
    memory://name[/prefix]
    file:///abs/dir[?prefix=p]      a directory outside the data dir
    file://<data-dir>/rel[?prefix=p]  a directory inside the data dir (``dev``'s default
                                     ``<data-dir>/cold``): it moves with the data dir

Rules (:func:`check`): tiering off records and checks nothing here (the recorded URL stays;
tiering_off.py refuses the start while tiered topics remain). No URL
recorded (a new data dir, or one from before this file had the line): the configured one is
recorded. The same URL: nothing to do. Another URL: recorded when no partition of a tiered
topic (``remote.storage.enable``, not internal, not compacted) holds any record in the data dir
(:func:`tiered_partitions`); refused otherwise (``InconsistentRemoteStorageError``, one line
naming both URLs and what to do). The caller writes the record with meta.properties
(broker.py), after the partitions opened; a crash before that records it at the next start.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from tiered_mq.broker import meta_properties
from tiered_mq.broker.stray_partitions import parse_partition_dir
from tiered_mq.cold.object_store import parse_store_url
from tiered_mq.hot.log_files import is_log_file, offset_from_file_name
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)

KEY: Final = "remote.log.storage.url"
DATA_DIR_TOKEN: Final = "<data-dir>"
_SHOWN: Final = 3  # partitions named in the refusal


class InconsistentRemoteStorageError(RuntimeError):
    """The data dir's tiered data was uploaded to another cold tier than the configured one
    (the broker stops; nothing was changed)."""


def canonical_url(url: str, data_dir: Path) -> str:
    """``url`` as recorded (module docstring); ValueError on a URL ``parse_store_url``
    refuses."""
    parsed = parse_store_url(url)
    if parsed.scheme != "file":
        return f"{parsed.scheme}://{parsed.bucket}" + (f"/{parsed.prefix}" if parsed.prefix else "")
    path = Path(os.path.normpath(Path(parsed.bucket).resolve()))
    home = data_dir.resolve()
    shown = str(path)
    if path == home or home in path.parents:
        shown = f"{DATA_DIR_TOKEN}/{path.relative_to(home)}".rstrip("/.")
    return f"file://{shown}" + (f"?prefix={parsed.prefix}" if parsed.prefix else "")


def _displayed(recorded: str, data_dir: Path) -> str:
    return recorded.replace(DATA_DIR_TOKEN, str(data_dir.resolve()), 1)


def recorded_url(data_dir: Path) -> str | None:
    """The cold URL meta.properties records (as a user gives it: ``<data-dir>`` spelled out),
    None when none is; reads only."""
    recorded = (meta_properties.read(data_dir) or {}).get(KEY)
    return None if recorded is None else _displayed(recorded, data_dir)


def _holds_records(partition_dir: Path) -> bool:
    """Whether a partition directory's log ever took a record: a segment not at offset 0 (its
    earlier records were uploaded and deleted locally, or rolled) or a non-empty one."""
    try:
        entries = list(os.scandir(partition_dir))
    except OSError:
        return False
    for entry in entries:
        if not is_log_file(entry.name):
            continue
        if (offset_from_file_name(entry.name) or 0) > 0 or entry.stat().st_size > 0:
            return True
    return False


def tiered_partitions(
    data_dir: Path, is_tiered: Callable[[TopicPartition], bool]
) -> list[TopicPartition]:
    """The partitions of ``data_dir`` that ``is_tiered`` (the metadata's tiered topics) names
    and whose log holds records, sorted."""
    found = []
    for entry in os.scandir(data_dir):
        tp = parse_partition_dir(entry.name)
        if tp is not None and entry.is_dir() and is_tiered(tp) and _holds_records(Path(entry)):
            found.append(tp)
    return sorted(found)


def check(
    data_dir: Path, cold_url: str | None, is_tiered: Callable[[TopicPartition], bool]
) -> str | None:
    """The URL to record in meta.properties (None: nothing to record) for a start with
    ``cold_url`` (None: tiering off). Raises InconsistentRemoteStorageError when the data dir
    holds tiered data uploaded to another recorded URL; reads only."""
    if cold_url is None:
        return None
    configured = canonical_url(cold_url, data_dir)
    props = meta_properties.read(data_dir) or {}
    recorded = props.get(KEY)
    if recorded == configured:
        return None
    if recorded is None:
        return configured
    held = tiered_partitions(data_dir, is_tiered)
    old, new = _displayed(recorded, data_dir), _displayed(configured, data_dir)
    if not held:
        log.info("cold tier moved from %s to %s: %s holds no tiered data", old, new, data_dir)
        return configured
    names = ", ".join(str(tp) for tp in held[:_SHOWN]) + (", ..." if len(held) > _SHOWN else "")
    raise InconsistentRemoteStorageError(
        f"Configured cold tier {new} doesn't match the cold tier {old} recorded in "
        f"{data_dir / meta_properties.FILE_NAME}: {len(held)} tiered partition(s) of "
        f"{data_dir} ({names}) have records only there. Start with the cold URL {old} (its "
        f"endpoint and credentials may change), or on a fresh --data-dir. "
        f"Nothing in {data_dir} was changed."
    )
