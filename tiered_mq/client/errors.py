"""Errors raised by the SDK.

    ClientError                 any failure reported by librdkafka or the broker
     +-- DeliveryError          one or more produced records were not acknowledged
     +-- StalledError           records waited for the broker longer than allowed (_TIMED_OUT)
     +-- TransactionsUnsupportedError   the broker cannot run transactions (exactly-once)
     +-- ConnectionFailure      the SDK's own connection (not librdkafka's) failed

``ClientError.name`` is Kafka's upper-case error name (as in ``tiered_mq.errors``) for broker
errors, librdkafka's for local ones (which start with ``_``); ``code`` is its number (broker
codes are >= 0, local ones negative).
``str()`` reads ``NAME: message``, which is what the CLI prints. ``Producer``, ``Consumer`` and
``Admin`` raise it from their constructors too: ``_INVALID_ARG`` for a librdkafka property (in
``extra``) or value that librdkafka refuses.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError as _RdKafkaError
from confluent_kafka import KafkaException

from tiered_mq.errors import for_code


class ClientError(Exception):
    """A Kafka error with its name, code and message."""

    def __init__(self, name: str, message: str, code: int = -1, retriable: bool = False) -> None:
        super().__init__(f"{name}: {message}" if message else name)
        self.name = name
        self.code = code
        self.error_message = message
        self.retriable = retriable

    @classmethod
    def from_kafka_error(cls, err: Any, context: str = "") -> ClientError:
        """Builds from a ``confluent_kafka.KafkaError``; ``context`` prefixes the message."""
        message = (err.str() or "").strip()  # librdkafka ends some with a newline
        name = err.name()
        code = err.code()
        if code >= 0:  # a broker error: use Kafka's name (librdkafka abbreviates some)
            known = for_code(code)
            if known.errno == code:
                name = known.message
        if context:
            message = f"{context}: {message}" if message else context
        return cls(name, message, code, bool(err.retriable()))

    @classmethod
    def from_code(cls, code: int, message: str | None, context: str = "") -> ClientError:
        """Builds from a broker error code in an answer this SDK decoded itself (Kafka's name;
        ``ERROR_<code>`` for a code ``tiered_mq.errors`` does not know)."""
        known = for_code(code)
        name = known.message if known.errno == code else f"ERROR_{code}"
        text = f"{context}: {message}" if context and message else (message or context)
        return cls(name, text, code, known.retriable)

    @classmethod
    def wrap(cls, exc: BaseException | _RdKafkaError, context: str = "") -> ClientError:
        """Turns whatever a confluent-kafka call raised into a ``ClientError``."""
        if isinstance(exc, ClientError):
            return exc
        if isinstance(exc, _RdKafkaError):  # as in a result's ``errors`` list
            return cls.from_kafka_error(exc, context)
        if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], _RdKafkaError):
            return cls.from_kafka_error(exc.args[0], context)
        name = type(exc).__name__
        message = f"{context}: {exc}" if context else str(exc)
        return cls(name, message)


class DeliveryError(ClientError):
    """Records the broker did not acknowledge; ``failures`` lists (topic, partition, error)."""

    def __init__(self, failures: list[tuple[str, int, ClientError]]) -> None:
        first = failures[0][2]
        super().__init__(
            first.name,
            f"{len(failures)} record(s) not delivered; first: {first.error_message}",
            first.code,
            first.retriable,
        )
        self.failures = failures


class TransactionsUnsupportedError(ClientError):
    """Exactly-once was asked for but the broker could not start a transactional producer."""


class StalledError(ClientError):
    """``_TIMED_OUT`` (retriable): records waited for the broker longer than allowed (a send
    that found the producer's queue full for ``max.block.ms``, as Kafka's producer times out a
    send blocked that long; a flush's timeout). ``broker_reached``: a broker answered a
    Metadata request when the wait ended, so it is up and reachable and the records' leader is
    refusing them (an error librdkafka retries until ``message.timeout.ms``, e.g.
    ``NOT_ENOUGH_REPLICAS``) or is slower than the sender; False: no broker answered (down,
    unreachable, or a listener that needs TLS or SASL). ``last_error``: the error of the last
    failed delivery report of the producer, None if none came (librdkafka reports a refused
    record only once it gives up on it)."""

    def __init__(
        self, message: str, broker_reached: bool, last_error: ClientError | None = None
    ) -> None:
        super().__init__("_TIMED_OUT", message, _RdKafkaError._TIMED_OUT, retriable=True)
        self.broker_reached = broker_reached
        self.last_error = last_error


class ConnectionFailure(ClientError):
    """``_TRANSPORT``, ``_TIMED_OUT`` or ``_SSL`` of the SDK's own ``BrokerConnection``
    (``connection.py``: the requests librdkafka cannot send), to the broker at ``address``
    (``host:port``). librdkafka took no part: its log has nothing about it, and the message is
    all there is (the OS's error, or that no answer came in time)."""

    def __init__(self, name: str, message: str, address: str) -> None:
        super().__init__(name, message, getattr(_RdKafkaError, name, -1))
        self.address = address
