"""Request handlers, one module per Kafka API, discovered with pkgutil.

A handler module defines ``API_KEY: int`` and
``async def handle(ctx: RequestContext, request: dict) -> dict | None`` (None: send no
response, as for Produce with acks=0). Request and response dicts use the Kafka JSON spec field
names in snake_case (see tiered_mq.protocol). A handler answers per-partition failures with
error codes; an exception escaping it closes the client's connection.

A module that fails to import stops the broker at start-up: a broker that silently lacks an
API would advertise a table its clients cannot rely on.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tiered_mq.broker.context import RequestContext


HandleFn = Callable[["RequestContext", dict[str, Any]], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True, slots=True)
class Handler:
    api_key: int
    name: str
    handle: HandleFn


def discover() -> dict[int, Handler]:
    """api key -> Handler for every handler module in this package."""
    handlers: dict[int, Handler] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        key = getattr(mod, "API_KEY", None)
        handle = getattr(mod, "handle", None)
        if not isinstance(key, int) or handle is None:
            raise RuntimeError(f"handler module {info.name} lacks API_KEY or handle()")
        if key in handlers:
            raise RuntimeError(f"handlers {handlers[key].name} and {info.name} share api key {key}")
        handlers[key] = Handler(key, info.name, handle)
    return handlers
