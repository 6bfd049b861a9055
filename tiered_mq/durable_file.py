"""Small files replaced whole: after a crash a file holds its old or its new content, never a
torn mix, and a rename that was reported done survives.

``replace_durably`` writes ``<name>.tmp`` beside the file, fsyncs it, renames it over the file
(atomic on POSIX) and fsyncs the directory (the rename itself). A crash before the rename leaves
the old file and a stale ``.tmp`` that the next replace overwrites.

``replace_durably_many`` does the same for many files at once, in phases: every ``.tmp``
written and fsynced, all renamed, then every parent directory fsynced. Each file is renamed
only after its ``.tmp`` is on disk, so the crash behaviour of each file is the one above; the
fsyncs of a phase run several at a time (:func:`fsync_all`), and the file system commits its
journal once for all the fsyncs waiting together (ext4's and XFS's group commit), so a phase
costs far less than its fsyncs one after another.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

FSYNC_WORKERS: Final = 8  # fsyncs in flight at once in fsync_all


def write_fully(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write part of it); OSError (a full
    disk) after part of it may have been written."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_path(path: Path) -> None:
    """fsync the file or directory ``path`` (a directory: the creations, renames and removals
    of entries in it become durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(dir: Path) -> None:
    """Make renames and creations in ``dir`` durable."""
    fsync_path(dir)


def fsync_all(paths: Iterable[Path]) -> None:
    """fsync every one of ``paths`` (files or directories; each once), up to
    :data:`FSYNC_WORKERS` at a time. Returns when every fsync has ended; raises the first
    OSError (in the order of ``paths``) if any failed."""
    unique = list(dict.fromkeys(paths))
    if len(unique) <= 1:
        for path in unique:
            fsync_path(path)
        return
    with ThreadPoolExecutor(min(FSYNC_WORKERS, len(unique)), "fsync") as pool:
        futures = [pool.submit(fsync_path, path) for path in unique]
    for future in futures:
        future.result()


def replace_durably(path: Path, data: bytes) -> None:
    """Replace ``path``'s content with ``data`` (see the module docstring)."""
    _write_tmp(path, data).replace(path)
    fsync_dir(path.parent)


def replace_durably_many(files: Sequence[tuple[Path, bytes]], dirs: Iterable[Path] = ()) -> None:
    """:func:`replace_durably` for each ``(path, data)`` of ``files``, in phases (see the module
    docstring): each ``.tmp`` written and fsynced (:data:`FSYNC_WORKERS` at a time), all
    renamed, then the parent directories and ``dirs`` fsynced together (the directory holding
    new ones, say). On an error the files renamed so far keep their new content, the others
    their old one."""
    if not files:
        fsync_all(dirs)
        return
    with ThreadPoolExecutor(min(FSYNC_WORKERS, len(files)), "fsync") as pool:
        futures = [pool.submit(_write_tmp, path, data) for path, data in files]
    tmps = [future.result() for future in futures]
    for tmp, (path, _) in zip(tmps, files, strict=True):
        tmp.replace(path)
    fsync_all([*(path.parent for path, _ in files), *dirs])


def _write_tmp(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``<path>.tmp`` and fsync it; returns that path. A failed write or
    fsync (a full disk) raises an OSError naming that file (``os.write`` names none)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_fully(fd, data)
        os.fsync(fd)
    except OSError as e:
        if e.filename is not None or e.errno is None:
            raise
        raise OSError(e.errno, e.strerror, str(tmp)) from None  # the errno's subclass
    finally:
        os.close(fd)
    return tmp
