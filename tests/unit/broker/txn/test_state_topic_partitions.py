"""The partition count of ``__transaction_state`` is the topic's own once it exists, as in
Kafka: a broker restarted with another ``transaction.state.log.num.partitions`` still finds
every transactional id where it was written, so an open transaction is still open and its
producer id and epoch are kept."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.conftest import start_broker
from tests.unit.broker.txn.test_coordinator import tc_of
from tiered_mq.broker.txn import log_format as fmt
from tiered_mq.broker.txn.state import TxnState
from tiered_mq.topic_partition import TopicPartition

IDS = [f"tx-{i}" for i in range(12)]


async def test_a_changed_partition_count_setting_keeps_every_transactional_id(
    tmp_path: Path,
) -> None:
    broker = await start_broker(tmp_path / "d", **{"transaction.state.log.num.partitions": "4"})
    try:
        await broker.topic_registry.create_topic("a", 1, {})
        tc = tc_of(broker)
        producers = {}
        for txn_id in IDS:
            producers[txn_id] = await tc.init_producer_id(txn_id, 60_000)
            pid, epoch = producers[txn_id]
            await tc.add_partitions(txn_id, pid, epoch, [TopicPartition("a", 0)])
    finally:
        await broker.close()
    for partitions in ("3", "7"):
        broker = await start_broker(
            tmp_path / "d", **{"transaction.state.log.num.partitions": partitions}
        )
        try:
            tc = tc_of(broker)
            found = {t: (m.producer_id, m.producer_epoch) for t, m in tc.txns.items()}
            assert found == producers
            assert all(tc.txns[t].state is TxnState.ONGOING for t in IDS)
            assert tc.num_partitions == 4
            meta = broker.replica_manager.coordinator.get_topic(fmt.TRANSACTION_STATE_TOPIC)
            assert meta is not None and meta.partitions == 4
        finally:
            await broker.close()
