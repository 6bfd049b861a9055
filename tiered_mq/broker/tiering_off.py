"""A start with tiered storage off (``remote.log.storage.system.enable=false``, or no cold URL)
while the metadata still holds tiered topics is refused, as Kafka's broker refuses it
(KAFKA-15267: the topic configs it receives from the store at start go through
``LogConfig.validateRemoteStorageOnlyIfSystemEnabled`` with ``isReceivingConfigFromStore``, a
``ConfigException`` that ends the start).

Why: a tiered partition's records below its local log start offset live only in the cold tier,
while its log start offset stays in the data dir. Started without the cold tier, the broker
answered ListOffsets EARLIEST with that log start offset but every Fetch there with
OFFSET_OUT_OF_RANGE, so a consumer with ``auto.offset.reset=earliest`` reset to it again and
again, for ever; and local retention, bound by an upload offset no uploader would ever move,
deleted nothing more.

Which topics (:func:`tiered_topics`): every topic whose effective ``remote.storage.enable`` (its
own override, else the broker default) is true, except those never tiered (internal and
compacted topics, ``remote_tier.tierable_topic``), whether or not anything was uploaded yet:
Kafka checks the config, not the bucket. A topic whose remote storage was turned off
(``remote.storage.enable=false,remote.log.delete.on.disable=true``, KIP-950) is not one of them.
A broker default of ``remote.storage.enable=true`` with tiered storage off is refused too, with
Kafka's message for a topic configured so on such a broker (its topics would be tiered by the
config yet never uploaded, and this very check would refuse the next start once one exists).

Errors (:class:`TieredStorageDisabledError`, a RuntimeError the ``dev`` command prints as its one
error line, exit status 1): Kafka's sentence, then the topics (the first few and how many),
where the metadata is kept, what to do, and that nothing in the data dir was changed. The check
reads the metadata only; the broker runs it after the coordinator and the dynamic broker configs
are loaded, before the cold tier, any partition or meta.properties is touched (broker.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from tiered_mq.broker.remote_tier import tierable_topic
from tiered_mq.coordination.base import Coordinator
from tiered_mq.errors import InvalidConfigError
from tiered_mq.hot.log_config import LogConfig

KEY: Final = "remote.storage.enable"
_SHOWN: Final = 5  # topics named in the refusal
KAFKA_STORE_MESSAGE: Final = (
    "You have to delete all topics with the property remote.storage.enable=true before "
    "disabling tiered storage cluster-wide"
)
KAFKA_BROKER_MESSAGE: Final = (
    "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with "
    "remote log storage."
)


class TieredStorageDisabledError(RuntimeError):
    """Tiered storage is off but the metadata (or the broker's topic defaults) tiers topics;
    the broker stops before it changes anything."""


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def tiered_topics(
    coordinator: Coordinator, log_config: Callable[[dict[str, str]], LogConfig]
) -> list[str]:
    """The topics of the metadata whose effective config tiers them (module docstring), sorted.
    ``log_config`` merges a topic's overrides with the broker defaults; a topic whose config
    no longer validates counts by its own override (its partitions fail to open later)."""
    found = []
    for name in coordinator.list_topics():
        meta = coordinator.get_topic(name)
        if meta is None:  # deleted meanwhile
            continue
        try:
            config = log_config(meta.configs)
        except (InvalidConfigError, ValueError):
            if _is_true(meta.configs.get(KEY)) and not name.startswith("__"):
                found.append(name)
            continue
        if config.remote_storage_enable and tierable_topic(name, config.cleanup_policy):
            found.append(name)
    return sorted(found)


def check(
    data_dir: Path,
    metadata: str,
    topic_defaults: Mapping[str, str],
    topics: list[str],
    cold_url: str | None,
) -> None:
    """Refuse a start with tiered storage off: raises TieredStorageDisabledError when
    ``topic_defaults`` set ``remote.storage.enable=true`` or ``topics`` (:func:`tiered_topics`)
    is not empty. ``metadata`` says where topics are kept (``zookeeper.connect=...``);
    ``cold_url`` is the one the data dir recorded (cold_tier_record.recorded_url), None if
    none. Reads nothing itself."""
    unchanged = f"Nothing in {data_dir} was changed."
    if _is_true(topic_defaults.get(KEY)):
        raise TieredStorageDisabledError(
            f"{KAFKA_BROKER_MESSAGE} The broker's topic defaults set {KEY}=true while "
            "remote.log.storage.system.enable=false or no cold URL is given: start with tiered "
            f"storage on, or without the default {KEY}=true. {unchanged}"
        )
    if not topics:
        return
    shown = ", ".join(topics[:_SHOWN]) + (", ..." if len(topics) > _SHOWN else "")
    where = f"the cold URL {cold_url}" if cold_url is not None else "a cold URL"
    raise TieredStorageDisabledError(
        f"{KAFKA_STORE_MESSAGE}: {len(topics)} topic(s) in {metadata} have it ({shown}). "
        f"Start with tiered storage on (remote.log.storage.system.enable=true and {where}), "
        "or, on a broker with it on, delete those topics or turn remote storage off on each "
        "with remote.storage.enable=false,remote.log.delete.on.disable=true (which deletes "
        f"their remote data), then disable it cluster-wide. {unchanged}"
    )
