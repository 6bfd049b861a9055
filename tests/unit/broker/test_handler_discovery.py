"""Every API the broker advertises is served by exactly one importable handler module."""

from __future__ import annotations

import inspect

from tiered_mq.broker.handlers import discover
from tiered_mq.protocol.api_versions import SUPPORTED

# The table of KAFKA_PROTOCOL.md that clients depend on (the optional APIs are not required).
REQUIRED = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20}
REQUIRED |= {22, 23, 24, 25, 26, 28, 32, 37}


def test_every_required_api_has_a_coroutine_handler() -> None:
    handlers = discover()
    missing = REQUIRED - set(handlers)
    assert not missing, f"no handler for api keys {sorted(missing)}"
    for key, handler in handlers.items():
        assert key in SUPPORTED, f"handler {handler.name} serves api {key} with no version range"
        assert inspect.iscoroutinefunction(handler.handle), handler.name
