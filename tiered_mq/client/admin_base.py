"""``AdminBase``: what every family of ``Admin`` operations builds on: the confluent-kafka
``AdminClient`` handle, waiting for its futures, and the reads the others need (Metadata,
ListOffsets).

Each operation is one blocking round of ``AdminClient`` futures; every failure (a broker error
code in a result, or a local librdkafka error such as a timeout) is raised as ``ClientError``
naming the Kafka error; a login the broker refused (wrong SASL password or mechanism) is raised as
librdkafka's ``_AUTHENTICATION`` at once, not as a timeout or transport failure. Offsets are read
with ListOffsets (earliest = log start offset, latest = log end offset as the client sees it: the
high watermark, or the last stable offset for read_committed readers).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Self

import confluent_kafka
from confluent_kafka import admin as _ck_admin

from tiered_mq.client._sigint import SigintDeferred
from tiered_mq.client.config import AdminConfig
from tiered_mq.client.errors import ClientError
from tiered_mq.topic_partition import TopicPartition

# confluent-kafka's stubs do not re-export the admin types; use them untyped.
ck_admin: Any = _ck_admin

UNSUPPORTED = frozenset({"UNSUPPORTED_VERSION", "_UNSUPPORTED_FEATURE", "INVALID_REQUEST"})
"""What a broker answers a request (version) it does not know."""


_NOT_LISTED = frozenset({"_NOENT", "_UNKNOWN_TOPIC", "_UNKNOWN_PARTITION"})
"""librdkafka's local errors for a topic or partition missing from its metadata."""


def timed_out(context: str, timeout: float) -> ClientError:
    return ClientError("_TIMED_OUT", f"{context}: no answer within {timeout}s")


def enum_name(value: Any) -> str:
    return str(getattr(value, "name", value))


class AdminBase:
    def __init__(self, config: AdminConfig | None = None, **overrides: Any) -> None:
        self.config = config if config is not None else AdminConfig(**overrides)
        self._timeout = self.config.request_timeout_s
        self._login_error: Any = None
        conf = self.config.to_librdkafka()
        conf.setdefault("error_cb", self._on_error)
        try:
            self._admin = ck_admin.AdminClient(conf)
        except confluent_kafka.KafkaException as exc:  # a property librdkafka refuses
            raise ClientError.wrap(exc, "admin config") from exc

    def _on_error(self, err: Any) -> None:
        """librdkafka's error callback (served by ``poll``): keeps a refused login."""
        if err.code() == confluent_kafka.KafkaError._AUTHENTICATION:
            self._login_error = err

    def _poll(self) -> None:
        """Serves librdkafka's callbacks (error_cb, log lines): a Ctrl-C that lands in one
        of them would be lost in confluent-kafka's C code (a SystemError instead); it is
        raised here, after the call (client/_sigint.py)."""
        with SigintDeferred() as sigint:
            self._admin.poll(0)
        sigint.raise_if_pending()

    def _explain(self, err: ClientError, context: str) -> ClientError:
        """The refused login behind a transport failure or timeout, if librdkafka saw one."""
        if err.name in ("_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN"):
            self._poll()
            if self._login_error is not None:
                return ClientError.from_kafka_error(self._login_error, context)
        return err

    def _metadata(self, context: str, **kwargs: Any) -> Any:
        """Metadata within the timeout, asked in rounds of at most 1 s: librdkafka retries a
        refused login until its timeout, and the error callback tells only between rounds."""
        deadline = time.monotonic() + self._timeout
        while True:
            left = deadline - time.monotonic()
            try:
                return self._admin.list_topics(timeout=min(1.0, max(0.1, left)), **kwargs)
            except confluent_kafka.KafkaException as exc:
                err = self._explain(ClientError.wrap(exc, context), context)
                if err.name not in ("_TRANSPORT", "_TIMED_OUT") or time.monotonic() >= deadline:
                    raise err from exc

    def _result(self, future: Future[Any], context: str) -> Any:
        """``future``'s result within the timeout; a refused login ends the wait at once."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                return future.result(min(0.2, max(0.0, deadline - time.monotonic())))
            except confluent_kafka.KafkaException as exc:
                raise self._explain(ClientError.wrap(exc, context), context) from exc
            except TimeoutError as exc:
                if time.monotonic() >= deadline:
                    raise self._explain(timed_out(context, self._timeout), context) from exc
                self._poll()
                if self._login_error is not None:
                    raise ClientError.from_kafka_error(self._login_error, context) from exc

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """AdminClient has no close; the handle is freed when collected."""

    def _topic_metadata(self, name: str) -> Any:
        md = self._metadata(f"metadata for {name}", topic=name)
        tmd = md.topics.get(name)
        if tmd is None:
            raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", f"topic {name} does not exist", 3)
        if tmd.error is not None:
            raise ClientError.from_kafka_error(tmd.error, f"topic {name}")
        return tmd

    def partitions_for(self, topic: str) -> list[int]:
        """Partition ids of ``topic``; UNKNOWN_TOPIC_OR_PARTITION if it does not exist."""
        return sorted(self._topic_metadata(topic).partitions)

    def list_offsets(
        self, partitions: Sequence[TopicPartition], spec: str | int = "latest"
    ) -> dict[TopicPartition, int]:
        """``spec`` is ``earliest`` (log start offset), ``latest`` (log end offset) or a
        timestamp in ms: the first offset whose record has a timestamp >= it (-1 if none);
        any other ``spec`` is a ``ValueError``. A topic or partition that does not exist is
        ``ClientError`` UNKNOWN_TOPIC_OR_PARTITION."""
        if isinstance(spec, int):
            offset_spec = ck_admin.OffsetSpec.for_timestamp(spec)
        elif spec == "earliest":
            offset_spec = ck_admin.OffsetSpec.earliest()
        elif spec == "latest":
            offset_spec = ck_admin.OffsetSpec.latest()
        else:
            raise ValueError(
                f"offset spec {spec!r}: give 'earliest', 'latest' or a timestamp in ms"
            )
        if not partitions:
            return {}
        query = {confluent_kafka.TopicPartition(t, p): offset_spec for t, p in partitions}
        futures = self._admin.list_offsets(query, request_timeout=self._timeout)
        return {
            TopicPartition(tp.topic, tp.partition): self._offset(fut, tp.topic, tp.partition)
            for tp, fut in futures.items()
        }

    def _offset(self, future: Future[Any], topic: str, partition: int) -> int:
        """One partition's ListOffsets answer; librdkafka's local errors for a topic or
        partition its metadata does not list (``_NOENT``, ``_UNKNOWN_TOPIC``,
        ``_UNKNOWN_PARTITION``) are Kafka's UNKNOWN_TOPIC_OR_PARTITION."""
        context = f"list offsets {topic}-{partition}"
        try:
            return int(self._result(future, context).offset)
        except ClientError as err:
            if err.name not in _NOT_LISTED:
                raise
            raise ClientError(
                "UNKNOWN_TOPIC_OR_PARTITION",
                f"{context}: This server does not host this topic-partition.",
                3,
            ) from err
