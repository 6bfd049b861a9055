"""Small files replaced whole: after a crash a file holds its old or its new content, never a
torn mix, and a rename that was reported done survives.

``replace_durably`` writes ``<name>.tmp`` beside the file, fsyncs it, renames it over the file
(atomic on POSIX) and fsyncs the directory (the rename itself). A crash before the rename leaves
the old file and a stale ``.tmp`` that the next replace overwrites.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(dir: Path) -> None:
    """Make renames and creations in ``dir`` durable."""
    fd = os.open(dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(path: Path, data: bytes) -> None:
    """Replace ``path``'s content with ``data`` (see the module docstring)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)
    fsync_dir(path.parent)
