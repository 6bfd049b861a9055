"""A small filesystem for faults caused for real: a tmpfs mounted for one test (root only; CI
runs as root), so a broker's data directory on it really runs out of space or inodes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_tmpfs(mount: Path, options: str) -> Iterator[Path]:
    """``mount`` (created) as a tmpfs with ``options`` (``size=24m``, ``nr_inodes=3000``),
    unmounted (lazily) afterwards; the test is skipped when not run as root."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
