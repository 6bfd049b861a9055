"""Option values that the broker or librdkafka would read as something else: a negative
``consume --timestamp`` is a ListOffsets sentinel (-1 latest, -2 earliest), a negative
``produce --partition`` librdkafka's "any partition"; a non-boolean console property."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tiered_mq.cli import main


@pytest.mark.parametrize(
    "args",
    [
        ["consume", "t", "--timestamp", "-2"],
        ["consume", "t", "-t", "-1"],
        ["produce", "t", "--partition", "-1"],
        ["consume", "t", "-X", "print.key=yes"],
        ["produce", "t", "-X", "parse.key=1"],
    ],
)
def test_bad_values_are_usage_errors(args: list[str]) -> None:
    r = CliRunner().invoke(main, [*args, "-b", "127.0.0.1:1"], input="x\n")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
