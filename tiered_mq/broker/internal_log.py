"""Reading back an internal topic's partition at start: ``__consumer_offsets`` for the group
coordinator (broker/group/offsets.py), ``__transaction_state`` for the transaction coordinator
(broker/txn/coordinator.py), as Kafka's coordinators load their partitions.

The partition's local log is read from its log start offset to its log end offset,
``buffer_bytes`` at a time (Kafka's ``offsets.load.buffer.size``; a batch larger than that is
still read whole, as ``LocalLog.read`` returns at least one batch), and every batch decoded,
control batches included (the caller skips or applies them). A read that makes no progress is
logged and ends the load: what was read before it stays applied.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from tiered_mq.broker.group.seams import LocalLogLike
from tiered_mq.record.batch import BatchHeader
from tiered_mq.record.records import Record, decode_batches
from tiered_mq.topic_partition import TopicPartition

log = logging.getLogger(__name__)


def load_batches(
    tp: TopicPartition, local_log: LocalLogLike, buffer_bytes: int
) -> Iterator[tuple[BatchHeader, list[Record]]]:
    """Every batch of ``tp``'s ``local_log`` with its decoded records, in offset order."""
    offset = local_log.log_start_offset
    while offset < local_log.log_end_offset:
        data = local_log.read(offset, buffer_bytes)
        buf = b"".join(region.read() for region in data.regions)
        next_offset = offset
        for header, records in decode_batches(buf):
            next_offset = header.next_offset
            yield header, records
        if next_offset <= offset:
            log.error("%s: no progress reading at offset %d, stopping the load", tp, offset)
            return
        offset = next_offset
