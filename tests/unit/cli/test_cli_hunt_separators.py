"""``produce -K`` and ``consume --separator`` take kcat's escapes: ``-K '\\t'`` (what a kcat
user types) split at a tab; it was the two characters backslash and t, and every line failed
with "no key separator"."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.cli.test_produce_consume import (  # the fixtures are used by name
    FakeConsumer,
    FakeProducer,
    fake_consumer,  # noqa: F401
    fake_producer,  # noqa: F401
)
from tiered_mq.cli import main
from tiered_mq.cli._line_format import unescape


def test_unescape() -> None:
    assert unescape(r"\t") == b"\t"
    assert unescape(r"a\\b\x01\xff|") == b"a\\b\x01\xff|"
    assert unescape(r"\q") == b"\\q"  # not an escape: kept
    assert unescape("é") == "é".encode()


@pytest.mark.usefixtures("fake_producer")
def test_produce_key_separator_escape() -> None:
    r = CliRunner().invoke(main, ["produce", "t", "-K", r"\t"], input="k1\tv1\n")
    assert r.exit_code == 0, r.output
    assert [(s[2], s[1]) for s in FakeProducer.last.sent] == [(b"k1", b"v1")]


@pytest.mark.usefixtures("fake_consumer")
def test_consume_separator_escape() -> None:
    args = ["consume", "t", "-n", "1", "--print-key", "--separator", r"\x1f"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "k0\x1fv0"
    assert FakeConsumer.last.acked
