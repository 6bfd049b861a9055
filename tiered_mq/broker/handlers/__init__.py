"""Request handlers, one module per Kafka API, discovered with pkgutil.

A handler module defines ``API_KEY: int`` and
``async def handle(ctx: RequestContext, request: dict) -> dict | None`` (None: send no
response, as for Produce with acks=0). Request and response dicts use the Kafka JSON spec field
names in snake_case (see tiered_mq.protocol). A handler answers per-partition failures with
error codes; an exception escaping it closes the client's connection.

Modules that fail to import are logged and skipped, so one broken handler (or one another
engineer is still writing) does not take the broker down; :func:`discover` returns the rest.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tiered_mq.broker.context import RequestContext

log = logging.getLogger(__name__)

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
        try:
            mod = importlib.import_module(f"{__name__}.{info.name}")
        except Exception:
            log.exception("handler module %s failed to import; skipped", info.name)
            continue
        key = getattr(mod, "API_KEY", None)
        handle = getattr(mod, "handle", None)
        if not isinstance(key, int) or handle is None:
            continue
        if key in handlers:
            raise RuntimeError(f"handlers {handlers[key].name} and {info.name} share api key {key}")
        handlers[key] = Handler(key, info.name, handle)
    return handlers
