"""A storage error answers KAFKA_STORAGE_ERROR each time, and is logged at most once per 10 s."""

from __future__ import annotations

import logging

import pytest

from tiered_mq.broker.handlers import _common
from tiered_mq.errors import KafkaStorageError, StorageError


def test_an_outage_logs_one_line_per_interval_and_counts_the_rest(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(_common, "_storage_errors", _common._LogThrottle(10.0, lambda: now[0]))
    with caplog.at_level(logging.ERROR, logger=_common.__name__):
        for i in range(50):
            assert _common.error_code(StorageError(f"GET chunk {i}: timed out")) == (
                KafkaStorageError.errno
            )
            now[0] += 0.5  # 25 s in all
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "storage error: GET chunk 0: timed out",
        "storage error: GET chunk 20: timed out (19 more since the last such line)",
        "storage error: GET chunk 40: timed out (19 more since the last such line)",
    ]
