"""The project's schema declarations, one module per API (``API_KEY``, ``REQUEST``, ``RESPONSE``).

``REQUESTS`` and ``RESPONSES`` map api_key -> :class:`~tiered_mq.protocol.schema.Message`;
modules are discovered with pkgutil, so adding an API is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil

from tiered_mq.protocol.schema import Message

REQUESTS: dict[int, Message] = {}
RESPONSES: dict[int, Message] = {}


def _load() -> None:
    for info in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        request, response = mod.REQUEST, mod.RESPONSE
        if not (mod.API_KEY == request.api_key == response.api_key):
            raise RuntimeError(f"{info.name}: API_KEY disagrees with its messages")
        if request.valid != response.valid:
            raise RuntimeError(f"{info.name}: request and response version ranges differ")
        if mod.API_KEY in REQUESTS:
            raise RuntimeError(f"{info.name}: api key {mod.API_KEY} declared twice")
        REQUESTS[mod.API_KEY] = request
        RESPONSES[mod.API_KEY] = response


_load()
