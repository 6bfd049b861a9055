"""A producer fenced by a newer epoch of its transactional id is answered INVALID_PRODUCER_EPOCH
by AddPartitionsToTxn, AddOffsetsToTxn and EndTxn v0-1 and PRODUCER_FENCED from v2, as Kafka's
KafkaApis answers it (the older versions predate the code, KIP-588)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.conftest import serving
from tests.unit.broker.txn.test_coordinator import SMALL, tc_of
from tiered_mq import errors
from tiered_mq.protocol.api_versions import ApiKey


async def test_a_fenced_producer_is_told_so_from_v2(tmp_path: Path) -> None:
    async with serving(tmp_path / "d", **SMALL) as (broker, client):
        await broker.topic_registry.create_topic("a", 1, {})
        tc = tc_of(broker)
        pid, old_epoch = await tc.init_producer_id("tx", 60_000)
        _, new_epoch = await tc.init_producer_id("tx", 60_000)  # a new instance fences it
        assert new_epoch > old_epoch
        ids = {"transactional_id": "tx", "producer_id": pid, "producer_epoch": old_epoch}
        partitions = {
            "v3_and_below_transactional_id": "tx",
            "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": old_epoch,
            "v3_and_below_topics": [{"name": "a", "partitions": [0]}],
        }
        answered: dict[str, dict[int, int]] = {"add_partitions": {}, "add_offsets": {}, "end": {}}
        for version in range(3):
            r = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, version, partitions)
            topic = r["results_by_topic_v3_and_below"][0]
            answered["add_partitions"][version] = topic["results_by_partition"][0][
                "partition_error_code"
            ]
            r = await client.call(ApiKey.ADD_OFFSETS_TO_TXN, version, {**ids, "group_id": "g"})
            answered["add_offsets"][version] = r["error_code"]
            r = await client.call(ApiKey.END_TXN, version, {**ids, "committed": True})
            answered["end"][version] = r["error_code"]
        old, fenced = errors.InvalidProducerEpochError.errno, errors.ProducerFencedError.errno
        for api, codes in answered.items():
            assert codes == {0: old, 1: old, 2: fenced}, api
