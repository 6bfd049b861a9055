"""TxnOffsetCommit refuses partitions of topics that do not exist (UNKNOWN_TOPIC_OR_PARTITION,
as Kafka's KafkaApis and as OffsetCommit): before, they were stored on the commit and exported
as ``tiered_mq_consumer_group_offset`` series without lag that nothing but expiration removed,
and a topic created later under the name would have started at the stale offset."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.conftest import serving
from tests.unit.broker.test_metrics import _scrape
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tiered_mq import errors
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.topic_partition import TopicPartition


async def test_offsets_of_missing_topics_and_partitions_are_refused(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("real", 1, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_offsets("tx", pid, epoch, "g")
        body = {
            "transactional_id": "tx",
            "group_id": "g",
            "producer_id": pid,
            "producer_epoch": epoch,
            "topics": [
                {"name": "ghost", "partitions": [{"partition_index": 0, "committed_offset": 7}]},
                {
                    "name": "real",
                    "partitions": [
                        {"partition_index": 0, "committed_offset": 5},
                        {"partition_index": 3, "committed_offset": 9},  # "real" has 1
                    ],
                },
            ],
        }
        r = await client.call(ApiKey.TXN_OFFSET_COMMIT, 3, body)
        answered = {
            (t["name"], p["partition_index"]): p["error_code"]
            for t in r["topics"]
            for p in t["partitions"]
        }
        unknown = errors.UnknownTopicOrPartitionError.errno
        assert answered == {("ghost", 0): unknown, ("real", 0): 0, ("real", 3): unknown}

        await tc.end_txn("tx", pid, epoch, commit=True)
        gc = broker.group_coordinator
        assert gc is not None
        assert {tp: v.offset for tp, v in gc.offsets.fetch("g").items()} == {
            TopicPartition("real", 0): 5
        }
        body_text = await _scrape(broker.metrics)
        exported = [
            line for line in body_text.splitlines() if line.startswith("tiered_mq_consumer_group_")
        ]
        assert exported == [
            'tiered_mq_consumer_group_offset{group="g",partition="0",topic="real"} 5.0',
            'tiered_mq_consumer_group_lag{group="g",partition="0",topic="real"} 0.0',
            'tiered_mq_consumer_group_members{group="g"} 0.0',
        ]
