"""TxnOffsetCommit below v2 answers COORDINATOR_NOT_AVAILABLE where v2+ answers
COORDINATOR_LOAD_IN_PROGRESS, as Kafka's KafkaApis maps it (producers from 0.11 to 2.0 could
crash on the loading error, KAFKA-7296)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.conftest import serving
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tiered_mq import errors
from tiered_mq.protocol.api_versions import ApiKey


async def test_a_loading_group_coordinator_is_not_available_below_v2(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        tc = tc_of(broker)
        pid, epoch = await tc.init_producer_id("tx", 60_000)
        await tc.add_offsets("tx", pid, epoch, "g")
        gc = broker.group_coordinator
        assert gc is not None
        gc.loaded = False  # as while __consumer_offsets is read back after a restart
        body = {
            "transactional_id": "tx",
            "group_id": "g",
            "producer_id": pid,
            "producer_epoch": epoch,
            "topics": [
                {"name": "a", "partitions": [{"partition_index": 0, "committed_offset": 5}]}
            ],
        }
        answered = {}
        for version in range(4):
            r = await client.call(ApiKey.TXN_OFFSET_COMMIT, version, body)
            answered[version] = r["topics"][0]["partitions"][0]["error_code"]
        loading = errors.CoordinatorLoadInProgressError.errno
        unavailable = errors.CoordinatorNotAvailableError.errno
        assert answered == {0: unavailable, 1: unavailable, 2: loading, 3: loading}
