"""Fixtures for record tests."""

from __future__ import annotations

import pytest

CODECS = [0, 1, 2, 3, 4]


@pytest.fixture(params=CODECS, ids=["none", "gzip", "snappy", "lz4", "zstd"])
def codec(request: pytest.FixtureRequest) -> int:
    return int(request.param)
