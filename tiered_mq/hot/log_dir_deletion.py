"""Deleting a partition directory, as Kafka's LogManager.asyncDelete does: rename, then remove.

A deleted partition's directory ``<data_dir>/<topic>-<partition>`` is first renamed, beside
itself, to ``<topic>-<partition>.<uniqueId>-delete`` (Kafka's ``logDeleteDirName``: uniqueId is
a random UUID's 32 hex digits, and the topic is cut short so that the name stays within 255
bytes) and the data dir is fsynced, so the rename survives a crash (:func:`rename_for_deletion`).
The rename is atomic: from then on the partition's name is free, and a topic created again with
that name starts from an empty directory whatever becomes of the old one. The renamed directory
is then removed off the event loop (:func:`remove_dirs`, which the broker runs in the
background).

Invariants: a ``-delete`` name never names a partition directory (those end in ``-<digits>``);
nothing opens one as a partition. The broker opens partitions by name from the cluster
metadata, and DescribeLogDirs, retention, metrics and ``tier status`` only look at partitions
by their ``<topic>-<partition>`` name, so none of them sees a ``-delete`` directory.

Crash behaviour: a removal that fails (permissions, an I/O error half way) or that a crash cut
short leaves a ``-delete`` directory, or part of one. At the next start
:func:`leftover_delete_dirs` finds it, and the broker removes it in the background (Kafka queues
such directories for deletion when it loads its log dirs). A crash between the topic's removal
from the metadata and the rename leaves the directory under its old name: a stray, which the
broker renames ``-delete`` and removes at its next start, never opening it (its topic is unknown,
or its ``partition.metadata`` names the deleted topic's id: broker/stray_partitions.py).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from tiered_mq.hot.log_files import DELETE_DIR_SUFFIX, fsync_dir

log = logging.getLogger(__name__)

MAX_NAME_BYTES: Final = 255  # a file name's limit on Linux file systems


def delete_dir_name(dir_name: str) -> str:
    """The ``-delete`` name of the partition directory ``dir_name`` (``<topic>-<partition>``):
    ``<topic>-<partition>.<uniqueId>-delete``, at most 255 bytes (topic names are ASCII)."""
    topic, _, partition = dir_name.rpartition("-")
    suffix = f"-{partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    return topic[: MAX_NAME_BYTES - len(suffix)] + suffix


def is_delete_dir(name: str) -> bool:
    """Whether a data dir entry named ``name`` is a partition directory renamed for deletion."""
    return name.endswith(DELETE_DIR_SUFFIX)


def rename_for_deletion(dir: Path) -> Path | None:
    """Rename ``dir`` to its ``-delete`` name in the same parent and fsync the parent; returns
    the new path, None when ``dir`` does not exist. The files in it must be closed. Raises
    OSError when the rename fails (``dir`` keeps its name) or the fsync fails (renamed, but the
    rename may not survive a crash)."""
    target = dir.with_name(delete_dir_name(dir.name))
    try:
        dir.rename(target)
    except FileNotFoundError:
        return None
    fsync_dir(dir.parent)
    return target


def remove_dirs(dirs: Iterable[Path], stop: threading.Event | None = None) -> list[Path]:
    """Remove every directory of ``dirs`` with all it holds (blocking; run it off the event
    loop); returns those that could not be removed, each logged. What is left of them is
    removed at the next start (:func:`leftover_delete_dirs`). Once ``stop`` is set (the broker
    stops) the directories not begun yet are left whole, for the next start, so that a
    stop does not wait for the removal of a large deleted topic: a directory is removed
    whole or left (in part only when the removal itself fails or a crash cuts it short)."""
    failed = []
    dirs = list(dirs)
    for i, dir in enumerate(dirs):
        if stop is not None and stop.is_set():
            log.info("stopping: %d deleted log directories left for the next start", len(dirs) - i)
            break
        try:
            shutil.rmtree(dir)
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.error("could not remove %s (removed at the next start): %s", dir, exc)
            failed.append(dir)
        else:
            log.info("deleted log directory %s", dir)
    return failed


def leftover_delete_dirs(data_dir: Path) -> list[Path]:
    """The ``-delete`` directories in ``data_dir`` (none when it does not exist), sorted."""
    try:
        entries = list(os.scandir(data_dir))
    except FileNotFoundError:
        return []
    return sorted(
        Path(e.path) for e in entries if is_delete_dir(e.name) and e.is_dir(follow_symlinks=False)
    )
