"""A transactional batch whose transaction ends while the broker works on it (a hanging
transaction, Kafka's KAFKA-14402).

A topic with its own ``compression.type`` re-encodes each batch in a worker thread; the
transaction is checked before that work and, since the fix, again under the partition lock
right before the append. Here the worker is held while the coordinator aborts the transaction
(its ABORT marker is written meanwhile), as when a producer gave up on a slow Produce request
and aborted over a new connection. Before the fix the batch was appended after the marker: it
opened a transaction no marker would ever end, and the last stable offset stayed below it
forever (read_committed consumers stuck). Now the Produce is answered INVALID_TXN_STATE and
nothing is appended.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, serving
from tiered_mq import errors
from tiered_mq.broker.handlers import produce as produce_handler
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

PRODUCE = 0
TP = TopicPartition("a", 0)


async def test_batch_of_a_transaction_ended_meanwhile_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    reencode = produce_handler._decoded_checks

    def held(*args: Any) -> Any:
        entered.set()
        release.wait(10)
        return reencode(*args)

    monkeypatch.setattr(produce_handler, "_decoded_checks", held)
    async with serving(tmp_path / "d", **{"transaction.state.log.num.partitions": "1"}) as (
        broker,
        client,
    ):
        await broker.topic_registry.create_topic("a", 1, {"compression.type": "gzip"})
        tc = broker.txn_coordinator
        assert tc is not None
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_partitions("tx", pid, epoch, [TP])
        records = encode_batch(
            [(b"k", b"v", (), 1000)],
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=0,
            is_transactional=True,
        )
        body = {
            "transactional_id": "tx",
            "acks": -1,
            "timeout_ms": 1000,
            "topic_data": [{"name": "a", "partition_data": [{"index": 0, "records": records}]}],
        }
        sent = await client.send(PRODUCE, 8, body)
        # the batch passed the first check and is being re-encoded
        assert await asyncio.to_thread(entered.wait, 10)
        await tc.end_txn("tx", pid, epoch, commit=False)  # its ABORT marker is written now
        release.set()
        got, response = await asyncio.wait_for(client.receive(PRODUCE, 8), 10)

        assert got == sent
        partition = broker.replica_manager.get_partition(TP)
        assert partition.last_stable_offset == partition.high_watermark == 1  # the marker only
        answer = response["responses"][0]["partition_responses"][0]
        assert answer["error_code"] == errors.InvalidTxnStateError.errno
        await _next_transaction_commits(client, pid, epoch)
        assert partition.last_stable_offset == partition.high_watermark


async def _next_transaction_commits(client: Client, pid: int, epoch: int) -> None:
    """The producer goes on: a new transaction on the partition commits normally."""
    add = {
        "v3_and_below_transactional_id": "tx",
        "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": "a", "partitions": [0]}],
    }
    added = await client.call(24, 1, add)
    assert (
        added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"]
        == 0
    )
    end = {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch, "committed": True}
    assert (await client.call(26, 1, end))["error_code"] == 0
