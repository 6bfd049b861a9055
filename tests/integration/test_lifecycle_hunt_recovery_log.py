"""The start says how many partitions it loaded and how many it recovered, as Kafka's
LogManager does ("Recovering N logs ... no clean shutdown file"): none after a clean stop,
the written ones after a kill. The log said nothing about recovery at all."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.client_helpers import produce_values

pytestmark = pytest.mark.integration


def loaded_line(broker: BrokerProcess) -> str:
    start = broker.log_path.read_text().rsplit("==== start", 1)[-1]
    lines = re.findall(r"loaded \d+ partitions in .*", start)
    assert len(lines) == 1, start
    return lines[0]


def test_the_start_counts_the_partitions_it_recovered(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data") as broker:
        produce_values(broker.bootstrap, "t", b"a", b"b")
        broker.restart(signal.SIGTERM)
        assert ": 0 recovered (not closed cleanly), 0 offline" in loaded_line(broker)
        produce_values(broker.bootstrap, "t", b"c")  # unflushed at the kill
        broker.restart(signal.SIGKILL)
        assert ": 1 recovered (not closed cleanly), 0 offline" in loaded_line(broker)
        broker.restart(signal.SIGHUP)  # a clean stop too
        assert ": 0 recovered (not closed cleanly), 0 offline" in loaded_line(broker)
