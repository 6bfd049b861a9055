"""Writing one COMMIT/ABORT marker: the step shared by the transaction coordinator (EndTxn,
timeouts, recovery) and the WriteTxnMarkers API (KIP-664's administrative abort).

The marker goes into the partition's log as a control batch (``Partition.append_txn_marker``:
producer-epoch and coordinator-epoch checks, ``.txnindex`` for an ABORT). In a
``__consumer_offsets`` partition the group coordinator then materializes (COMMIT) or drops
(ABORT) the producer's pending transactional offsets there, so offsets never settle before
their marker is in the log.
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker.group.config import OFFSETS_TOPIC
from tiered_mq.broker.replica_manager import ReplicaManager
from tiered_mq.topic_partition import TopicPartition


async def write_marker(
    rm: ReplicaManager,
    group_coordinator: Any,
    tp: TopicPartition,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
) -> int:
    """Append the marker to ``tp`` (hosted here) and settle its offsets; return its offset.

    Raises UnknownTopicOrPartitionError, InvalidProducerEpochError (the partition knows a newer
    producer epoch) or TransactionCoordinatorFencedError (it saw a newer coordinator epoch)."""
    partition = rm.get_partition(tp)
    offset = await partition.append_txn_marker(
        producer_id, producer_epoch, commit, coordinator_epoch
    )
    if group_coordinator is not None and tp.topic == OFFSETS_TOPIC:
        group_coordinator.complete_txn(producer_id, commit, tp.partition)
    return offset
