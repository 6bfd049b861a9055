"""``users`` argument handling (no broker: the password is refused before any request)."""

from __future__ import annotations

from click.testing import CliRunner

from tiered_mq.cli import main


def test_set_without_a_terminal_asks_for_password_stdin() -> None:
    r = CliRunner().invoke(main, ["users", "set", "carol", "-b", "127.0.0.1:1"], input="")
    assert r.exit_code == 2, r.output
    assert "stdin is not a terminal: pipe the password with --password-stdin" in r.output


def test_set_refuses_an_empty_password_from_stdin() -> None:
    args = ["users", "set", "carol", "--password-stdin", "-b", "127.0.0.1:1"]
    r = CliRunner().invoke(main, args, input="\n")
    assert r.exit_code == 2, r.output
    assert "the password is empty" in r.output
