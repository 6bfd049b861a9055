"""Producer state checks Kafka's ProducerAppendInfo makes that a partition skipped.

- A producer whose epoch is known but holds no batch in it (its epoch began with the
  coordinator's ABORT marker after InitProducerId fenced the previous instance) must start that
  epoch at sequence 0: Kafka compares with last sequence -1 and answers any other sequence
  OUT_OF_ORDER_SEQUENCE_NUMBER, so a lost first batch is never overtaken by the next one. So
  after a restart too, whose snapshot holds the producer with last sequence -1.
- A non-transactional batch from a producer with an ongoing transaction is INVALID_TXN_STATE
  (Kafka's appendDataBatch), nothing appended.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.broker.txn.test_partition_txn import open_partition, produce
from tiered_mq.errors import InvalidTxnStateError, OutOfOrderSequenceNumberError

PID = 7


async def test_an_epoch_begun_by_a_marker_starts_at_sequence_zero(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    await produce(p, pid=PID, seq=0, txn=True, n=3)  # epoch 0, sequences 0-2
    await p.append_txn_marker(PID, 1, commit=False, coordinator_epoch=0)  # fenced: epoch 1
    end = p.log_end_offset
    with pytest.raises(OutOfOrderSequenceNumberError):
        await produce(p, pid=PID, seq=5, txn=True, epoch=1)  # its batch 0-4 never arrived
    assert p.log_end_offset == end

    p.close()
    p = open_partition(tmp_path)  # the snapshot's entry: epoch 1, last sequence -1
    with pytest.raises(OutOfOrderSequenceNumberError):
        await produce(p, pid=PID, seq=5, txn=True, epoch=1)
    assert await produce(p, pid=PID, seq=0, txn=True, epoch=1) == end
    assert await produce(p, pid=PID, seq=2, txn=True, epoch=1) == end + 2


async def test_a_plain_batch_inside_an_ongoing_transaction_is_refused(tmp_path: Path) -> None:
    p = open_partition(tmp_path)
    await produce(p, pid=PID, seq=0, txn=True)
    end = p.log_end_offset
    with pytest.raises(InvalidTxnStateError):
        await produce(p, pid=PID, seq=2, txn=False)
    assert p.log_end_offset == end
    await p.append_txn_marker(PID, 0, commit=True, coordinator_epoch=0)
    assert await produce(p, pid=PID, seq=2, txn=False) == end + 1  # after the marker: fine
