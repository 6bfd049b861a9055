"""``Consumer``: confluent-kafka's consumer with the commit discipline of a delivery semantics.

- at-most-once: ``poll``/``consume`` commit the next offset synchronously *before* returning
  records, so a crash while processing skips them rather than repeating them.
- at-least-once: ``ack(record)`` stores the record's next offset; librdkafka's auto commit
  commits only stored offsets, and ``close`` commits what is stored. A record that was never
  acknowledged is delivered again after a restart.
- exactly-once: reads ``read_committed``; nothing is committed here: the producer commits the
  offsets inside its transaction
  (``producer.send_offsets(consumer.positions(), consumer.group_metadata())``).

A consumer without a ``group_id`` commits nothing and can only ``assign`` partitions.
Errors reported in-band by librdkafka (other than end of partition) are raised as ``ClientError``;
so is any call on a consumer after ``close`` (``_STATE``, as Java's IllegalStateException "This
consumer has already been closed.").

The look-ups (``partitions_for``, ``offsets_for_time``, ``watermarks``) ask librdkafka in rounds
of at most ``LOOKUP_ROUND_S`` while no broker can be reached, so that a Ctrl-C (raised between two
rounds) ends them within about a second instead of at the end of their timeout; once a broker
was reached but has not answered in time (``_TIMED_OUT``), the rest of the timeout goes to one
call, so that a slow answer (a timestamp looked up in the cold tier) is not asked again and again
(``_lookup.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import confluent_kafka

from tiered_mq.client._lookup import lookup_in_rounds, partition_ids
from tiered_mq.client._sigint import ROUND_S, SigintDeferred
from tiered_mq.client.config import ConsumerConfig, DeliverySemantics
from tiered_mq.client.errors import ClientError
from tiered_mq.client.record import ConsumedRecord
from tiered_mq.topic_partition import TopicPartition

OFFSET_BEGINNING = confluent_kafka.OFFSET_BEGINNING
OFFSET_END = confluent_kafka.OFFSET_END
OFFSET_STORED = confluent_kafka.OFFSET_STORED
_LOGICAL_OFFSETS = frozenset({OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED})
R = TypeVar("R")

Handler = Callable[[ConsumedRecord], object]


def _next_offsets(records: Iterable[ConsumedRecord]) -> list[confluent_kafka.TopicPartition]:
    """What to commit after ``records``: per partition, the highest offset + 1 with the leader
    epoch of that record (Java's consumer commits its position, the offset after the last
    record consumed with that record's epoch: KIP-320), or with none if the record has none."""
    last: dict[tuple[str, int], ConsumedRecord] = {}
    for r in records:
        key = (r.topic, r.partition)
        seen = last.get(key)
        if seen is None or r.offset > seen.offset:
            last[key] = r
    return [
        confluent_kafka.TopicPartition(t, p, r.offset + 1)
        if r.leader_epoch is None
        else confluent_kafka.TopicPartition(t, p, r.offset + 1, leader_epoch=r.leader_epoch)
        for (t, p), r in last.items()
    ]


class Consumer:
    def __init__(self, config: ConsumerConfig | None = None, **overrides: Any) -> None:
        self.config = config if config is not None else ConsumerConfig(**overrides)
        try:
            self._consumer = confluent_kafka.Consumer(self.config.to_librdkafka())
        except confluent_kafka.KafkaException as exc:  # a property librdkafka refuses
            raise ClientError.wrap(exc, "consumer config") from exc
        self._closed = False

    def __enter__(self) -> Consumer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Closes; when the block raised, a failure to close (the commit, with the broker gone)
        is added to that exception as a note instead of replacing it (Java's
        try-with-resources keeps it as a suppressed exception)."""
        if exc is None:
            self.close()
            return
        try:
            self.close()
        except ClientError as err:
            exc.add_note(f"then closing the consumer failed: {err}")

    # -- assignment --------------------------------------------------------------------
    def subscribe(self, topics: Sequence[str]) -> None:
        """Joins the group for ``topics`` (needs a ``group_id``)."""
        self._check_open()
        if not self.config.commits:
            raise ClientError("_INVALID_ARG", "subscribe needs a group_id; use assign()")
        try:
            self._consumer.subscribe(list(topics))
        except confluent_kafka.KafkaException as exc:
            raise ClientError.wrap(exc, f"subscribe to {', '.join(topics)}") from exc

    def assign(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Reads exactly these partitions from these offsets (or OFFSET_BEGINNING/END/STORED);
        a negative offset other than those is ``ClientError`` ``_INVALID_ARG``."""
        self._check_open()
        bad = {tp: o for tp, o in offsets.items() if o < 0 and o not in _LOGICAL_OFFSETS}
        if bad:
            tp, offset = next(iter(bad.items()))
            raise ClientError("_INVALID_ARG", f"assign {tp}: invalid start offset {offset}")
        try:
            self._consumer.assign(
                [
                    confluent_kafka.TopicPartition(tp.topic, tp.partition, o)
                    for tp, o in offsets.items()
                ]
            )
        except confluent_kafka.KafkaException as exc:
            raise ClientError.wrap(exc, "assign") from exc

    def assignment(self) -> list[TopicPartition]:
        """The partitions this consumer reads now (empty while a group join is pending)."""
        self._check_open()
        return [TopicPartition(tp.topic, tp.partition) for tp in self._consumer.assignment()]

    def _lookup(self, call: Callable[[float], R], timeout: float, context: str) -> R:
        """``call(seconds)`` within ``timeout`` seconds in all, in rounds (see the module doc)."""
        return lookup_in_rounds(call, timeout, context)

    def partitions_for(self, topic: str, timeout: float = 10.0) -> list[int]:
        """Partition ids of ``topic``; raises ``ClientError`` if the topic does not exist."""
        self._check_open()
        md = self._lookup(
            lambda t: self._consumer.list_topics(topic, timeout=t), timeout, f"metadata for {topic}"
        )
        return partition_ids(md, topic)

    def offsets_for_time(
        self, partitions: Sequence[TopicPartition], timestamp_ms: int, timeout: float = 10.0
    ) -> dict[TopicPartition, int]:
        """First offset whose timestamp is >= ``timestamp_ms`` (OFFSET_END if none)."""
        self._check_open()
        query = [confluent_kafka.TopicPartition(t, p, timestamp_ms) for t, p in partitions]
        found = self._lookup(
            lambda t: self._consumer.offsets_for_times(query, timeout=t),
            timeout,
            "offsets for times",
        )
        result: dict[TopicPartition, int] = {}
        for tp in found:
            if tp.error is not None:
                raise ClientError.from_kafka_error(tp.error, f"{tp.topic}-{tp.partition}")
            result[TopicPartition(tp.topic, tp.partition)] = (
                tp.offset if tp.offset >= 0 else OFFSET_END
            )
        return result

    def watermarks(self, tp: TopicPartition, timeout: float = 10.0) -> tuple[int, int]:
        """(log start offset, high watermark) of one partition, asked of its leader."""
        self._check_open()
        ck_tp = confluent_kafka.TopicPartition(tp.topic, tp.partition)
        low, high = self._lookup(
            lambda t: self._consumer.get_watermark_offsets(ck_tp, timeout=t),
            timeout,
            f"watermarks of {tp}",
        )
        return int(low), int(high)

    # -- reading -----------------------------------------------------------------------
    def _check(self, msg: Any) -> ConsumedRecord | None:
        err = msg.error()
        if err is None:
            return ConsumedRecord.from_message(msg)
        self._raise_unless_eof(msg, err)
        return None

    @staticmethod
    def _raise_unless_eof(msg: Any, err: confluent_kafka.KafkaError) -> None:
        """``ClientError`` for an error librdkafka reports in-band, but for end of partition."""
        if err.code() != confluent_kafka.KafkaError._PARTITION_EOF:
            raise ClientError.from_kafka_error(err, f"{msg.topic()}-{msg.partition()}")

    def _wait(self, fetch: Callable[[float], list[Any]], timeout: float) -> list[Any]:
        """librdkafka's messages from ``fetch(seconds)``, asked in rounds of ``ROUND_S`` until
        one comes or ``timeout`` passes. A Ctrl-C during a round raises ``KeyboardInterrupt``
        once it has returned, the messages of that round sought back to (read again next)."""
        deadline = time.monotonic() + timeout
        while True:
            with SigintDeferred() as sigint:
                msgs = fetch(min(ROUND_S, max(0.0, deadline - time.monotonic())))
            if sigint.pending:
                self._seek_back(msgs)
                sigint.raise_if_pending()
            if msgs or time.monotonic() >= deadline:
                return msgs

    def _seek_back(self, msgs: list[Any]) -> None:
        """Seeks each partition of ``msgs`` back to its first message (not handed out)."""
        first: dict[tuple[str, int], int] = {}
        for m in msgs:
            if m.error() is None:
                first.setdefault((m.topic(), m.partition()), m.offset())
        for (topic, partition), offset in first.items():
            try:
                self._consumer.seek(confluent_kafka.TopicPartition(topic, partition, offset))
            except confluent_kafka.KafkaException:
                pass  # no longer assigned: the group's committed offset decides

    def poll(self, timeout: float = 1.0) -> ConsumedRecord | None:
        """The next record, or None after ``timeout`` seconds without one. A Ctrl-C raises
        ``KeyboardInterrupt`` within ``ROUND_S`` (0.2 s); a record fetched in that round is
        not handed out, and is read again by the next poll."""
        self._check_open()
        msgs = self._wait(lambda t: [m for m in [self._consumer.poll(t)] if m is not None], timeout)
        if not msgs:
            return None
        record = self._check(msgs[0])
        if record is not None:
            self._before_handing_out([record])
        return record

    def consume(self, max_records: int = 500, timeout: float = 1.0) -> list[ConsumedRecord]:
        """Up to ``max_records`` records, waiting at most ``timeout`` seconds for the first
        (Ctrl-C: as ``poll``)."""
        self._check_open()
        records = []
        from_message = ConsumedRecord.from_message  # the one per-record step, called inline
        for msg in self._wait(lambda t: self._consumer.consume(max_records, t), timeout):
            err = msg.error()
            if err is None:
                records.append(from_message(msg))
            else:
                self._raise_unless_eof(msg, err)
        if records:
            self._before_handing_out(records)
        return records

    def _before_handing_out(self, records: list[ConsumedRecord]) -> None:
        if self.config.semantics is DeliverySemantics.AT_MOST_ONCE and self.config.commits:
            try:
                self._consumer.commit(offsets=_next_offsets(records), asynchronous=False)
            except confluent_kafka.KafkaException as exc:
                raise ClientError.wrap(exc, "commit before processing (at-most-once)") from exc

    def ack(self, *records: ConsumedRecord) -> None:
        """Marks records processed; at-least-once commits them (asynchronously, by auto commit)."""
        self._check_open()
        if self.config.semantics is DeliverySemantics.AT_LEAST_ONCE and self.config.commits:
            self._consumer.store_offsets(offsets=_next_offsets(records))

    def commit(self) -> None:
        """Commits the acknowledged offsets now (at-least-once), synchronously."""
        self._check_open()
        if self.config.semantics is not DeliverySemantics.AT_LEAST_ONCE or not self.config.commits:
            return
        try:
            self._consumer.commit(asynchronous=False)
        except confluent_kafka.KafkaException as exc:
            err = ClientError.wrap(exc)
            if err.name != "_NO_OFFSET":  # nothing acknowledged since the last commit
                raise err from exc

    def process(
        self,
        handler: Handler,
        *,
        max_records: int | None = None,
        idle_timeout: float | None = None,
        poll_timeout: float = 0.5,
    ) -> int:
        """Runs ``handler`` on each record, acknowledging after it returns; returns the count.

        Stops after ``max_records`` records or ``idle_timeout`` seconds without a record.
        An exception from the handler propagates and the record stays unacknowledged.
        """
        count = 0
        last_data = time.monotonic()
        while max_records is None or count < max_records:
            record = self.poll(poll_timeout)
            if record is None:
                if idle_timeout is not None and time.monotonic() - last_data >= idle_timeout:
                    break
                continue
            handler(record)
            self.ack(record)
            count += 1
            last_data = time.monotonic()
        return count

    # -- exactly-once glue -------------------------------------------------------------
    def positions(self) -> list[confluent_kafka.TopicPartition]:
        """Current positions of the assigned partitions (for ``Producer.send_offsets``)."""
        self._check_open()
        return [tp for tp in self._consumer.position(self._consumer.assignment()) if tp.offset >= 0]

    def group_metadata(self) -> Any:
        self._check_open()
        return self._consumer.consumer_group_metadata()

    def close(self) -> None:
        """Commits acknowledged offsets (at-least-once), leaves the group, frees the handle."""
        if self._closed:
            return
        try:
            self.commit()
        finally:
            self._closed = True
            self._consumer.close()

    def _check_open(self) -> None:
        """``ClientError`` ``_STATE`` once closed (confluent-kafka raises a bare RuntimeError)."""
        if self._closed:
            raise ClientError("_STATE", "This consumer has already been closed.")
