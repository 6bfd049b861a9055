"""``CtrlC``: a real SIGINT raises KeyboardInterrupt only in the functions it was given."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tiered_mq.cli._interrupt import CtrlC


def wait_for_sigint(ctrl_c: CtrlC) -> None:
    """Sends itself SIGINT and waits in Python code until the handler has run."""
    seen = ctrl_c.count
    os.kill(os.getpid(), signal.SIGINT)
    deadline = time.monotonic() + 5
    while ctrl_c.count == seen and time.monotonic() < deadline:
        time.sleep(0.001)


def delivery_callback(ctrl_c: CtrlC) -> None:
    """Stands for Python code that librdkafka runs from inside a C call: the same as
    ``wait_for_sigint``, in a function ``CtrlC`` was not given."""
    seen = ctrl_c.count
    os.kill(os.getpid(), signal.SIGINT)
    deadline = time.monotonic() + 5
    while ctrl_c.count == seen and time.monotonic() < deadline:
        time.sleep(0.001)


def test_raises_in_a_safe_function() -> None:
    with CtrlC(wait_for_sigint) as ctrl_c, pytest.raises(KeyboardInterrupt):
        wait_for_sigint(ctrl_c)
    assert ctrl_c.count == 1


def test_counts_without_raising_anywhere_else() -> None:
    """A KeyboardInterrupt raised in a librdkafka callback is lost in confluent-kafka's C code
    (the call waits on, then fails with SystemError): there it is only counted."""
    with CtrlC(wait_for_sigint) as ctrl_c:
        delivery_callback(ctrl_c)
        delivery_callback(ctrl_c)
    assert ctrl_c.count == 2


def test_the_previous_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    with CtrlC():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before
