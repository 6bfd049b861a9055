"""``ConsumedRecord``: one record as the SDK hands it to application code.

Immutable and detached from librdkafka's ``Message`` (whose accessors are methods and whose
errors travel in-band). ``timestamp_ms`` is the record's create or log-append time, or -1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Headers = tuple[tuple[str, bytes | None], ...]


@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: Headers = ()

    def header(self, name: str) -> bytes | None:
        """Value of the last header called ``name`` (Kafka allows repeats), else None."""
        for key, value in reversed(self.headers):
            if key == name:
                return value
        return None

    @classmethod
    def from_message(cls, msg: Any) -> ConsumedRecord:
        """From a ``confluent_kafka.Message`` that carries no error."""
        _ts_type, ts = msg.timestamp()
        raw_headers = msg.headers() or []
        return cls(
            topic=msg.topic(),
            partition=msg.partition(),
            offset=msg.offset(),
            timestamp_ms=ts,
            key=msg.key(),
            value=msg.value(),
            headers=tuple((k, v) for k, v in raw_headers),
        )
