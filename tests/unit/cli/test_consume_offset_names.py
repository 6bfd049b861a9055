"""``consume --offset`` takes kafka-console-consumer's ``earliest`` and ``latest`` besides a
number (it took only a number)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.cli.test_produce_consume import FakeConsumer, fake_consumer  # noqa: F401
from tiered_mq.cli import main
from tiered_mq.client.consumer import OFFSET_BEGINNING, OFFSET_END
from tiered_mq.topic_partition import TopicPartition


@pytest.mark.usefixtures("fake_consumer")
@pytest.mark.parametrize(
    ("given", "start"),
    [("earliest", OFFSET_BEGINNING), ("latest", OFFSET_END), ("LATEST", OFFSET_END), ("7", 7)],
)
def test_offset_takes_a_number_earliest_or_latest(given: str, start: int) -> None:
    r = CliRunner().invoke(main, ["consume", "t", "-p", "1", "--offset", given, "-n", "1"])
    assert r.exit_code == 0, r.output
    assert FakeConsumer.last.assigned == {TopicPartition("t", 1): start}


@pytest.mark.usefixtures("fake_consumer")
@pytest.mark.parametrize("given", ["-1", "oldest", "1.5"])
def test_any_other_offset_is_a_usage_error(given: str) -> None:
    r = CliRunner().invoke(main, ["consume", "t", "--offset", given])
    assert r.exit_code == 2
    assert "give a non-negative offset, earliest or latest" in r.output


@pytest.mark.usefixtures("fake_consumer")
def test_offset_earliest_and_from_beginning_are_one_too_many() -> None:
    r = CliRunner().invoke(main, ["consume", "t", "--offset", "earliest", "--from-beginning"])
    assert r.exit_code == 2
