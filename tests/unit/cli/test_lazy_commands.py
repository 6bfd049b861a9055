"""Sub-commands are imported when they run: a client command does not import the broker."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from tiered_mq.cli import main

CLIENT_COMMANDS = ["topics", "configs", "produce", "consume", "groups", "users", "tier"]


@pytest.mark.parametrize("command", CLIENT_COMMANDS)
def test_a_client_command_does_not_import_the_broker(command: str) -> None:
    """Every command imported every module, ``dev``'s broker included: about 1 s of CPU
    before ``topics list`` sent its first request (0.7-0.9 s user time in all, now 0.3-0.5 s)."""
    code = (
        "import sys\n"
        "from tiered_mq.cli import main\n"
        "try:\n"
        f"    main([{command!r}, '--help'])\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
        "print(sorted(m for m in sys.modules if m.startswith('tiered_mq.broker')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_help_lists_every_command_in_order() -> None:
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0, r.output
    listed = [
        line.split()[0] for line in r.output.split("Commands:")[1].splitlines() if line.strip()
    ]
    assert listed == ["dev", *CLIENT_COMMANDS]


def test_an_unknown_command_is_a_usage_error() -> None:
    r = CliRunner().invoke(main, ["topic", "list"])
    assert r.exit_code == 2
    assert "No such command 'topic'" in r.output


def test_dev_still_loads() -> None:
    r = CliRunner().invoke(main, ["dev", "--help"])
    assert r.exit_code == 0 and "--data-dir" in r.output, r.output
