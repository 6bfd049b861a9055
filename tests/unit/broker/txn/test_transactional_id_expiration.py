"""Transactional id expiration (Kafka's ``transactional.id.expiration.ms``): an id idle in
Empty/CompleteCommit/CompleteAbort past the expiration is removed with a tombstone in
``__transaction_state``, stays removed after a restart, and comes back as a new producer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.unit.broker.conftest import start_broker
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tiered_mq.broker.broker import Broker
from tiered_mq.broker.txn import log_format as fmt
from tiered_mq.broker.txn.state import TxnState
from tiered_mq.record.records import decode_batches
from tiered_mq.topic_partition import TopicPartition

A0 = TopicPartition("a", 0)
# ids idle for 1 s expire; the removal runs every 100 ms
EXPIRING = {
    **SMALL,
    "transactional.id.expiration.ms": "1000",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "100",
}


def state_records(broker: Broker, txn_id: str) -> list[bytes | None]:
    """The values of every ``__transaction_state`` record of ``txn_id``, in log order."""
    tp = TopicPartition(fmt.TRANSACTION_STATE_TOPIC, fmt.partition_for(txn_id, 2))
    log = broker.replica_manager.local_log(tp)
    buf = b"".join(r.read() for r in log.read(0, 1 << 22).regions)
    return [
        record.value
        for _, records in decode_batches(buf)
        for record in records
        if record.key is not None and fmt.decode_key(record.key) == txn_id
    ]


async def test_idle_ids_expire_with_a_tombstone_and_stay_gone_after_restart(
    tmp_path: Path,
) -> None:
    broker = await start_broker(tmp_path / "d", **EXPIRING)
    try:
        await broker.topic_registry.create_topic("a", 1, {})
        tc = tc_of(broker)
        empty_pid, _ = await tc.init_producer_id("empty", 60_000)
        done_pid, done_epoch = await tc.init_producer_id("done", 60_000)
        await tc.add_partitions("done", done_pid, done_epoch, [A0])
        await tc.end_txn("done", done_pid, done_epoch, commit=True)
        busy_pid, busy_epoch = await tc.init_producer_id("busy", 60_000)
        await tc.add_partitions("busy", busy_pid, busy_epoch, [A0])  # ongoing: never expires
        deadline = time.monotonic() + 5
        while {m.transactional_id for m in tc.list_txns()} != {"busy"}:
            assert time.monotonic() < deadline, tc.list_txns()
            await asyncio.sleep(0.1)
        assert tc.describe_txn("empty") is None and tc.describe_txn("done") is None
        assert tc.txns["busy"].state is TxnState.ONGOING
        for txn_id in ("empty", "done"):
            assert state_records(broker, txn_id)[-1] is None  # the tombstone, last
        assert not tc._locks  # a removed id keeps no lock
    finally:
        await broker.close()

    # a restart replays the tombstones: the ids stay gone, the ongoing one is back
    broker = await start_broker(tmp_path / "d", **SMALL)
    try:
        tc = tc_of(broker)
        assert tc.describe_txn("empty") is None and tc.describe_txn("done") is None
        busy = tc.describe_txn("busy")
        assert busy is not None and busy.state is TxnState.ONGOING
        # the producer comes back: a new producer id at epoch 0, as a new transactional id
        pid, epoch = await tc.init_producer_id("empty", 60_000)
        assert pid not in (empty_pid, done_pid, busy_pid) and epoch == 0
    finally:
        await broker.close()


async def test_an_id_in_use_is_not_expired(tmp_path: Path) -> None:
    """An id whose lock a request holds is left for the next round (Kafka: a pending
    transition); it expires once the request is done."""
    broker = await start_broker(tmp_path / "d", **SMALL, **{"transactional.id.expiration.ms": "1"})
    try:
        tc = tc_of(broker)
        await tc.init_producer_id("tx", 60_000)
        await asyncio.sleep(0.01)
        async with tc._locks.hold("tx"):
            assert await tc.remove_expired_transactional_ids() == []
        assert await tc.remove_expired_transactional_ids() == ["tx"]
        assert tc.describe_txn("tx") is None
    finally:
        await broker.close()
