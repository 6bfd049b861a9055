"""``Producer``: confluent-kafka's producer with a delivery-semantics preset.

Sends are asynchronous: ``send`` queues a record (waiting for queue space when librdkafka's
buffer is full, at most ``max_block_ms`` as Kafka's ``max.block.ms``; it never drops one) and
``flush`` blocks until every queued record is acknowledged or failed. Failed deliveries are
collected and raised from ``flush`` as one ``DeliveryError`` (at-most-once and at-least-once),
so a caller that flushes before committing its input never loses a failure silently.

Exactly-once: the producer is transactional. ``transaction()`` is a context manager that
begins, commits on a normal exit and aborts on an exception; ``send_offsets`` adds a
consumer's positions to the open transaction (consume-transform-produce). Transactions need
the broker's InitProducerId, AddPartitionsToTxn, EndTxn and TxnOffsetCommit; when the
broker cannot run them the first transaction raises ``TransactionsUnsupportedError``.

Ctrl-C: ``flush``, ``poll`` and ``send`` (while it waits for queue space or serves callbacks)
raise ``KeyboardInterrupt`` within ``ROUND_S`` (0.2 s), from their own code: one raised inside
a librdkafka callback was lost (``_sigint``); the records not yet acknowledged stay queued.

Not thread-safe; one producer per thread (librdkafka itself is thread-safe, the bookkeeping
here is not).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import confluent_kafka

from tiered_mq.client._lookup import lookup_in_rounds, partition_ids
from tiered_mq.client._sigint import ROUND_S, SigintDeferred
from tiered_mq.client.config import DeliverySemantics, ProducerConfig
from tiered_mq.client.errors import (
    ClientError,
    DeliveryError,
    StalledError,
    TransactionsUnsupportedError,
)

DeliveryCallback = Callable[[ClientError | None, str, int, int], None]
"""Called with (error or None, topic, partition, offset) once per record."""

HeaderList = Sequence[tuple[str, bytes | str | None]]

POLL_EVERY = 1000
"""Sends between two polls that serve delivery callbacks."""
PROBE_S = 1.0
"""How long ``stalled`` waits for a broker's Metadata answer before it calls it unreachable."""


class Producer:
    def __init__(self, config: ProducerConfig | None = None, **overrides: Any) -> None:
        self.config = config if config is not None else ProducerConfig(**overrides)
        try:
            self._producer = confluent_kafka.Producer(self.config.to_librdkafka())
        except confluent_kafka.KafkaException as exc:  # a property librdkafka refuses
            raise ClientError.wrap(exc, "producer config") from exc
        self._failures: list[tuple[str, int, ClientError]] = []
        self._transactions_ready = False
        self.sent = 0  # records queued by send
        self.delivered = 0
        self.failed = 0
        self.last_error: ClientError | None = None
        """The error of the last failed delivery report (None while none failed)."""
        self._unpolled = 0  # sends since delivery callbacks were last served

    # -- context manager ---------------------------------------------------------------
    def __enter__(self) -> Producer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
            return
        deadline = time.monotonic() + 5.0  # a last chance for what was sent; a Ctrl-C ends it
        while time.monotonic() < deadline:
            with SigintDeferred() as sigint:
                if not self._producer.flush(min(ROUND_S, deadline - time.monotonic())):
                    return
            if sigint.pending:
                return

    # -- sending -----------------------------------------------------------------------
    def send(
        self,
        topic: str,
        value: bytes | str | None,
        key: bytes | str | None = None,
        *,
        partition: int | None = None,
        headers: HeaderList | None = None,
        timestamp_ms: int | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> None:
        """Queues one record; waits (serving callbacks) while the local queue is full, at
        most ``config.max_block_ms``, then raises ``StalledError`` (``_TIMED_OUT``, saying
        whether the broker answers: ``stalled``; the record is not queued; those queued before
        stay queued).

        Delivery callbacks are served every ``POLL_EVERY`` sends (and by ``poll``/``flush``),
        not after each one: a librdkafka poll per record would cost more than the send.
        """
        callback = self._count if on_delivery is None else self._callback(on_delivery)
        kwargs: dict[str, Any] = {"value": value, "key": key, "on_delivery": callback}
        if partition is not None:
            kwargs["partition"] = partition
        if headers:
            kwargs["headers"] = list(headers)
        if timestamp_ms is not None:
            kwargs["timestamp"] = timestamp_ms
        deadline: float | None = None  # set at the first full queue
        while True:
            try:
                self._producer.produce(topic, **kwargs)
                break
            except BufferError:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.config.max_block_ms / 1000
                elif now >= deadline:
                    raise self._queue_full(topic) from None
                with SigintDeferred() as sigint:
                    self._producer.poll(min(0.05, max(0.0, deadline - now)))
                sigint.raise_if_pending()
            except confluent_kafka.KafkaException as exc:
                raise ClientError.wrap(exc, f"produce to {topic}") from exc
        self.sent += 1
        self._unpolled += 1
        if self._unpolled >= POLL_EVERY:
            self._unpolled = 0
            with SigintDeferred() as sigint:
                self._producer.poll(0)
            sigint.raise_if_pending()

    def _queue_full(self, topic: str) -> StalledError:
        """The error of a send that found librdkafka's queue full for ``max_block_ms``: the
        broker is not taking records (down, unreachable, refusing them, or much slower than
        the sender: ``stalled`` tells which)."""
        return self.stalled(
            topic,
            f"produce to {topic}: the producer's queue stayed full for"
            f" {self.config.max_block_ms} ms (max.block.ms) with {self.in_flight()} record(s)"
            " waiting for the broker",
        )

    def stalled(self, topic: str, message: str) -> StalledError:
        """``StalledError`` for records sent to ``topic`` that waited too long, ``message``
        saying which wait. Asks for ``topic``'s metadata (at most ``PROBE_S``; a Ctrl-C
        meanwhile is deferred to its end) to tell a broker that answers but does not
        acknowledge from one not reached; when reached, the message goes on with the last
        failed delivery report's error (``last_error``), or says none came yet."""
        with SigintDeferred() as sigint:
            try:
                self._producer.list_topics(topic, timeout=PROBE_S)
                reached = True
            except confluent_kafka.KafkaException:
                reached = False
        sigint.raise_if_pending()
        last = self.last_error
        if reached:
            message += "; the broker answers but has not acknowledged them: "
            if last is not None:
                message += f"the last delivery error: {last}"
            else:
                message += (
                    "no delivery error reported yet (librdkafka retries a record the broker"
                    " refuses until message.timeout.ms; its debug=msg log shows the broker's"
                    " answers)"
                )
        return StalledError(message, reached, last)

    def _count(self, err: Any, msg: Any) -> ClientError | None:
        """Counts one delivery report; the failure, if it is one, is kept for ``flush``.
        The delivery callback of sends without one of their own (librdkafka ignores the result)."""
        if err is None:
            self.delivered += 1
            return None
        error = ClientError.from_kafka_error(err)
        self.failed += 1
        self.last_error = error
        self._failures.append((msg.topic(), msg.partition(), error))
        return error

    def _callback(self, user: DeliveryCallback) -> Callable[[Any, Any], None]:
        def on_delivery(err: Any, msg: Any) -> None:
            user(self._count(err, msg), msg.topic(), msg.partition(), msg.offset())

        return on_delivery

    def partitions_for(
        self, topic: str, timeout: float = 10.0, unreachable_timeout: float | None = None
    ) -> list[int]:
        """Partition ids of ``topic`` from a Metadata request (which, as any produce, lets a
        broker with ``auto.create.topics.enable`` create it); raises ``ClientError`` when no
        broker answers within ``timeout`` s (``_TRANSPORT``, ``_TIMED_OUT``, asked in rounds:
        ``_lookup.py``; ``unreachable_timeout``: the bound while no broker could be reached at
        all) or the topic has an error (``UNKNOWN_TOPIC_OR_PARTITION``, ...). Each round serves
        the callbacks due (``poll``): librdkafka's log lines reach the logger."""

        def ask(seconds: float) -> Any:
            self.poll(0)  # librdkafka's log lines of the rounds before (a failed connection)
            return self._producer.list_topics(topic, timeout=seconds)

        try:
            md = lookup_in_rounds(ask, timeout, f"metadata for {topic}", unreachable_timeout)
        finally:
            self.poll(0)
        return partition_ids(md, topic)

    def in_flight(self) -> int:
        """Records sent and not yet acknowledged or failed (``len()`` of librdkafka's handle
        counts its queued log lines and requests too)."""
        return self.sent - self.delivered - self.failed

    def poll(self, timeout: float = 0.0) -> int:
        """Serves delivery callbacks, waiting at most ``timeout`` seconds for one; returns how
        many were served."""
        deadline = time.monotonic() + timeout
        while True:
            with SigintDeferred() as sigint:
                served = int(
                    self._producer.poll(min(ROUND_S, max(0.0, deadline - time.monotonic())))
                )
            sigint.raise_if_pending()
            if served or time.monotonic() >= deadline:
                return served

    def flush(self, timeout: float = 30.0) -> None:
        """Waits for every queued record; raises ``DeliveryError`` for failures since last flush."""
        deadline = time.monotonic() + timeout
        while True:
            with SigintDeferred() as sigint:
                remaining = self._producer.flush(
                    min(ROUND_S, max(0.0, deadline - time.monotonic()))
                )
            sigint.raise_if_pending()
            if not remaining or time.monotonic() >= deadline:
                break
        if remaining:
            raise ClientError("_TIMED_OUT", f"{remaining} record(s) in flight after {timeout}s")
        if self._failures:
            failures, self._failures = self._failures, []
            raise DeliveryError(failures)

    def close(self, timeout: float = 30.0) -> None:
        """Flushes (raising failures); librdkafka frees the handle when it is collected."""
        self.flush(timeout)

    # -- transactions (exactly-once) ---------------------------------------------------
    def init_transactions(self, timeout: float = 10.0) -> None:
        """Registers the transactional id with the broker (once; ``transaction()`` calls it)."""
        if self.config.semantics is not DeliverySemantics.EXACTLY_ONCE:
            raise ClientError("_STATE", "transactions need semantics='exactly-once'")
        if self._transactions_ready:
            return
        try:
            self._producer.init_transactions(timeout)
        except confluent_kafka.KafkaException as exc:
            cause = ClientError.wrap(exc)
            raise TransactionsUnsupportedError(
                cause.name,
                "the broker could not start a transactional producer (exactly-once needs "
                f"InitProducerId and the transaction APIs): {cause.error_message}",
                cause.code,
            ) from exc
        self._transactions_ready = True

    @contextmanager
    def transaction(self, timeout: float = 30.0) -> Iterator[Producer]:
        """Begin; commit on normal exit (flushing first); abort if the body raises. The body's
        exception, or the commit's ``ClientError``, is what propagates; an abort that fails as
        well is a note on it (``add_note``), never a raw confluent-kafka exception."""
        self.init_transactions()
        try:
            self._producer.begin_transaction()
        except confluent_kafka.KafkaException as exc:
            raise ClientError.wrap(exc, "begin transaction") from exc
        try:
            yield self
        except BaseException as body_error:
            self._failures.clear()
            aborted = self._abort(timeout)
            if aborted is not None:  # the body's exception stays the one raised
                body_error.add_note(f"then aborting the transaction failed: {aborted}")
            raise
        try:
            self._producer.commit_transaction(timeout)
        except confluent_kafka.KafkaException as exc:
            error = ClientError.wrap(exc, "commit transaction")
            aborted = self._abort(timeout)
            if aborted is not None:
                error.add_note(f"then aborting the transaction failed: {aborted}")
            raise error from exc

    def _abort(self, timeout: float) -> ClientError | None:
        """Aborts the open transaction; its failure (a fenced or fatally failed producer,
        a broker gone) is returned as ``ClientError``, for the caller to attach to the error
        that made it abort."""
        try:
            self._producer.abort_transaction(timeout)
        except confluent_kafka.KafkaException as exc:
            return ClientError.wrap(exc, "abort transaction")
        return None

    def send_offsets(
        self, offsets: Sequence[Any], group_metadata: Any, timeout: float = 30.0
    ) -> None:
        """Adds consumed offsets (confluent ``TopicPartition``s) to the open transaction."""
        try:
            self._producer.send_offsets_to_transaction(list(offsets), group_metadata, timeout)
        except confluent_kafka.KafkaException as exc:
            raise ClientError.wrap(exc, "send offsets to transaction") from exc
