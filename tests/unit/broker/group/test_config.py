from __future__ import annotations

from pathlib import Path

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.group.config import GroupConfig


def test_defaults_and_kafka_named_mapping() -> None:
    assert GroupConfig().group_initial_rebalance_delay_ms == 300
    assert GroupConfig().offsets_topic_num_partitions == 50
    cfg = GroupConfig.from_broker_config({"offsets.topic.num.partitions": "3"})
    assert cfg.offsets_topic_num_partitions == 3
    assert cfg.offsets_retention_ms == 7 * 24 * 3600 * 1000
    assert cfg.topic_configs()["cleanup.policy"] == "compact"


def test_broker_config_overrides_apply_and_its_defaults_do_not(tmp_path: Path) -> None:
    untouched = GroupConfig.from_broker_config(BrokerConfig(tmp_path))
    assert untouched == GroupConfig()  # the 300 ms delay holds (Kafka's default is 3000)
    overridden = BrokerConfig(
        tmp_path,
        overrides={"group.initial.rebalance.delay.ms": "3000", "offsets.topic.num.partitions": "4"},
    )
    cfg = GroupConfig.from_broker_config(overridden)
    assert cfg.group_initial_rebalance_delay_ms == 3000
    assert cfg.offsets_topic_num_partitions == 4
