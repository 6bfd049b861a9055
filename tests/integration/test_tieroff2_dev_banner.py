"""``tiered-mq dev``'s banner says where the cold tier is, or that tiering is off: with
``remote.log.storage.system.enable=false`` it printed ``cold tier: file://<data-dir>/cold``, a
cold tier the broker never started (a user then looked for uploads there)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess

pytestmark = pytest.mark.integration

OFF = ["--config", "remote.log.storage.system.enable=false"]


def banner(broker: BrokerProcess) -> list[str]:
    """The banner lines of the broker's last start (up to its bootstrap line)."""
    deadline = time.monotonic() + 10
    while True:
        text = broker.log_path.read_text(errors="replace")
        start = text.rfind("tiered-mq broker ")
        lines = text[start:].splitlines() if start >= 0 else []
        if any(line.lstrip().startswith("bootstrap:") for line in lines):
            return [line.strip() for line in lines if line.startswith("  ")]
        assert time.monotonic() < deadline, broker.log_tail()
        time.sleep(0.05)


def cold_line(lines: list[str]) -> str:
    found = [line for line in lines if line.startswith("cold tier:")]
    assert len(found) == 1, lines
    return found[0]


def test_the_banner_says_tiering_is_off(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data, extra_args=OFF) as b:
        lines = banner(b)
    assert cold_line(lines) == "cold tier: off (remote.log.storage.system.enable=false)"
    assert not any("file://" in line for line in lines), lines


def test_the_banner_names_the_cold_url_with_tiering_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with BrokerProcess(data) as b:
        lines = banner(b)
    assert cold_line(lines) == f"cold tier: file://{data.resolve() / 'cold'}"
