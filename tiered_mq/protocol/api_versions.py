"""The API keys and version ranges this broker advertises (KAFKA_PROTOCOL.md's table).

Every version inside an advertised range is implemented by the codec (``messages/``); a unit
test checks this table against the declarations. Produce is advertised from v0 (librdkafka
before 2.11.1 enables compression only if it sees Produce v0) but the broker serves only v3+
and answers v0-2 with UNSUPPORTED_VERSION. ApiVersions goes up to v3 (flexible); a client
asking for more gets :func:`tiered_mq.protocol.codec.api_versions_fallback`. JoinGroup and
OffsetCommit start at v0, below the table: Sarama before 1.41 never asks ApiVersions and sends
JoinGroup v1 and (by default) OffsetCommit v1 (Kafka 4.0.1 brought JoinGroup v0-1 back for it,
KAFKA-19444).

The ApiVersions handler should advertise ``SUPPORTED`` restricted to the keys that have a
handler (``advertised(handler_keys)``), so a client never picks an API the broker cannot serve.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final


class ApiKey(IntEnum):
    """Kafka's API keys (names as in Kafka's ``ApiKeys``), for the APIs the codec knows."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    OFFSET_DELETE = 47
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66


SUPPORTED: Final[dict[int, tuple[int, int]]] = {
    ApiKey.PRODUCE: (0, 8),
    ApiKey.FETCH: (4, 11),
    ApiKey.LIST_OFFSETS: (1, 10),
    ApiKey.METADATA: (0, 8),
    ApiKey.OFFSET_COMMIT: (0, 7),
    ApiKey.OFFSET_FETCH: (1, 7),
    ApiKey.FIND_COORDINATOR: (0, 2),
    ApiKey.JOIN_GROUP: (0, 5),
    ApiKey.HEARTBEAT: (0, 3),
    ApiKey.LEAVE_GROUP: (0, 3),
    ApiKey.SYNC_GROUP: (0, 3),
    ApiKey.DESCRIBE_GROUPS: (0, 4),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.SASL_HANDSHAKE: (0, 1),
    ApiKey.API_VERSIONS: (0, 3),
    ApiKey.CREATE_TOPICS: (2, 7),
    ApiKey.DELETE_TOPICS: (1, 3),
    ApiKey.DELETE_RECORDS: (0, 1),
    ApiKey.INIT_PRODUCER_ID: (0, 1),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 3),
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 2),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 2),
    ApiKey.END_TXN: (0, 2),
    ApiKey.WRITE_TXN_MARKERS: (0, 1),
    ApiKey.TXN_OFFSET_COMMIT: (0, 3),
    ApiKey.DESCRIBE_ACLS: (0, 1),
    ApiKey.CREATE_ACLS: (0, 1),
    ApiKey.DELETE_ACLS: (0, 1),
    ApiKey.DESCRIBE_CONFIGS: (1, 3),
    ApiKey.ALTER_CONFIGS: (0, 1),
    ApiKey.SASL_AUTHENTICATE: (0, 1),
    ApiKey.CREATE_PARTITIONS: (0, 1),
    ApiKey.DELETE_GROUPS: (0, 1),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.DESCRIBE_LOG_DIRS: (1, 4),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.DESCRIBE_CLUSTER: (0, 2),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 2),
}

# Versions the broker decodes but answers with UNSUPPORTED_VERSION (see the module docstring).
MIN_SERVED: Final[dict[int, int]] = {ApiKey.PRODUCE: 3}


def is_supported(api_key: int, api_version: int) -> bool:
    """True when the codec can decode this request (the version is inside the range)."""
    rng = SUPPORTED.get(api_key)
    return rng is not None and rng[0] <= api_version <= rng[1]


def advertised(handler_keys: Iterable[int]) -> list[dict[str, int]]:
    """ApiVersions ``api_keys`` entries for the supported APIs that have a handler."""
    keys = set(handler_keys)
    return [
        {"api_key": int(k), "min_version": lo, "max_version": hi}
        for k, (lo, hi) in sorted(SUPPORTED.items())
        if k in keys
    ]
