"""Metadata-style look-ups (a librdkafka call with a timeout) asked in rounds.

``lookup_in_rounds`` asks in rounds of at most ``LOOKUP_ROUND_S`` while no broker can be
reached (``UNREACHABLE``), so that a Ctrl-C (raised between two rounds) ends it within about a
second instead of at the end of its timeout, and a broker that is still starting is found
within the timeout; once a broker was reached but has not answered in time (``_TIMED_OUT``),
the rest of the timeout goes to one call, so that a slow answer (a timestamp looked up in the
cold tier) is not asked again and again. Used by ``Consumer``'s look-ups and
``Producer.partitions_for``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import confluent_kafka

from tiered_mq.client.errors import ClientError

LOOKUP_ROUND_S = 1.0
"""Longest librdkafka call of a look-up while no broker can be reached."""
UNREACHABLE = frozenset({"_TRANSPORT", "_ALL_BROKERS_DOWN"})
"""What librdkafka's look-ups raise when no broker could be reached within the call."""
R = TypeVar("R")


def lookup_in_rounds(
    call: Callable[[float], R],
    timeout: float,
    context: str,
    unreachable_timeout: float | None = None,
) -> R:
    """``call(seconds)`` within ``timeout`` seconds in all; its ``KafkaException`` at the end
    (or at once, unless it is ``UNREACHABLE`` or ``_TIMED_OUT``) as ``ClientError``. With
    ``unreachable_timeout``, a look-up that has reached no broker (only ``UNREACHABLE`` so far)
    gives up after that many seconds (at most ``timeout``); one that reached a broker which has
    not answered yet (``_TIMED_OUT``) goes on to ``timeout``."""
    started = time.monotonic()
    deadline = started + timeout
    give_up = (
        deadline if unreachable_timeout is None else min(deadline, started + unreachable_timeout)
    )
    limit = LOOKUP_ROUND_S
    while True:
        left = deadline - time.monotonic()
        try:
            return call(max(0.01, min(limit, left)))
        except confluent_kafka.KafkaException as exc:
            err = ClientError.wrap(exc, context)
            if err.name not in UNREACHABLE | {"_TIMED_OUT"}:
                raise err from exc
            if err.name == "_TIMED_OUT":
                limit = timeout  # reached but slow: the rest in one call
                give_up = deadline
            if time.monotonic() >= give_up:
                raise err from exc


def partition_ids(md: Any, topic: str) -> list[int]:
    """The partition ids of ``topic`` in librdkafka's metadata ``md``: ClientError
    UNKNOWN_TOPIC_OR_PARTITION when it is missing, or the topic's own error."""
    tmd = md.topics.get(topic)
    if tmd is None:
        raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", topic, 3)
    if tmd.error is not None:
        raise ClientError.from_kafka_error(tmd.error, topic)
    return sorted(tmd.partitions)
