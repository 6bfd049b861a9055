"""The time arguments of ``groups reset-offsets``: ISO 8601 durations and date-times."""

from __future__ import annotations

from datetime import timedelta

import click
import pytest

from tiered_mq.cli.reset_offsets import parse_datetime_ms, parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT30M", timedelta(minutes=30)),
        ("P1DT2H3M4.5S", timedelta(days=1, hours=2, minutes=3, seconds=4.5)),
        ("p2d", timedelta(days=2)),
        ("PT0S", timedelta(0)),
    ],
)
def test_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "P", "PT", "1H", "PT1D", "P1H", "-PT1M"])
def test_bad_duration(text: str) -> None:
    with pytest.raises(click.BadParameter, match="expected PnDTnHnMnS"):
        parse_duration(text)


def test_datetime() -> None:
    assert parse_datetime_ms("1970-01-01T00:00:01.250Z") == 1250
    assert parse_datetime_ms("2024-05-01T12:00:00+02:00") == 1714557600000
    with pytest.raises(click.BadParameter, match="ISO 8601"):
        parse_datetime_ms("yesterday")
