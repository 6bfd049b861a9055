"""The bound of produce's look-up (``lookup_in_rounds``' ``unreachable_timeout``): while no
broker is reached it gives up early; a broker reached but slow (``_TIMED_OUT``) gets the whole
timeout (produce's ``--max-block-ms``)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from tiered_mq.client._lookup import lookup_in_rounds
from tiered_mq.client.errors import ClientError


def fails_with(code: int) -> KafkaException:
    return KafkaException(KafkaError(code))


def test_no_broker_reached_gives_up_at_the_unreachable_bound() -> None:
    def call(seconds: float) -> str:
        time.sleep(0.05)
        raise fails_with(KafkaError._TRANSPORT)

    started = time.monotonic()
    with pytest.raises(ClientError) as raised:
        lookup_in_rounds(call, 30.0, "metadata for t", unreachable_timeout=0.5)
    assert raised.value.name == "_TRANSPORT"
    assert 0.5 <= time.monotonic() - started < 2


def test_a_reached_broker_gets_the_whole_timeout() -> None:
    calls: list[float] = []

    def call(seconds: float) -> str:
        calls.append(seconds)
        if len(calls) == 1:
            time.sleep(0.8)  # past the unreachable bound: connected, no answer yet
            raise fails_with(KafkaError._TIMED_OUT)
        return "metadata"

    assert lookup_in_rounds(call, 30.0, "metadata for t", unreachable_timeout=0.5) == "metadata"
    assert calls[1] > 25  # the rest of the 30 s in one call
