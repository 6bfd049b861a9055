"""Error codes counted in responses as Kafka's AbstractResponse.errorCounts() counts them."""

from __future__ import annotations

import pytest

from tiered_mq.errors import UnsupportedVersionError
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey
from tiered_mq.protocol.error_counts import error_counter
from tiered_mq.protocol.messages import RESPONSES

UNKNOWN_TOPIC_OR_PARTITION = 3
OFFSET_OUT_OF_RANGE = 1
LEADER_NOT_AVAILABLE = 5


def counts(api_key: int, version: int, body: dict[str, object]) -> dict[int, int]:
    got: dict[int, int] = {}
    error_counter(api_key, version)(body, got)
    return got


def test_produce_counts_one_code_per_partition_none_included() -> None:
    body = {
        "responses": [
            {
                "name": "a",
                "partition_responses": [
                    {"index": 0, "error_code": UNKNOWN_TOPIC_OR_PARTITION},
                    {"index": 1, "error_code": 0},
                    {"index": 2},  # omitted: encoded as 0, counted as NONE
                ],
            },
            {"name": "b", "partition_responses": [{"index": 0, "error_code": 0}]},
        ],
        "throttle_time_ms": 0,
    }
    assert counts(ApiKey.PRODUCE, 8, body) == {UNKNOWN_TOPIC_OR_PARTITION: 1, 0: 3}


def test_fetch_counts_its_top_level_error_and_each_partition() -> None:
    body = {
        "error_code": 0,
        "responses": [
            {
                "topic": "a",
                "partitions": [
                    {"partition_index": 0, "error_code": OFFSET_OUT_OF_RANGE, "records": b""}
                ],
            }
        ],
    }
    assert counts(ApiKey.FETCH, 11, body) == {0: 1, OFFSET_OUT_OF_RANGE: 1}
    assert counts(ApiKey.FETCH, 4, body) == {OFFSET_OUT_OF_RANGE: 1}  # no top-level error


def test_metadata_counts_topic_and_partition_errors() -> None:
    body = {
        "brokers": [],
        "topics": [
            {"name": "gone", "error_code": UNKNOWN_TOPIC_OR_PARTITION, "partitions": []},
            {
                "name": "t",
                "error_code": 0,
                "partitions": [{"error_code": 0}, {"error_code": LEADER_NOT_AVAILABLE}],
            },
        ],
    }
    assert counts(ApiKey.METADATA, 8, body) == {
        UNKNOWN_TOPIC_OR_PARTITION: 1,
        0: 2,
        LEADER_NOT_AVAILABLE: 1,
    }


def test_create_topics_counts_the_topic_error_not_the_config_error() -> None:
    body = {
        "topics": [
            {"name": "t", "error_code": 0, "topic_config_error_code": 40, "configs": []},
        ]
    }
    assert counts(ApiKey.CREATE_TOPICS, 5, body) == {0: 1}


@pytest.mark.parametrize("api_key", sorted(SUPPORTED))
def test_every_supported_response_has_a_counter(api_key: int) -> None:
    """A response of defaults counts only NONEs (every version compiles)."""
    low, high = SUPPORTED[api_key]
    for version in range(low, high + 1):
        if version in RESPONSES[api_key].valid:
            got = counts(api_key, version, RESPONSES[api_key].defaults(version))
            assert set(got) <= {0}


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(UnsupportedVersionError):
        error_counter(ApiKey.PRODUCE, 99)
