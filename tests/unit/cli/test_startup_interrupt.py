"""Ctrl-C while a command's module is imported (most of a command's start-up): exit status
130 without a traceback or click's "Aborted!" (exit status 1 before)."""

from __future__ import annotations

import importlib
import os
import signal
import time
from types import ModuleType

import pytest
from click.testing import CliRunner

import tiered_mq.cli as cli


def test_ctrl_c_while_importing_a_command_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = importlib.import_module

    def slow_import(name: str, package: str | None = None) -> ModuleType:
        """The import of the command's module, during which a real SIGINT arrives."""
        if name == "tiered_mq.cli.topics":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the default handler raises KeyboardInterrupt in here
        return real_import(name, package)

    monkeypatch.setattr(cli.importlib, "import_module", slow_import)
    started = time.monotonic()
    result = CliRunner().invoke(cli.main, ["topics", "list"])
    assert time.monotonic() - started < 4
    assert result.exit_code == 130, result.output
    assert result.output == ""


def test_an_import_error_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_import(name: str, package: str | None = None) -> ModuleType:
        raise ImportError(f"no module {name}")

    monkeypatch.setattr(cli.importlib, "import_module", broken_import)
    result = CliRunner().invoke(cli.main, ["topics", "list"])
    assert result.exit_code == 1 and isinstance(result.exception, ImportError)
