"""An empty ``cleanup.policy`` is legal, as in Kafka (``ValidList`` takes an empty list; the
remote storage check names "cleanup.policy being an empty list"): neither delete nor compact. It
used to be INVALID_CONFIG, also when IncrementalAlterConfigs SUBTRACT removed the last policy.
Kafka's ``deleteOldSegments`` then keeps an untiered log whole, while a tiered log's local copies
still go by local retention; DeleteRecords stays POLICY_VIOLATION (``deleteRecordsOnLeader``
wants ``delete``). Requests on an in-process broker, and
the retention of a real local log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.broker.conftest import Client, start_broker
from tests.unit.hot.helpers import make_batch
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

CREATE_TOPICS, DELETE_RECORDS, DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 19, 21, 32, 44
POLICY_VIOLATION, SUBTRACT = 44, 3


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    broker = await start_broker(tmp_path)
    try:
        c = await Client.connect(broker.port)
        try:
            yield c
        finally:
            await c.close()
    finally:
        await broker.close()


async def create(client: Client, name: str, configs: dict[str, str]) -> int:
    topic = {
        "name": name,
        "num_partitions": 1,
        "replication_factor": 1,
        "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in configs.items()],
    }
    body = {"topics": [topic], "timeout_ms": 5000, "validate_only": False}
    code: int = (await client.call(CREATE_TOPICS, 4, body))["topics"][0]["error_code"]
    return code


async def policy(client: Client, topic: str) -> str:
    resource = {
        "resource_type": 2,
        "resource_name": topic,
        "configuration_keys": ["cleanup.policy"],
    }
    body = {"resources": [resource], "include_synonyms": False, "include_documentation": False}
    value: str = (await client.call(DESCRIBE_CONFIGS, 3, body))["results"][0]["configs"][0]["value"]
    return value


async def test_an_empty_policy_is_accepted(client: Client) -> None:
    assert await create(client, "kept", {"cleanup.policy": ""}) == 0
    assert await policy(client, "kept") == ""
    assert await create(client, "emptied", {}) == 0
    change = {"name": "cleanup.policy", "config_operation": SUBTRACT, "value": "delete"}
    resource = {"resource_type": 2, "resource_name": "emptied", "configs": [change]}
    answer: dict[str, Any] = await client.call(
        INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [resource], "validate_only": False}
    )
    assert answer["responses"][0]["error_code"] == 0
    assert await policy(client, "emptied") == ""
    partitions = [{"partition_index": 0, "offset": -1}]
    body = {"topics": [{"name": "kept", "partitions": partitions}], "timeout_ms": 5000}
    deleted = await client.call(DELETE_RECORDS, 1, body)
    assert deleted["topics"][0]["partitions"][0]["error_code"] == POLICY_VIOLATION


def old_segments(dir: Path, **props: str) -> LocalLog:
    config = LogConfig.from_properties({"segment.bytes": str(len(make_batch(3))), **props})
    log = LocalLog.open(dir, config)
    for i in range(4):  # one batch a segment: the fourth rolls the third
        log.append_as_leader(make_batch(3, timestamp=1000, seed=i), 0)
    assert [s.base_offset for s in log.segments()] == [0, 3, 6, 9]
    return log


def test_an_untiered_log_is_kept_a_tiered_one_goes_by_local_retention(tmp_path: Path) -> None:
    now = 10**9
    untiered = old_segments(tmp_path / "u-0", **{"cleanup.policy": "", "retention.ms": "1"})
    assert untiered.apply_retention(now) == []
    assert untiered.log_start_offset == 0
    tiered = old_segments(
        tmp_path / "t-0",
        **{"cleanup.policy": "", "remote.storage.enable": "true", "local.retention.ms": "1"},
    )
    deleted = tiered.apply_retention(now, upper_bound_offset=6)  # 0-5 uploaded
    assert [s.base_offset for s in deleted] == [0, 3]
