"""Topic name rules (Kafka's ``Topic.validate``).

A legal name is 1 to 249 characters from ``[a-zA-Z0-9._-]`` and is neither ``.`` nor ``..``.
Names that differ only by ``.`` versus ``_`` collide in metric names; like Kafka, creating a
topic whose name collides with an existing one that way is refused.
"""

from __future__ import annotations

import re
from typing import Final

from tiered_mq.errors import InvalidTopicError

MAX_NAME_LENGTH: Final = 249
_LEGAL: Final = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS: Final = frozenset({"__consumer_offsets", "__transaction_state"})


def validate_topic_name(name: str | None) -> None:
    """Raise InvalidTopicError with the reason if ``name`` is not a legal topic name."""
    if not name:
        raise InvalidTopicError("topic name is empty")
    if name in (".", ".."):
        raise InvalidTopicError(f"topic name cannot be '{name}'")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopicError(
            f"topic name is {len(name)} characters long, the limit is {MAX_NAME_LENGTH}"
        )
    if not _LEGAL.fullmatch(name):
        raise InvalidTopicError(
            f"topic name '{name}' is illegal: only ASCII letters, digits, '.', '_' and '-'"
        )


def collision_key(name: str) -> str:
    """``name`` with '.' read as '_': two topics with the same key collide (Kafka refuses the
    second, whose metric names would clash with the first's)."""
    return name.replace(".", "_")


def is_internal(name: str) -> bool:
    return name in INTERNAL_TOPICS
