"""Failed writes of group state to ``__consumer_offsets``: the answer, the back-off, the log.

The answer (:func:`append_error`) is Kafka's mapping of a failed append (GroupMetadataManager's
storeGroup/storeOffsets, the newer GroupCoordinatorService likewise): KAFKA_STORAGE_ERROR (here
also any ``StorageError`` or ``OSError`` of the local log) and NOT_LEADER_OR_FOLLOWER answer
NOT_COORDINATOR; UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND) and
REQUEST_TIMED_OUT answer COORDINATOR_NOT_AVAILABLE; a batch too large answers
UNKNOWN_SERVER_ERROR (offset commits answer INVALID_COMMIT_OFFSET_SIZE before asking here);
another Kafka error is answered as it is, anything else COORDINATOR_NOT_AVAILABLE.

The back-off (:class:`OfflinePartitions`): on a full disk Kafka takes the log directory
offline, so the broker stops leading the ``__consumer_offsets`` partitions on it and its
coordinator resigns them; FindCoordinator then answers COORDINATOR_NOT_AVAILABLE and clients
wait between lookups instead of rejoining. NOT_COORDINATOR alone does not slow them:
confluent-kafka and kafka-python handle it as COORDINATOR_NOT_AVAILABLE (rediscover, rejoin
after ``retry.backoff.ms``), so each rejoin was a rebalance whose store failed again (measured
on a full tmpfs: kafka-python about 8-16 rebalances a second, confluent-kafka about 1, with
either code). Here a storage failure takes the partition offline for ``OFFLINE_MS``:
its groups' requests are answered NOT_COORDINATOR and FindCoordinator for them
COORDINATOR_NOT_AVAILABLE, without touching the group or the disk. Then requests are let
through again: one more failed append takes it offline for another ``OFFLINE_MS`` (at most one
rebalance per group and period while the disk stays full), the first successful append brings
it back (no restart needed once space is freed, unlike Kafka). The state is in memory only: a
restarted broker starts with every partition online. Nothing about the groups changes: the
offsets cache changes only after an append succeeds (offsets.py), so no acknowledged commit is
lost and no failed one is visible.

The log (:class:`StoreFailureLog`): per group, the first failure in each ``LOG_INTERVAL_S`` is
logged at ERROR with its traceback; later ones in the interval are only counted, and the count
goes into the next line logged. A partition going offline and coming back is one line each.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from tiered_mq import errors

LOG_INTERVAL_S: Final = 30.0
OFFLINE_MS: Final = 5_000

#: errors of an append that mean the local log could not be written (Kafka: KAFKA_STORAGE_ERROR)
STORAGE_ERRORS: Final = (errors.KafkaStorageError, errors.StorageError, OSError)

_NOT_COORDINATOR: Final = (errors.NotLeaderOrFollowerError, *STORAGE_ERRORS)
_NOT_AVAILABLE: Final = (
    errors.UnknownTopicOrPartitionError,
    errors.NotEnoughReplicasError,
    errors.NotEnoughReplicasAfterAppendError,
    errors.RequestTimedOutError,
)
_TOO_LARGE: Final = (
    errors.MessageTooLargeError,
    errors.RecordListTooLargeError,
    errors.InvalidFetchSizeError,
)


def append_error(exc: BaseException) -> int:
    """The error code a request whose ``__consumer_offsets`` append raised ``exc`` answers."""
    if isinstance(exc, _NOT_COORDINATOR):
        return errors.NotCoordinatorError.errno
    if isinstance(exc, _TOO_LARGE):
        return errors.UnknownServerError.errno
    if isinstance(exc, errors.KafkaError) and not isinstance(exc, _NOT_AVAILABLE):
        return exc.errno
    return errors.CoordinatorNotAvailableError.errno


class OfflinePartitions:
    """``__consumer_offsets`` partitions offline after a storage failure (module docstring);
    times are the coordinator scheduler's milliseconds."""

    def __init__(self, log: logging.Logger, offline_ms: int = OFFLINE_MS) -> None:
        self._log = log
        self._offline_ms = offline_ms
        self._until: dict[int, int] = {}  # partition -> when requests are let through again

    def failed(self, partition: int, now_ms: int) -> None:
        """An append to ``partition`` failed on storage: offline for ``offline_ms``."""
        if partition not in self._until:
            self._log.error(
                "__consumer_offsets-%d: storage failure, its groups are answered NOT_COORDINATOR"
                " (retried every %d ms until an append succeeds)",
                partition,
                self._offline_ms,
            )
        self._until[partition] = now_ms + self._offline_ms

    def succeeded(self, partition: int) -> None:
        """An append to ``partition`` succeeded: it is online."""
        if self._until.pop(partition, None) is not None:
            self._log.info("__consumer_offsets-%d: appends succeed again, online", partition)

    def available(self, partition: int, now_ms: int) -> bool:
        return now_ms >= self._until.get(partition, now_ms)


class StoreFailureLog:
    def __init__(
        self,
        log: logging.Logger,
        interval_s: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._interval_s = interval_s
        self._clock = clock
        self._last: dict[str, float] = {}  # group id -> when its last failure was logged
        self._quiet: dict[str, int] = {}  # group id -> failures counted since

    def failed(self, group_id: str, what: str) -> None:
        """Record a failure of ``what`` for ``group_id``; call it inside the ``except`` block
        (the traceback logged is the exception being handled)."""
        now = self._clock()
        last = self._last.get(group_id)
        if last is not None and now - last < self._interval_s:
            self._quiet[group_id] = self._quiet.get(group_id, 0) + 1
            return
        self._last[group_id] = now
        quiet = self._quiet.pop(group_id, 0)
        more = (
            f" ({quiet} more failures of this group's writes since the last line)" if quiet else ""
        )
        self._log.exception("group %s: %s failed%s", group_id, what, more)
