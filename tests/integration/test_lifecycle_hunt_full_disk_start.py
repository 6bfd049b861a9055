"""``tiered-mq dev`` on a full data dir: one line naming the file it could not write, status 1,
no traceback (it said only ``[Errno 28] No space left on device``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.broker_process import free_port
from tests.integration.tmpfs import mounted_tmpfs

pytestmark = pytest.mark.integration


def test_a_full_data_dir_fails_the_start_naming_the_file(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "disk", "size=1m") as disk:
        (disk / "filler").write_bytes(b"\0" * (1 << 20))  # as much as fits
        data = disk / "data"
        command = [sys.executable, "-m", "tiered_mq", "dev", "--port", str(free_port())]
        done = subprocess.run(
            [*command, "--metrics-port", "0", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert "No space left on device" in error
    assert f"{data}/" in error, error
