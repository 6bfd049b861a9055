"""In-memory stand-ins for confluent-kafka's Consumer and Producer (unit tests only)."""

from __future__ import annotations

from typing import Any

import confluent_kafka


class FakeMessage:
    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        value: bytes | None,
        key: bytes | None = None,
        headers: list[tuple[str, bytes | None]] | None = None,
        error: Any = None,
        leader_epoch: int | None = None,
    ) -> None:
        self._t, self._p, self._o = topic, partition, offset
        self._v, self._k, self._h, self._e = value, key, headers, error
        self._le = leader_epoch

    def topic(self) -> str:
        return self._t

    def partition(self) -> int:
        return self._p

    def offset(self) -> int:
        return self._o

    def value(self) -> bytes | None:
        return self._v

    def key(self) -> bytes | None:
        return self._k

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self._h

    def timestamp(self) -> tuple[int, int]:
        return (confluent_kafka.TIMESTAMP_CREATE_TIME, 1000 + self._o)

    def error(self) -> Any:
        return self._e

    def leader_epoch(self) -> int | None:
        """None as confluent-kafka answers for a batch without one (-1)."""
        return self._le


class FakeRdConsumer:
    """Records every commit/store call; serves queued messages."""

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.queue: list[FakeMessage] = []
        self.calls: list[tuple[str, Any]] = []
        self.closed = False
        self.subscribed: list[str] = []

    def subscribe(self, topics: list[str]) -> None:
        self.subscribed = topics

    def poll(self, timeout: float) -> FakeMessage | None:
        return self.queue.pop(0) if self.queue else None

    def consume(self, n: int, timeout: float) -> list[FakeMessage]:
        out, self.queue = self.queue[:n], self.queue[n:]
        return out

    def commit(self, offsets: Any = None, asynchronous: bool = True) -> None:
        self.calls.append(
            (
                "commit",
                None if offsets is None else [(t.topic, t.partition, t.offset) for t in offsets],
            )
        )

    def store_offsets(self, offsets: Any) -> None:
        self.calls.append(("store", [(t.topic, t.partition, t.offset) for t in offsets]))

    def close(self) -> None:
        self.closed = True


class FakeRdProducer:
    """Delivers every record at once (or fails those whose topic is in ``failing``)."""

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.sent: list[dict[str, Any]] = []
        self.pending: list[tuple[Any, FakeMessage, Any]] = []
        self.failing: set[str] = set()

    def produce(self, topic: str, **kw: Any) -> None:
        self.sent.append({"topic": topic, **kw})
        err = (
            confluent_kafka.KafkaError(confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE, "too big")
            if topic in self.failing
            else None
        )
        msg = FakeMessage(topic, kw.get("partition", 0), len(self.sent) - 1, kw.get("value"))
        self.pending.append((kw["on_delivery"], msg, err))

    def poll(self, timeout: float = 0.0) -> int:
        served, self.pending = self.pending, []
        for cb, msg, err in served:
            cb(err, msg)
        return len(served)

    def flush(self, timeout: float = 0.0) -> int:
        self.poll()
        return 0
