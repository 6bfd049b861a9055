"""The command's own words, run as a user runs it (a subprocess): usage lines name the program
``tiered-mq`` also when it is started as ``python -m tiered_mq`` (click guessed "python -m
tiered_mq"), and ``tier status`` of a bucket with no topic says ``no topics`` as ``tier
inspect`` does (it printed only its table's header)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def tiered_mq(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tiered_mq", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_usage_lines_name_tiered_mq_under_python_dash_m() -> None:
    helped = tiered_mq("topics", "alter", "--help")
    assert helped.returncode == 0
    assert helped.stdout.startswith("Usage: tiered-mq topics alter [OPTIONS] NAME\n")
    wrong = tiered_mq("topics", "alter")  # NAME missing: a usage error
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("Usage: tiered-mq topics alter [OPTIONS] NAME\n")
    assert "Try 'tiered-mq topics alter --help' for help." in wrong.stderr
    assert tiered_mq("--version").stdout.startswith("tiered-mq, version ")


def test_tier_status_of_an_empty_bucket_says_no_topics(tmp_path: Path) -> None:
    bucket = tmp_path / "cold"
    bucket.mkdir()
    inspected = tiered_mq("tier", "inspect", str(bucket))
    status = tiered_mq("tier", "status", str(bucket))
    assert inspected.returncode == status.returncode == 0
    assert inspected.stdout == status.stdout == "no topics\n"
    as_json = tiered_mq("tier", "status", str(bucket), "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
