"""Kafka error codes as one exception tree.

Every error the broker can return to a client is a subclass of :class:`KafkaError` carrying
its wire ``errno`` and whether a client may ``retriable``-retry. ``for_code(n)`` maps a code
back to its class (built from the subclasses, so adding a class is enough).

    KafkaError
     +-- CorruptRecordError (2)         bad CRC, magic, length or record count
     +-- UnknownTopicOrPartitionError (3)
     +-- ... one class per Kafka error code used by the broker
    StorageError                        local log / object store failures (not a wire error)
     +-- LogCorruptionError             carries the segment path and file position
     +-- ObjectStoreError               carries the object key
"""

from __future__ import annotations

from typing import ClassVar


class KafkaError(Exception):
    """Base of every error with a Kafka wire code."""

    errno: ClassVar[int] = -1
    retriable: ClassVar[bool] = False
    message: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    # Produce v8+ (KIP-467): (index in its batch, message) of each record refused, else empty
    record_errors: tuple[tuple[int, str], ...] = ()

    def __str__(self) -> str:
        detail = super().__str__()
        return f"[Error {self.errno}] {self.message}" + (f": {detail}" if detail else "")


def _code(errno: int, name: str, retriable: bool = False) -> type[KafkaError]:
    cls = type(
        "".join(p.capitalize() for p in name.split("_")).removesuffix("Error") + "Error",
        (KafkaError,),
        {"errno": errno, "retriable": retriable, "message": name, "__module__": __name__},
    )
    return cls


UnknownServerError = _code(-1, "UNKNOWN_SERVER_ERROR")
OffsetOutOfRangeError = _code(1, "OFFSET_OUT_OF_RANGE")
CorruptRecordError = _code(2, "CORRUPT_MESSAGE", True)
UnknownTopicOrPartitionError = _code(3, "UNKNOWN_TOPIC_OR_PARTITION", True)
InvalidFetchSizeError = _code(4, "INVALID_FETCH_SIZE")
LeaderNotAvailableError = _code(5, "LEADER_NOT_AVAILABLE", True)
NotLeaderOrFollowerError = _code(6, "NOT_LEADER_OR_FOLLOWER", True)
RequestTimedOutError = _code(7, "REQUEST_TIMED_OUT", True)
BrokerNotAvailableError = _code(8, "BROKER_NOT_AVAILABLE")
ReplicaNotAvailableError = _code(9, "REPLICA_NOT_AVAILABLE", True)
MessageTooLargeError = _code(10, "MESSAGE_TOO_LARGE")
OffsetMetadataTooLargeError = _code(12, "OFFSET_METADATA_TOO_LARGE")
NetworkError = _code(13, "NETWORK_EXCEPTION", True)
CoordinatorLoadInProgressError = _code(14, "COORDINATOR_LOAD_IN_PROGRESS", True)
CoordinatorNotAvailableError = _code(15, "COORDINATOR_NOT_AVAILABLE", True)
NotCoordinatorError = _code(16, "NOT_COORDINATOR", True)
InvalidTopicError = _code(17, "INVALID_TOPIC_EXCEPTION")
RecordListTooLargeError = _code(18, "RECORD_LIST_TOO_LARGE")
NotEnoughReplicasError = _code(19, "NOT_ENOUGH_REPLICAS", True)
NotEnoughReplicasAfterAppendError = _code(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True)
InvalidRequiredAcksError = _code(21, "INVALID_REQUIRED_ACKS")
IllegalGenerationError = _code(22, "ILLEGAL_GENERATION")
InconsistentGroupProtocolError = _code(23, "INCONSISTENT_GROUP_PROTOCOL")
InvalidGroupIdError = _code(24, "INVALID_GROUP_ID")
UnknownMemberIdError = _code(25, "UNKNOWN_MEMBER_ID")
InvalidSessionTimeoutError = _code(26, "INVALID_SESSION_TIMEOUT")
RebalanceInProgressError = _code(27, "REBALANCE_IN_PROGRESS")
InvalidCommitOffsetSizeError = _code(28, "INVALID_COMMIT_OFFSET_SIZE")
TopicAuthorizationFailedError = _code(29, "TOPIC_AUTHORIZATION_FAILED")
GroupAuthorizationFailedError = _code(30, "GROUP_AUTHORIZATION_FAILED")
ClusterAuthorizationFailedError = _code(31, "CLUSTER_AUTHORIZATION_FAILED")
InvalidTimestampError = _code(32, "INVALID_TIMESTAMP")
UnsupportedSaslMechanismError = _code(33, "UNSUPPORTED_SASL_MECHANISM")
IllegalSaslStateError = _code(34, "ILLEGAL_SASL_STATE")
UnsupportedVersionError = _code(35, "UNSUPPORTED_VERSION")
TopicAlreadyExistsError = _code(36, "TOPIC_ALREADY_EXISTS")
InvalidPartitionsError = _code(37, "INVALID_PARTITIONS")
InvalidReplicationFactorError = _code(38, "INVALID_REPLICATION_FACTOR")
InvalidReplicaAssignmentError = _code(39, "INVALID_REPLICA_ASSIGNMENT")
InvalidConfigError = _code(40, "INVALID_CONFIG")
NotControllerError = _code(41, "NOT_CONTROLLER", True)
InvalidRequestError = _code(42, "INVALID_REQUEST")
PolicyViolationError = _code(44, "POLICY_VIOLATION")
OutOfOrderSequenceNumberError = _code(45, "OUT_OF_ORDER_SEQUENCE_NUMBER")
DuplicateSequenceNumberError = _code(46, "DUPLICATE_SEQUENCE_NUMBER")
InvalidProducerEpochError = _code(47, "INVALID_PRODUCER_EPOCH")
InvalidTxnStateError = _code(48, "INVALID_TXN_STATE")
InvalidProducerIdMappingError = _code(49, "INVALID_PRODUCER_ID_MAPPING")
InvalidTransactionTimeoutError = _code(50, "INVALID_TRANSACTION_TIMEOUT")
ConcurrentTransactionsError = _code(51, "CONCURRENT_TRANSACTIONS", True)
TransactionCoordinatorFencedError = _code(52, "TRANSACTION_COORDINATOR_FENCED")
TransactionalIdAuthorizationFailedError = _code(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
SecurityDisabledError = _code(54, "SECURITY_DISABLED")
KafkaStorageError = _code(56, "KAFKA_STORAGE_ERROR", True)
SaslAuthenticationFailedError = _code(58, "SASL_AUTHENTICATION_FAILED")
UnknownProducerIdError = _code(59, "UNKNOWN_PRODUCER_ID")
NonEmptyGroupError = _code(68, "NON_EMPTY_GROUP")
GroupIdNotFoundError = _code(69, "GROUP_ID_NOT_FOUND")
FetchSessionIdNotFoundError = _code(70, "FETCH_SESSION_ID_NOT_FOUND", True)
TopicDeletionDisabledError = _code(73, "TOPIC_DELETION_DISABLED")
FencedLeaderEpochError = _code(74, "FENCED_LEADER_EPOCH", True)
UnknownLeaderEpochError = _code(75, "UNKNOWN_LEADER_EPOCH", True)
UnsupportedCompressionTypeError = _code(76, "UNSUPPORTED_COMPRESSION_TYPE")
OffsetNotAvailableError = _code(78, "OFFSET_NOT_AVAILABLE", True)
MemberIdRequiredError = _code(79, "MEMBER_ID_REQUIRED")
GroupMaxSizeReachedError = _code(81, "GROUP_MAX_SIZE_REACHED")
FencedInstanceIdError = _code(82, "FENCED_INSTANCE_ID")
GroupSubscribedToTopicError = _code(86, "GROUP_SUBSCRIBED_TO_TOPIC")
InvalidRecordError = _code(87, "INVALID_RECORD")
UnstableOffsetCommitError = _code(88, "UNSTABLE_OFFSET_COMMIT", True)
ProducerFencedError = _code(90, "PRODUCER_FENCED")
ResourceNotFoundError = _code(91, "RESOURCE_NOT_FOUND")
DuplicateResourceError = _code(92, "DUPLICATE_RESOURCE")
UnacceptableCredentialError = _code(93, "UNACCEPTABLE_CREDENTIAL")
TransactionalIdNotFoundError = _code(105, "TRANSACTIONAL_ID_NOT_FOUND")
MismatchedEndpointTypeError = _code(114, "MISMATCHED_ENDPOINT_TYPE")
UnsupportedEndpointTypeError = _code(115, "UNSUPPORTED_ENDPOINT_TYPE")
InvalidRegularExpressionError = _code(128, "INVALID_REGULAR_EXPRESSION")

INVALID_RECORD_MIN_VERSION = 8  # Produce v8 brought INVALID_RECORD (KIP-467)


def invalid_record(message: str, api_version: int) -> KafkaError:
    """A record the broker refuses: INVALID_RECORD for produce v8+, CORRUPT_MESSAGE before."""
    if api_version >= INVALID_RECORD_MIN_VERSION:
        return InvalidRecordError(message)
    return CorruptRecordError(message)


def _all_codes() -> dict[int, type[KafkaError]]:
    table: dict[int, type[KafkaError]] = {}
    stack: list[type[KafkaError]] = [KafkaError]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls is not KafkaError:
            table.setdefault(cls.errno, cls)
    return table


_BY_CODE = _all_codes()


def for_code(errno: int) -> type[KafkaError]:
    """The exception class for a Kafka error code (UnknownServerError when unknown)."""
    return _BY_CODE.get(errno, UnknownServerError)


class StorageError(Exception):
    """Local log or object store failure; the broker maps it to KAFKA_STORAGE_ERROR."""


class LogCorruptionError(StorageError):
    """A segment file holds bytes that are not a valid batch at ``position``."""

    def __init__(self, path: str, position: int, reason: str) -> None:
        super().__init__(f"{path} at position {position}: {reason}")
        self.path = path
        self.position = position
        self.reason = reason


class ObjectStoreError(StorageError):
    """An object store operation failed; ``key`` names the object."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class ObjectNotFoundError(ObjectStoreError):
    """The object does not exist."""


class PreconditionFailedError(ObjectStoreError):
    """A conditional put lost: the object changed since it was read (a stale writer)."""


def rejected_records(
    errors: list[tuple[int, str]], api_version: int, *, timestamp: bool = False
) -> KafkaError:
    """Kafka's RecordValidationException for the records ``errors`` name ((index in the batch,
    message), every one refused): INVALID_TIMESTAMP with ``timestamp``, else
    :func:`invalid_record`, with Kafka's summary as the error message and ``errors`` as the
    response's ``record_errors``."""
    if timestamp:
        exc = InvalidTimestampError(
            "One or more records have been rejected due to invalid timestamp"
        )
    else:
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
        exc = invalid_record(
            f"One or more records have been rejected due to {len(errors)} record errors in "
            f"total, and only showing the first three errors at most: [{shown}]",
            api_version,
        )
    exc.record_errors = tuple(errors)
    return exc
