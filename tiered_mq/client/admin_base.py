"""``AdminBase``: what every family of ``Admin`` operations builds on: the confluent-kafka
``AdminClient`` handle, waiting for its futures, and the reads the others need (Metadata,
ListOffsets).

Each operation is one blocking round of ``AdminClient`` futures; every failure (a broker error
code in a result, or a local librdkafka error such as a timeout) is raised as ``ClientError``
naming the Kafka error; a login the broker refused (wrong SASL password or mechanism) is raised as
librdkafka's ``_AUTHENTICATION`` at once, not as a timeout or transport failure. A client that has
had no answer from any broker yet gives up as soon as librdkafka reports every broker down
(``_ALL_BROKERS_DOWN`` to the error callback: each connection refused, unresolvable, closed or
never answered) and none is up: ``_TRANSPORT`` naming librdkafka's last connection error, within
a fraction of a second for a port nobody listens on, not a ``_TIMED_OUT`` after the whole
request timeout. Once a broker has answered, a wait for brokers that went down lasts the whole
timeout (they may be restarting), as Kafka's AdminClient waits. Offsets are read
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


_RETRIED = frozenset({"_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN"})
"""librdkafka's errors for "no answer yet": a refused login or no broker at all may be behind."""
_PROBE_S = 0.01
"""How long ``_unreachable`` asks librdkafka for a broker that is up (no request is sent
while none is)."""


def timed_out(context: str, timeout: float) -> ClientError:
    return ClientError("_TIMED_OUT", f"{context}: no answer within {timeout}s")


def enum_name(value: Any) -> str:
    return str(getattr(value, "name", value))


class AdminBase:
    def __init__(self, config: AdminConfig | None = None, **overrides: Any) -> None:
        self.config = config if config is not None else AdminConfig(**overrides)
        self._timeout = self.config.request_timeout_s
        self._login_error: Any = None
        self._all_down: Any = None  # _ALL_BROKERS_DOWN not yet followed by a broker up
        self._last_error: Any = None  # the error callback's last other report
        self._answered = False  # some request of this client has had a broker's answer
        conf = self.config.to_librdkafka()
        conf.setdefault("error_cb", self._on_error)
        try:
            self._admin = ck_admin.AdminClient(conf)
        except confluent_kafka.KafkaException as exc:  # a property librdkafka refuses
            raise ClientError.wrap(exc, "admin config") from exc

    def _on_error(self, err: Any) -> None:
        """librdkafka's error callback (served by ``poll``): keeps a refused login, the
        every-broker-down report and the last other error (a failed connection)."""
        code = err.code()
        if code == confluent_kafka.KafkaError._AUTHENTICATION:
            self._login_error = err
        elif code == confluent_kafka.KafkaError._ALL_BROKERS_DOWN:
            self._all_down = err
        else:
            self._last_error = err

    def _poll(self) -> None:
        """Serves librdkafka's callbacks (error_cb, log lines): a Ctrl-C that lands in one
        of them would be lost in confluent-kafka's C code (a SystemError instead); it is
        raised here, after the call (client/_sigint.py)."""
        with SigintDeferred() as sigint:
            self._admin.poll(0)
        sigint.raise_if_pending()

    def _refusal(self, context: str) -> ClientError | None:
        """Why no answer came, if the error callback already knows (it is served first): a
        refused login, else no broker reachable (``_unreachable``); None otherwise."""
        self._poll()
        if self._login_error is not None:
            return ClientError.from_kafka_error(self._login_error, context)
        return self._unreachable(context)

    def _unreachable(self, context: str) -> ClientError | None:
        """``_TRANSPORT`` when no request of this client has had an answer yet, librdkafka has
        reported every broker down, and none is up now (its Metadata call finds no broker to
        send to: ``_TRANSPORT`` at once); a broker up since clears the report (None)."""
        if self._answered or self._all_down is None:
            return None
        try:
            self._admin.list_topics(timeout=_PROBE_S)
        except confluent_kafka.KafkaException as exc:
            if ClientError.wrap(exc).name == "_TRANSPORT":
                # (librdkafka's "N/M brokers are down" text counts brokers oddly: left out)
                last = "" if self._last_error is None else (self._last_error.str() or "").strip()
                message = f"{context}: no broker could be reached" + (f": {last}" if last else "")
                code = confluent_kafka.KafkaError._TRANSPORT
                return ClientError("_TRANSPORT", message, code, retriable=True)
        self._all_down = None
        return None

    def _explain(self, err: ClientError, context: str) -> ClientError:
        """The refused login or unreachable cluster behind a transport failure or timeout."""
        if err.name in _RETRIED:
            return self._refusal(context) or err
        return err

    def _metadata(self, context: str, **kwargs: Any) -> Any:
        """Metadata within the timeout, asked in rounds of at most 1 s: librdkafka retries a
        refused login until its timeout, and the error callback tells only between rounds."""
        deadline = time.monotonic() + self._timeout
        while True:
            left = deadline - time.monotonic()
            try:
                md = self._admin.list_topics(timeout=min(1.0, max(0.1, left)), **kwargs)
            except confluent_kafka.KafkaException as exc:
                err = ClientError.wrap(exc, context)
                explained = self._explain(err, context)
                if explained is not err:
                    raise explained from exc
                if err.name not in ("_TRANSPORT", "_TIMED_OUT") or time.monotonic() >= deadline:
                    raise err from exc
            else:
                self._answered = True
                return md

    def _result(self, future: Future[Any], context: str) -> Any:
        """``future``'s result within the timeout; a refused login or a cluster that cannot
        be reached (see the module's docstring) ends the wait at once."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                result = future.result(min(0.2, max(0.0, deadline - time.monotonic())))
            except confluent_kafka.KafkaException as exc:
                err = ClientError.wrap(exc, context)
                self._answered = self._answered or err.code >= 0  # the broker's own error
                raise self._explain(err, context) from exc
            except TimeoutError as exc:
                refusal = self._refusal(context)
                if refusal is not None:
                    raise refusal from exc
                if time.monotonic() >= deadline:
                    raise timed_out(context, self._timeout) from exc
            else:
                self._answered = True
                return result

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
