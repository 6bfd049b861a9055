"""The filter on librdkafka's log lines: a repeated connection failure shows once per window."""

from __future__ import annotations

import logging

import pytest

from tiered_mq.client import config as config_mod
from tiered_mq.client.config import _OncePerMessage


def line(message: str) -> logging.LogRecord:
    return logging.LogRecord("librdkafka", logging.ERROR, __file__, 1, message, None, None)


RESOLVE = (
    "FAIL [c#producer-1] [thrd:h:9092/bootstrap]: h:9092/bootstrap: Failed to resolve 'h:9092':"
    " Name or service not known (after {ms}ms in state CONNECT{suppressed})"
)


def test_lines_that_differ_only_in_their_timing_show_once() -> None:
    """librdkafka appends ``(after Nms in state S)`` to each reconnect's line: 1, 6, 77 ms...
    Each such line went through as a new one (13 lines in 15 s for a mistyped host)."""
    once = _OncePerMessage()
    shown = [
        once.filter(line(RESOLVE.format(ms=ms, suppressed=suffix)))
        for ms, suffix in [(1, ""), (6, ""), (77, ""), (3, ", 4 identical error(s) suppressed")]
    ]
    assert shown == [True, False, False, False]
    other = "FAIL [c#producer-1] [thrd:h:9092/bootstrap]: Connection refused (after 0ms in state X)"
    assert once.filter(line(other))


def test_a_line_shows_again_after_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second outage an hour later is logged too (every repeat was dropped for the life of
    the process before)."""
    now = [1000.0]
    monkeypatch.setattr(config_mod.time, "monotonic", lambda: now[0])
    once = _OncePerMessage(window_s=60)
    text = RESOLVE.format(ms=1, suppressed="")
    assert once.filter(line(text))
    now[0] += 59
    assert not once.filter(line(text))
    now[0] += 3600
    assert once.filter(line(text))


def test_memory_is_bounded() -> None:
    once = _OncePerMessage(max_kept=10)
    for i in range(100):
        assert once.filter(line(f"distinct line {i}"))
    assert len(once._shown) == 10
    assert once.filter(line("distinct line 0"))  # forgotten, so shown again
    assert not once.filter(line("distinct line 99"))  # still remembered
