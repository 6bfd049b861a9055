from __future__ import annotations

import pytest

from tiered_mq.client.config import (
    BOOTSTRAP_ENV,
    ConsumerConfig,
    DeliverySemantics,
    ProducerConfig,
    default_bootstrap,
)


def test_default_bootstrap_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BOOTSTRAP_ENV, raising=False)
    assert default_bootstrap() == "localhost:9092"
    monkeypatch.setenv(BOOTSTRAP_ENV, "h1:1,h2:2")
    assert default_bootstrap() == "h1:1,h2:2"
    assert ProducerConfig().bootstrap_servers == "h1:1,h2:2"


def test_producer_at_most_once_never_resends() -> None:
    conf = ProducerConfig(bootstrap_servers="b:1", semantics="at-most-once").to_librdkafka()  # type: ignore[arg-type]
    assert conf["acks"] == "1"
    assert conf["retries"] == 0
    assert conf["enable.idempotence"] is False
    assert "transactional.id" not in conf


def test_producer_at_least_once_is_default() -> None:
    cfg = ProducerConfig(bootstrap_servers="b:1")
    assert cfg.semantics is DeliverySemantics.AT_LEAST_ONCE
    conf = cfg.to_librdkafka()
    assert conf["acks"] == "all"
    assert "retries" not in conf
    assert ProducerConfig(idempotent=True).to_librdkafka()["enable.idempotence"] is True


def test_producer_exactly_once_is_transactional() -> None:
    conf = ProducerConfig(
        semantics=DeliverySemantics.EXACTLY_ONCE, transactional_id="tx-1"
    ).to_librdkafka()
    assert conf["enable.idempotence"] is True
    assert conf["transactional.id"] == "tx-1"
    assert conf["acks"] == "all"
    with pytest.raises(ValueError, match="transactional_id"):
        ProducerConfig(semantics=DeliverySemantics.EXACTLY_ONCE)
    with pytest.raises(ValueError, match="only meaningful"):
        ProducerConfig(transactional_id="tx-1")


def test_producer_rejects_unknown_compression_and_extra_wins() -> None:
    with pytest.raises(ValueError, match="compression"):
        ProducerConfig(compression="brotli")  # type: ignore[arg-type]
    conf = ProducerConfig(compression="zstd", extra={"acks": "0"}).to_librdkafka()
    assert conf["compression.type"] == "zstd"
    assert conf["acks"] == "0"


@pytest.mark.parametrize(
    ("semantics", "auto_commit", "isolation"),
    [
        ("at-most-once", False, "read_uncommitted"),
        ("at-least-once", True, "read_uncommitted"),
        ("exactly-once", False, "read_committed"),
    ],
)
def test_consumer_presets(semantics: str, auto_commit: bool, isolation: str) -> None:
    conf = ConsumerConfig(group_id="g", semantics=semantics).to_librdkafka()  # type: ignore[arg-type]
    assert conf["enable.auto.commit"] is auto_commit
    assert conf["enable.auto.offset.store"] is False
    assert conf["isolation.level"] == isolation
    assert conf["group.id"] == "g"


def test_groupless_consumer_never_auto_commits() -> None:
    cfg = ConsumerConfig(client_id="c")
    assert not cfg.commits
    conf = cfg.to_librdkafka()
    assert conf["enable.auto.commit"] is False
    assert conf["group.id"] == "c-nogroup"


def test_unknown_semantics_rejected() -> None:
    with pytest.raises(ValueError):
        ConsumerConfig(semantics="twice")  # type: ignore[arg-type]


def test_consumer_backs_off_20_ms_not_librdkafkas_second_when_its_queue_is_full() -> None:
    assert ConsumerConfig().to_librdkafka()["fetch.queue.backoff.ms"] == 20
    conf = ConsumerConfig(fetch_queue_backoff_ms=1000).to_librdkafka()
    assert conf["fetch.queue.backoff.ms"] == 1000
    conf = ConsumerConfig(extra={"fetch.queue.backoff.ms": 5}).to_librdkafka()
    assert conf["fetch.queue.backoff.ms"] == 5
