"""Typed client configuration and the delivery-semantics presets.

A delivery semantics is one setting that fixes every librdkafka property it depends on;
the caller's ``extra`` properties are applied last and may override anything (the escape
hatch for properties this module does not model).

- at-most-once. Producer: acks=1, no retries, no idempotence (a failed send is reported,
  never re-sent). Consumer: the next offset is committed synchronously *before* records are
  handed out; no auto commit.
- at-least-once (default). Producer: acks=all, librdkafka's retries, idempotence only if
  ``idempotent=True``. Consumer: an offset is stored only when the record is acknowledged
  (``Consumer.ack``); auto commit commits stored offsets.
- exactly-once. Producer: idempotent and transactional (``transactional_id`` required),
  acks=all. Consumer: isolation.level=read_committed, no auto commit; offsets are committed
  through the producer's transaction.

Consumers read ``read_uncommitted`` except in exactly-once. Only these dataclasses know
librdkafka's property names; the wrappers call ``to_librdkafka()``.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

DEFAULT_BOOTSTRAP = "localhost:9092"
BOOTSTRAP_ENV = "TIERED_MQ_BOOTSTRAP"

Compression = Literal["none", "gzip", "snappy", "lz4", "zstd"]
COMPRESSIONS: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")
OffsetReset = Literal["earliest", "latest", "none", "error"]
"""``auto_offset_reset``: Kafka's ``none`` is librdkafka's ``error`` (either name works): a
partition without a committed offset, or whose offset is out of range, is an error
(``_AUTO_OFFSET_RESET``) instead of a jump to either end."""


class DeliverySemantics(StrEnum):
    """The three delivery guarantees, named as users say them."""

    AT_MOST_ONCE = "at-most-once"
    AT_LEAST_ONCE = "at-least-once"
    EXACTLY_ONCE = "exactly-once"


def default_bootstrap() -> str:
    """``$TIERED_MQ_BOOTSTRAP`` when set, else ``localhost:9092``."""
    return os.environ.get(BOOTSTRAP_ENV) or DEFAULT_BOOTSTRAP


_TIMING = re.compile(r" \(after \d+ms in state \w+(?:, \d+ identical error\(s\) suppressed)?\)")
"""The part of a librdkafka connection log line that changes on every attempt."""


class _OncePerMessage(logging.Filter):
    """Lets each distinct librdkafka log line through once per ``window_s`` seconds.

    librdkafka repeats a connection failure every reconnect backoff (tens of lines a second
    while a broker is down); the first says all a user needs. Lines are compared without
    their timing (``(after 3ms in state CONNECT)``), which differs on each attempt, and a line
    shows again once ``window_s`` has passed since it last showed, so an outage an hour after
    the first is logged too. At most ``max_kept`` lines are remembered (the oldest go first).
    """

    def __init__(self, window_s: float = 60.0, max_kept: int = 1000) -> None:
        super().__init__()
        self._window_s = window_s
        self._max_kept = max_kept
        self._shown: dict[str, float] = {}  # line without its timing -> when it last showed

    def filter(self, record: logging.LogRecord) -> bool:
        message = _TIMING.sub("", record.getMessage())
        now = time.monotonic()
        shown = self._shown.get(message)
        if shown is not None and now - shown < self._window_s:
            return False
        self._shown.pop(message, None)
        self._shown[message] = now  # newest last: the dict is in showing order
        while len(self._shown) > self._max_kept:
            del self._shown[next(iter(self._shown))]
        return True


LIBRDKAFKA_LOG = logging.getLogger("tiered_mq.client.librdkafka")
LIBRDKAFKA_LOG.addFilter(_OncePerMessage())


def _base(bootstrap_servers: str, client_id: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap_servers,
        "client.id": client_id,
        "logger": LIBRDKAFKA_LOG,
    }


@dataclass(frozen=True)
class AdminConfig:
    """Connection settings shared by every client."""

    bootstrap_servers: str = field(default_factory=default_bootstrap)
    client_id: str = "tiered-mq-admin"
    request_timeout_s: float = 15.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_librdkafka(self) -> dict[str, Any]:
        conf = _base(self.bootstrap_servers, self.client_id)
        # librdkafka logs an info line ("Purging unserved events") when an admin handle is
        # freed; warnings and errors still show.
        conf["log_level"] = 4
        # An admin handle is a producer to librdkafka, whose metadata requests would create a
        # topic on a broker with auto creation on: describing a topic must not create it.
        conf["allow.auto.create.topics"] = False
        conf.update(self.extra)
        return conf


@dataclass(frozen=True)
class ProducerConfig:
    """Producer settings; ``semantics`` picks acks, retries, idempotence and transactions.

    ``max_block_ms`` is Kafka's ``max.block.ms`` (librdkafka has no such property): how long
    ``Producer.send`` waits for room in librdkafka's full queue (``queue.buffering.max.*``)
    before it raises ``_TIMED_OUT``, as the Java producer's ``send`` throws a TimeoutException.
    """

    bootstrap_servers: str = field(default_factory=default_bootstrap)
    semantics: DeliverySemantics = DeliverySemantics.AT_LEAST_ONCE
    client_id: str = "tiered-mq-producer"
    compression: Compression = "none"
    linger_ms: float = 5.0
    batch_size: int | None = None
    idempotent: bool = False
    transactional_id: str | None = None
    transaction_timeout_s: float = 60.0
    max_block_ms: int = 60_000
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_block_ms < 0:
            raise ValueError(f"max_block_ms must be >= 0, not {self.max_block_ms}")
        semantics = DeliverySemantics(self.semantics)
        object.__setattr__(self, "semantics", semantics)
        if self.compression not in COMPRESSIONS:
            raise ValueError(f"compression must be one of {COMPRESSIONS}, not {self.compression!r}")
        if semantics is DeliverySemantics.EXACTLY_ONCE and not self.transactional_id:
            raise ValueError("exactly-once needs a transactional_id (stable per producer instance)")
        if semantics is not DeliverySemantics.EXACTLY_ONCE and self.transactional_id:
            raise ValueError("transactional_id is only meaningful with exactly-once")

    def to_librdkafka(self) -> dict[str, Any]:
        conf = _base(self.bootstrap_servers, self.client_id)
        conf["compression.type"] = self.compression
        conf["linger.ms"] = self.linger_ms
        if self.batch_size is not None:
            conf["batch.size"] = self.batch_size
        if self.semantics is DeliverySemantics.AT_MOST_ONCE:
            conf.update({"acks": "1", "retries": 0, "enable.idempotence": False})
        elif self.semantics is DeliverySemantics.AT_LEAST_ONCE:
            conf.update({"acks": "all", "enable.idempotence": self.idempotent})
        else:
            conf.update(
                {
                    "acks": "all",
                    "enable.idempotence": True,
                    "transactional.id": self.transactional_id,
                    "transaction.timeout.ms": int(self.transaction_timeout_s * 1000),
                }
            )
        conf.update(self.extra)
        return conf


@dataclass(frozen=True)
class ConsumerConfig:
    """Consumer settings; ``semantics`` picks the commit discipline and isolation level.

    ``group_id=None`` makes a group-less consumer: it can only ``assign`` partitions, and
    commits nothing (the semantics then only chooses the isolation level).

    ``fetch_queue_backoff_ms`` is librdkafka's ``fetch.queue.backoff.ms``: how long it stops
    fetching once ``queued.min.messages`` (100,000) records wait in its queue. librdkafka's
    1,000 ms leaves a consumer catching up on old offsets idle for most of each second once
    the application drains the queue; 20 ms keeps it fed (README, "Benchmarks").
    """

    bootstrap_servers: str = field(default_factory=default_bootstrap)
    group_id: str | None = None
    semantics: DeliverySemantics = DeliverySemantics.AT_LEAST_ONCE
    client_id: str = "tiered-mq-consumer"
    auto_offset_reset: OffsetReset = "latest"
    auto_commit_interval_ms: int = 1000
    session_timeout_ms: int = 10_000
    fetch_queue_backoff_ms: int = 20
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "semantics", DeliverySemantics(self.semantics))

    @property
    def commits(self) -> bool:
        """Whether this consumer commits offsets at all (it needs a group)."""
        return self.group_id is not None

    def to_librdkafka(self) -> dict[str, Any]:
        conf = _base(self.bootstrap_servers, self.client_id)
        # librdkafka insists on a group.id even for assign()-only consumers; nothing is
        # committed for it because auto commit is off and the wrapper never commits.
        conf["group.id"] = self.group_id or f"{self.client_id}-nogroup"
        reset = self.auto_offset_reset
        conf["auto.offset.reset"] = "error" if reset == "none" else reset
        conf["session.timeout.ms"] = self.session_timeout_ms
        conf["enable.partition.eof"] = False
        conf["fetch.queue.backoff.ms"] = self.fetch_queue_backoff_ms
        if self.semantics is DeliverySemantics.AT_LEAST_ONCE and self.commits:
            # Auto commit commits only what ack() stored, so a record that was never
            # acknowledged is delivered again after a crash or a rebalance.
            conf["enable.auto.commit"] = True
            conf["enable.auto.offset.store"] = False
            conf["auto.commit.interval.ms"] = self.auto_commit_interval_ms
        else:
            conf["enable.auto.commit"] = False
            conf["enable.auto.offset.store"] = False
        conf["isolation.level"] = (
            "read_committed"
            if self.semantics is DeliverySemantics.EXACTLY_ONCE
            else "read_uncommitted"
        )
        conf.update(self.extra)
        return conf
