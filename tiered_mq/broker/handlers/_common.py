"""Helpers shared by handlers (not a handler: the leading underscore keeps discovery away)."""

from __future__ import annotations

import logging

from tiered_mq.errors import KafkaError, KafkaStorageError, StorageError, UnknownServerError

log = logging.getLogger(__name__)

NONE = 0


def error_code(exc: BaseException) -> int:
    """The wire error code of an exception raised while serving one partition or topic."""
    if isinstance(exc, KafkaError):
        return exc.errno
    if isinstance(exc, (StorageError, OSError)):
        log.error("storage error: %s", exc)
        return KafkaStorageError.errno
    log.exception("unexpected error", exc_info=exc)
    return UnknownServerError.errno


def error_message(exc: BaseException) -> str:
    if isinstance(exc, KafkaError):
        detail = Exception.__str__(exc)
        return detail or exc.message
    return str(exc) or type(exc).__name__
