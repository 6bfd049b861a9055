"""Retry and dead-letter topics around a record handler.

For a source topic ``T`` the processor reads ``T`` and ``T.retry``. When the handler raises,
the record is re-produced, with its key, value and headers, to

- ``T.retry`` while its attempt number is below ``RetryPolicy.max_attempts``,
- ``T.dlq`` once it has failed ``max_attempts`` times,

and the failed record is acknowledged only after that produce is acknowledged (flush), so a
failure is never lost: at worst (crash between the two) the record is handled once more.
Records that succeed are acknowledged as usual; the consumer's semantics decides when that
is committed (use at-least-once).

Headers written on a re-produced record (earlier values of these names are replaced):

| header                      | value (UTF-8)                                      |
|-----------------------------|----------------------------------------------------|
| ``tiered-mq.attempt``       | attempts made so far, "1" after the first failure  |
| ``tiered-mq.error``         | ``ExceptionType: message`` of the last failure     |
| ``tiered-mq.original-topic``| ``T``                                              |
| ``tiered-mq.original-partition`` / ``-offset`` | where the record was first read |

The retry topic is consumed immediately (no delay); a back-off is the handler's business.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from tiered_mq.client.consumer import Consumer, Handler
from tiered_mq.client.producer import Producer
from tiered_mq.client.record import ConsumedRecord, Headers

HDR_ATTEMPT = "tiered-mq.attempt"
HDR_ERROR = "tiered-mq.error"
HDR_ORIGINAL_TOPIC = "tiered-mq.original-topic"
HDR_ORIGINAL_PARTITION = "tiered-mq.original-partition"
HDR_ORIGINAL_OFFSET = "tiered-mq.original-offset"
_OWN_HEADERS = frozenset(
    {HDR_ATTEMPT, HDR_ERROR, HDR_ORIGINAL_TOPIC, HDR_ORIGINAL_PARTITION, HDR_ORIGINAL_OFFSET}
)
MAX_ERROR_CHARS = 1000


class Outcome(StrEnum):
    OK = "ok"
    RETRY = "retry"
    DEAD_LETTER = "dlq"


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` counts every call of the handler for one record, the first included."""

    max_attempts: int = 3
    retry_suffix: str = ".retry"
    dlq_suffix: str = ".dlq"

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")

    def source_topic(self, topic: str) -> str:
        return topic.removesuffix(self.retry_suffix)

    def retry_topic(self, topic: str) -> str:
        return self.source_topic(topic) + self.retry_suffix

    def dlq_topic(self, topic: str) -> str:
        return self.source_topic(topic) + self.dlq_suffix

    def attempts_made(self, record: ConsumedRecord) -> int:
        """How many times the handler already failed on this record (0 for a fresh one)."""
        raw = record.header(HDR_ATTEMPT)
        try:
            return int(raw.decode()) if raw else 0
        except ValueError:
            return 0

    def destination(self, record: ConsumedRecord) -> tuple[str, int]:
        """Where a record goes after one more failure, with its new attempt count."""
        attempts = self.attempts_made(record) + 1
        if attempts < self.max_attempts:
            return self.retry_topic(record.topic), attempts
        return self.dlq_topic(record.topic), attempts

    def failure_headers(
        self, record: ConsumedRecord, attempts: int, error: BaseException
    ) -> Headers:
        kept = tuple((k, v) for k, v in record.headers if k not in _OWN_HEADERS)
        original_topic = (
            record.header(HDR_ORIGINAL_TOPIC) or self.source_topic(record.topic).encode()
        )
        original_partition = record.header(HDR_ORIGINAL_PARTITION) or str(record.partition).encode()
        original_offset = record.header(HDR_ORIGINAL_OFFSET) or str(record.offset).encode()
        message = f"{type(error).__name__}: {error}"[:MAX_ERROR_CHARS]
        return (
            *kept,
            (HDR_ATTEMPT, str(attempts).encode()),
            (HDR_ERROR, message.encode()),
            (HDR_ORIGINAL_TOPIC, original_topic),
            (HDR_ORIGINAL_PARTITION, original_partition),
            (HDR_ORIGINAL_OFFSET, original_offset),
        )


@dataclass
class RetryStats:
    ok: int = 0
    retried: int = 0
    dead_lettered: int = 0

    @property
    def total(self) -> int:
        return self.ok + self.retried + self.dead_lettered


class RetryingProcessor:
    """Consumes with ``consumer``, re-produces failures with ``producer``."""

    def __init__(
        self,
        consumer: Consumer,
        producer: Producer,
        handler: Handler,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.consumer = consumer
        self.producer = producer
        self.handler = handler
        self.policy = policy or RetryPolicy()
        self.stats = RetryStats()

    def subscribe(self, topics: Sequence[str]) -> None:
        """Subscribes to each source topic and its retry topic."""
        wanted: list[str] = []
        for t in topics:
            for name in (self.policy.source_topic(t), self.policy.retry_topic(t)):
                if name not in wanted:
                    wanted.append(name)
        self.consumer.subscribe(wanted)

    def handle(self, record: ConsumedRecord) -> Outcome:
        """Runs the handler once; re-produces and acknowledges on failure."""
        try:
            self.handler(record)
        except Exception as exc:
            topic, attempts = self.policy.destination(record)
            headers = self.policy.failure_headers(record, attempts, exc)
            self.producer.send(topic, record.value, record.key, headers=list(headers))
            self.producer.flush()
            self.consumer.ack(record)
            if topic == self.policy.dlq_topic(record.topic):
                self.stats.dead_lettered += 1
                return Outcome.DEAD_LETTER
            self.stats.retried += 1
            return Outcome.RETRY
        self.consumer.ack(record)
        self.stats.ok += 1
        return Outcome.OK

    def run(
        self,
        *,
        max_records: int | None = None,
        idle_timeout: float | None = None,
        poll_timeout: float = 0.5,
    ) -> RetryStats:
        """Handles records until ``max_records`` or ``idle_timeout`` seconds without data."""
        handled = 0
        last_data = time.monotonic()
        while max_records is None or handled < max_records:
            record = self.consumer.poll(poll_timeout)
            if record is None:
                if idle_timeout is not None and time.monotonic() - last_data >= idle_timeout:
                    break
                continue
            self.handle(record)
            handled += 1
            last_data = time.monotonic()
        return self.stats
