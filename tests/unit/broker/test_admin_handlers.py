"""Metadata, ApiVersions, topic admin, configs, producer ids, transactions, leader epochs."""

from __future__ import annotations

from typing import Any

from tests.unit.broker.conftest import Client
from tiered_mq.broker.broker import Broker
from tiered_mq.protocol.api_versions import SUPPORTED


def topic_req(name: str, partitions: int = 1, rf: int = 1, **configs: str) -> dict[str, Any]:
    return {
        "topics": [
            {
                "name": name,
                "num_partitions": partitions,
                "replication_factor": rf,
                "configs": [{"name": k.replace("_", "."), "value": v} for k, v in configs.items()],
            }
        ],
        "timeout_ms": 5000,
    }


async def create(client: Client, name: str, partitions: int = 1, **configs: str) -> dict[str, Any]:
    r = await client.call(19, 4, topic_req(name, partitions, **configs))
    return r["topics"][0]  # type: ignore[no-any-return]


async def test_api_versions_advertises_the_table(client: Client) -> None:
    r = await client.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    keys = {k["api_key"]: (k["min_version"], k["max_version"]) for k in r["api_keys"]}
    assert r["error_code"] == 0
    assert keys[0] == (0, 8) and keys[1] == (4, 11) and keys[18] == SUPPORTED[18]
    assert keys[3] == (0, 8) and keys[22] == (0, 1)


async def test_metadata_auto_creates_with_num_partitions(client: Client, broker: Broker) -> None:
    r = await client.call(3, 8, {"topics": [{"name": "auto"}], "allow_auto_topic_creation": True})
    t = r["topics"][0]
    assert t["error_code"] == 0 and len(t["partitions"]) == 1
    p = t["partitions"][0]
    assert (p["leader_id"], p["leader_epoch"], p["isr_nodes"]) == (0, 0, [0])
    assert r["controller_id"] == 0 and r["brokers"][0]["port"] == broker.port
    r = await client.call(3, 8, {"topics": [{"name": "nope"}], "allow_auto_topic_creation": False})
    assert r["topics"][0]["error_code"] == 3
    r = await client.call(3, 8, {"topics": [{"name": "bad name"}]})
    assert r["topics"][0]["error_code"] == 17
    r = await client.call(3, 1, {"topics": None})
    assert "auto" in {t["name"] for t in r["topics"]}


async def test_create_topic_errors_are_clear(client: Client) -> None:
    assert (await create(client, "ok", 2))["error_code"] == 0
    dup = await create(client, "ok")
    assert dup["error_code"] == 36
    bad = await create(client, "x" * 250)
    assert bad["error_code"] == 17 and "249" in bad["error_message"]
    cfg = await create(client, "c", segment_bytes="lots")
    assert cfg["error_code"] == 40 and "segment.bytes" in cfg["error_message"]
    unknown = await create(client, "c2", no_such_key="1")
    assert unknown["error_code"] == 40 and "no.such.key" in unknown["error_message"]
    r = await client.call(19, 4, topic_req("rf", 1, rf=3))
    assert r["topics"][0]["error_code"] == 38
    r = await client.call(19, 4, topic_req("zero", 0))
    assert r["topics"][0]["error_code"] == 37
    r = await client.call(19, 4, {**topic_req("v", 1), "validate_only": True})
    assert r["topics"][0]["error_code"] == 0
    meta = await client.call(3, 8, {"topics": [{"name": "v"}], "allow_auto_topic_creation": False})
    assert meta["topics"][0]["error_code"] == 3


async def test_create_partitions_and_delete_topics(client: Client) -> None:
    await create(client, "grow", 1)
    r = await client.call(
        37,
        1,
        {
            "topics": [{"name": "grow", "count": 3, "assignments": None}],
            "timeout_ms": 1000,
            "validate_only": False,
        },
    )
    assert r["results"][0]["error_code"] == 0
    r = await client.call(
        37,
        1,
        {
            "topics": [{"name": "grow", "count": 2, "assignments": None}],
            "timeout_ms": 1000,
            "validate_only": False,
        },
    )
    assert r["results"][0]["error_code"] == 37
    meta = await client.call(3, 8, {"topics": [{"name": "grow"}]})
    assert len(meta["topics"][0]["partitions"]) == 3
    r = await client.call(20, 3, {"topic_names": ["grow", "missing"], "timeout_ms": 1000})
    assert [x["error_code"] for x in r["responses"]] == [0, 3]
    meta = await client.call(
        3, 8, {"topics": [{"name": "grow"}], "allow_auto_topic_creation": False}
    )
    assert meta["topics"][0]["error_code"] == 3


async def test_a_huge_partition_count_is_refused_before_anything_is_built(
    client: Client, broker: Broker
) -> None:
    """Kafka's limit of 10,000 new partitions per request (POLICY_VIOLATION): 2**31-1
    partitions, even with validate_only, used to build an assignment per partition, blocking
    the event loop while memory grew by gigabytes."""
    policy_violation = 44
    for validate_only in (True, False):
        r = await client.call(
            19, 4, {**topic_req("huge", 2**31 - 1), "validate_only": validate_only}
        )
        (t,) = r["topics"]
        assert t["error_code"] == policy_violation
        assert "Excessively large number of partitions" in t["error_message"]
    # the limit is per request: two topics of 6,000 are refused together, each alone is fine
    both = topic_req("a", 6000)["topics"] + topic_req("b", 6000)["topics"]
    r = await client.call(19, 4, {"topics": both, "timeout_ms": 5000, "validate_only": True})
    assert [t["error_code"] for t in r["topics"]] == [policy_violation] * 2
    r = await client.call(19, 4, {**topic_req("a", 6000), "validate_only": True})
    assert r["topics"][0]["error_code"] == 0
    await create(client, "grow", 1)
    for count in (2**31 - 1, 10_002):
        r = await client.call(
            37,
            1,
            {
                "topics": [{"name": "grow", "count": count, "assignments": None}],
                "timeout_ms": 1000,
                "validate_only": True,
            },
        )
        assert r["results"][0]["error_code"] == policy_violation
    assert "huge" not in broker.coordinator.list_topics()  # nothing was made
    meta = broker.coordinator.get_topic("grow")
    assert meta is not None and meta.partitions == 1


async def test_describe_and_alter_configs(client: Client) -> None:
    await create(client, "cfg", retention_ms="1000")

    async def describe() -> dict[str, dict[str, Any]]:
        r = await client.call(
            32,
            3,
            {
                "resources": [
                    {"resource_type": 2, "resource_name": "cfg", "configuration_keys": None}
                ],
                "include_synonyms": False,
                "include_documentation": False,
            },
        )
        assert r["results"][0]["error_code"] == 0
        return {c["name"]: c for c in r["results"][0]["configs"]}

    configs = await describe()
    assert configs["retention.ms"]["value"] == "1000"
    assert configs["retention.ms"]["config_source"] == 1
    assert configs["segment.bytes"]["config_source"] == 5
    assert configs["segment.bytes"]["value"] == "1073741824"

    r = await client.call(
        44,
        0,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": "cfg",
                    "configs": [
                        {"name": "segment.bytes", "config_operation": 0, "value": "100000"},
                        {"name": "retention.ms", "config_operation": 1, "value": None},
                    ],
                }
            ],
            "validate_only": False,
        },
    )
    assert r["responses"][0]["error_code"] == 0
    configs = await describe()
    assert configs["segment.bytes"]["value"] == "100000"
    assert configs["retention.ms"]["config_source"] == 5

    r = await client.call(
        33,
        1,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": "cfg",
                    "configs": [{"name": "cleanup.policy", "value": "sideways"}],
                }
            ],
            "validate_only": False,
        },
    )
    assert r["responses"][0]["error_code"] == 40
    assert "cleanup.policy" in r["responses"][0]["error_message"]

    r = await client.call(
        32,
        1,
        {
            "resources": [
                {"resource_type": 4, "resource_name": "0", "configuration_keys": ["num.partitions"]}
            ],
            "include_synonyms": True,
        },
    )
    broker_cfg = r["results"][0]["configs"]
    assert [(c["name"], c["value"], c["config_source"]) for c in broker_cfg] == [
        ("num.partitions", "1", 5)
    ]


async def test_init_producer_id_idempotent_and_transactional(client: Client) -> None:
    a = await client.call(22, 1, {"transactional_id": None, "transaction_timeout_ms": 1000})
    b = await client.call(22, 1, {"transactional_id": None, "transaction_timeout_ms": 1000})
    assert a["error_code"] == b["error_code"] == 0
    assert a["producer_id"] != b["producer_id"] and a["producer_epoch"] == 0
    t = await client.call(22, 1, {"transactional_id": "tx", "transaction_timeout_ms": 1000})
    assert t["error_code"] == 0 and t["producer_epoch"] == 0
    again = await client.call(22, 1, {"transactional_id": "tx", "transaction_timeout_ms": 1000})
    assert again["producer_id"] == t["producer_id"] and again["producer_epoch"] == 1
    # EndTxn with a producer id that is not the transactional id's: INVALID_PRODUCER_ID_MAPPING
    r = await client.call(
        26,
        1,
        {"transactional_id": "tx", "producer_id": t["producer_id"] + 1, "producer_epoch": 1,
         "committed": True},
    )  # fmt: skip
    assert r["error_code"] == 49
    # partitions of an unknown topic: UNKNOWN_TOPIC_OR_PARTITION
    r = await client.call(
        24,
        1,
        {
            "v3_and_below_transactional_id": "tx",
            "v3_and_below_producer_id": t["producer_id"],
            "v3_and_below_producer_epoch": 1,
            "v3_and_below_topics": [{"name": "a", "partitions": [0, 1]}],
        },
    )
    results = r["results_by_topic_v3_and_below"][0]["results_by_partition"]
    assert [p["partition_error_code"] for p in results] == [3, 3]


async def test_offset_for_leader_epoch(client: Client) -> None:
    await create(client, "e")
    r = await client.call(
        23,
        3,
        {
            "replica_id": -1,
            "topics": [
                {
                    "topic": "e",
                    "partitions": [
                        {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0},
                        {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 4},
                    ],
                }
            ],
        },
    )
    got = [(p["leader_epoch"], p["end_offset"]) for p in r["topics"][0]["partitions"]]
    assert got == [(0, 0), (-1, -1)]


async def test_dot_underscore_collision_is_refused(client: Client) -> None:
    assert (await create(client, "a.b"))["error_code"] == 0
    clash = await create(client, "a_b")
    assert clash["error_code"] == 17 and "collides" in clash["error_message"]


async def test_create_topics_v5_describes_the_topic_and_v7_gives_its_id(
    client: Client, broker: Broker
) -> None:
    r = await client.call(19, 7, topic_req("described", 3, retention_ms="1000"))
    t = r["topics"][0]
    assert (t["error_code"], t["num_partitions"], t["replication_factor"]) == (0, 3, 1)
    configs = {c["name"]: (c["value"], c["config_source"]) for c in t["configs"]}
    assert configs["retention.ms"] == ("1000", 1)  # DYNAMIC_TOPIC_CONFIG
    assert configs["segment.bytes"] == ("1073741824", 5)  # DEFAULT_CONFIG
    meta = broker.topic_registry.get_topic("described")
    assert meta is not None and t["topic_id"].hex == meta.topic_id
    r = await client.call(19, 5, {**topic_req("checked", 2), "validate_only": True})
    t = r["topics"][0]
    assert (t["error_code"], t["num_partitions"], len(t["configs"])) == (0, 2, len(configs))
    assert broker.topic_registry.get_topic("checked") is None
    r = await client.call(19, 6, topic_req("described"))
    t = r["topics"][0]
    assert (t["error_code"], t["num_partitions"], t["configs"]) == (36, -1, None)


async def test_describe_configs_synonyms_list_the_chain_most_specific_first(
    client: Client, broker: Broker
) -> None:
    broker.config.set("log.retention.ms", "5000")  # as --config log.retention.ms=5000 does
    await create(client, "syn", 1, retention_ms="1000")
    r = await client.call(
        32,
        3,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": "syn",
                    "configuration_keys": ["retention.ms", "segment.bytes"],
                }
            ],
            "include_synonyms": True,
            "include_documentation": False,
        },
    )
    chains = {
        c["name"]: [(s["name"], s["value"], s["source"]) for s in c["synonyms"]]
        for c in r["results"][0]["configs"]
    }
    assert chains == {
        "retention.ms": [
            ("retention.ms", "1000", 1),
            ("log.retention.ms", "5000", 4),
            ("log.retention.hours", "168", 5),  # Kafka: the default is on .hours
        ],
        "segment.bytes": [("log.segment.bytes", "1073741824", 5)],
    }
