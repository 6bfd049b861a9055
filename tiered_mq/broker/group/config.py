"""Group coordinator settings, by Kafka's broker config names, with Kafka's defaults except:

- ``group.initial.rebalance.delay.ms`` defaults to 300 ms (Kafka: 3000). The delay lets the
  consumers of a freshly started group arrive before the first generation is formed, saving a
  rebalance or two; three seconds is long for a dev broker and for tests, while 300 ms still
  gathers consumers that start together. Set it to 3000 for Kafka's behaviour.

:meth:`GroupConfig.from_broker_config` reads a mapping keyed by Kafka names (``"offsets.topic
.num.partitions"``), an object with snake_case attributes (``offsets_topic_num_partitions``)
or the broker's ``BrokerConfig`` (``get(name)``; a key its ``is_default(name)`` reports as not
overridden takes the default here, so the 300 ms delay holds unless set explicitly).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OFFSETS_TOPIC: str = "__consumer_offsets"


@dataclass(frozen=True, slots=True)
class GroupConfig:
    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offsets_load_buffer_size: int = 5 * 1024 * 1024
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    group_initial_rebalance_delay_ms: int = 300
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_max_size: int = 2_147_483_647

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    def topic_configs(self) -> dict[str, str]:
        """Topic configs of ``__consumer_offsets`` (Kafka's, compacted)."""
        return {
            "cleanup.policy": "compact",
            "compression.type": "producer",
            "segment.bytes": str(self.offsets_topic_segment_bytes),
        }

    @classmethod
    def from_broker_config(cls, config: Any) -> GroupConfig:
        values: dict[str, int] = {}
        for f in dataclasses.fields(cls):
            kafka_name = f.name.replace("_", ".")
            raw: Any = None
            if isinstance(config, Mapping):
                raw = config.get(kafka_name, config.get(f.name))
            elif config is not None:
                is_default = getattr(config, "is_default", None)
                if callable(is_default) and is_default(kafka_name):
                    continue  # the broker's table holds Kafka's default; ours applies
                getter = getattr(config, "get", None)
                raw = getattr(config, f.name, None)
                if raw is None and callable(getter):
                    try:
                        raw = getter(kafka_name)
                    except (KeyError, TypeError):
                        raw = None
            if raw is not None:
                values[f.name] = int(raw)
        return cls(**values)
