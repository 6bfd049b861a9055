"""Topic name rules (Kafka's Topic.validate)."""

from __future__ import annotations

import pytest

from tiered_mq.broker.topic_names import collision_key, validate_topic_name
from tiered_mq.errors import InvalidTopicError


@pytest.mark.parametrize("name", ["a", "orders", "my.topic_1-x", "A" * 249, "__consumer_offsets"])
def test_legal_names(name: str) -> None:
    validate_topic_name(name)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "empty"),
        (".", "cannot be"),
        ("..", "cannot be"),
        ("a" * 250, "249"),
        ("has space", "illegal"),
        ("slash/no", "illegal"),
        ("ümlaut", "illegal"),
    ],
)
def test_illegal_names(name: str, reason: str) -> None:
    with pytest.raises(InvalidTopicError, match=reason):
        validate_topic_name(name)


def test_dot_underscore_collision() -> None:
    assert collision_key("a.b") == collision_key("a_b") == "a_b"
    assert collision_key("a.b") != collision_key("a-b")
