"""The hand-written Metadata v0-8 response writer (metadata_codec.py) against the schema-driven
one: the same bytes for every version, a missing field taking its declared default, and the
generic writer's answer or error outside the common case."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiered_mq.protocol import encoder, metadata_codec
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey
from tiered_mq.protocol.codec import decode_response, encode_response
from tiered_mq.protocol.encoder import Writer
from tiered_mq.protocol.header import RequestHeader
from tiered_mq.protocol.messages.metadata import RESPONSE

VERSIONS = range(metadata_codec.MIN_VERSION, metadata_codec.MAX_VERSION + 1)
HEADER = b"\x00\x00\x00\x07"  # response header v0: the correlation id


def _generic(version: int, body: dict[str, Any]) -> bytes:
    w = Writer()
    w.buf += b"\x00\x00\x00\x00"
    w.buf += HEADER
    encoder.message_writer(RESPONSE.fields, version, False)(w, body)
    data = b"".join(bytes(c) for c in w.finish())
    return (len(data) - 4).to_bytes(4, "big", signed=True) + data[4:]


def _ints(bits: int) -> st.SearchStrategy[int]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from([lo, hi, -1, 0]), st.integers(lo, hi))


_TEXT = st.text(st.characters(codec="utf-8"), max_size=20)
_NODES = st.lists(_ints(32), max_size=20)  # past the writer's cached Struct sizes too
_PARTITION = st.fixed_dictionaries(
    {},
    optional={
        "error_code": _ints(16),
        "partition_index": _ints(32),
        "leader_id": _ints(32),
        "leader_epoch": _ints(32),
        "replica_nodes": _NODES,
        "isr_nodes": _NODES,
        "offline_replicas": _NODES,
    },
)
_TOPIC = st.fixed_dictionaries(
    {},
    optional={
        "error_code": _ints(16),
        "name": _TEXT,
        "is_internal": st.booleans(),
        "partitions": st.lists(_PARTITION, max_size=6),
        "topic_authorized_operations": _ints(32),
    },
)
_BROKER = st.fixed_dictionaries(
    {},
    optional={
        "node_id": _ints(32),
        "host": _TEXT,
        "port": _ints(32),
        "rack": st.none() | _TEXT,
    },
)
# every field of every version, any of them left out: a handler fills one dict, the version
# picks what goes out, a missing field takes its default
_BODY = st.fixed_dictionaries(
    {},
    optional={
        "throttle_time_ms": _ints(32),
        "brokers": st.lists(_BROKER, max_size=3),
        "cluster_id": st.none() | _TEXT,
        "controller_id": _ints(32),
        "topics": st.lists(_TOPIC, max_size=6),
        "cluster_authorized_operations": _ints(32),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_BODY)
def test_response_writes_as_the_generic_writer(body: dict[str, Any]) -> None:
    for version in VERSIONS:
        fast = metadata_codec.write_response(version, HEADER, body)
        assert fast is not None
        assert bytes(fast) == _generic(version, body)


def _partition(node: int, index: int) -> dict[str, Any]:
    """A partition entry as the Metadata handler fills it."""
    return {
        "error_code": 0,
        "partition_index": index,
        "leader_id": node,
        "leader_epoch": 3,
        "replica_nodes": [node, 2, 3],
        "isr_nodes": [node, 3],
        "offline_replicas": [],
    }


def _handler_body() -> dict[str, Any]:
    """A response as the Metadata handler fills it: an unknown topic's entry has no
    is_internal, and no entry has topic_authorized_operations unless asked."""
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": 1, "host": "localhost", "port": 9092, "rack": None}],
        "cluster_id": "c1",
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": "t",
                "is_internal": False,
                "partitions": [_partition(1, i) for i in range(3)],
            },
            {"error_code": 3, "name": "missing", "partitions": []},
        ],
        "cluster_authorized_operations": -(2**31),
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_the_broker_encodes_metadata_responses_with_the_hand_writer(
    version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _handler_body()
    calls: list[int] = []
    write = metadata_codec.write_response

    def spy(v: int, header: bytes, b: dict[str, Any]) -> bytearray | None:
        calls.append(v)
        return write(v, header, b)

    monkeypatch.setattr(metadata_codec, "write_response", spy)
    chunks = encode_response(RequestHeader(ApiKey.METADATA, version, 7, "c"), body)
    assert calls == [version]
    frame = b"".join(bytes(c) for c in chunks)
    assert frame == _generic(version, body)
    decoded = decode_response(ApiKey.METADATA, version, frame[4:])
    assert [t["name"] for t in decoded["topics"]] == ["t", "missing"]
    assert decoded["topics"][0]["partitions"][2]["isr_nodes"] == [1, 3]


def test_every_supported_non_flexible_version_and_no_flexible_one_is_covered() -> None:
    lo, hi = SUPPORTED[ApiKey.METADATA]
    assert list(VERSIONS) == [v for v in range(lo, hi + 1) if v not in RESPONSE.flexible]


def _with_partition(**changes: Any) -> dict[str, Any]:
    body = _handler_body()
    body["topics"][0]["partitions"][0].update(changes)
    return body


def _with_topic(**changes: Any) -> dict[str, Any]:
    body = _handler_body()
    body["topics"][0].update(changes)
    return body


@pytest.mark.parametrize(
    "body",
    [
        {**_handler_body(), "throttle_time_ms": 2**31},  # out of range: the generic error
        {**_handler_body(), "controller_id": None},  # null where none is allowed
        {**_handler_body(), "topics": None},
        {**_handler_body(), "brokers": [{"node_id": 1, "host": None, "port": 1}]},
        _with_topic(name=None),
        _with_topic(name="x" * 0x8000),  # longer than an int16 length
        _with_topic(name="\ud800"),  # not encodable
        _with_topic(name=b"t"),  # not a str
        _with_topic(partitions=None),
        _with_topic(partitions=[None]),
        _with_partition(replica_nodes=None),
        _with_partition(isr_nodes=[1, "2"]),
        _with_partition(leader_id=2**31),
        _with_partition(offline_replicas=[2**40]),
        _with_partition(leader_epoch=1.5),
    ],
)
@pytest.mark.parametrize("version", [0, 1, 5, 8])
def test_response_outside_the_common_case_goes_to_the_generic_writer(
    version: int, body: dict[str, Any]
) -> None:
    header = RequestHeader(ApiKey.METADATA, version, 7, "c")
    try:
        expected = _generic(version, body)
    except Exception as e:
        assert metadata_codec.write_response(version, HEADER, body) is None
        with pytest.raises(type(e)):
            encode_response(header, body)
        return
    # fields the version does not carry may be anything: the answer is the generic one
    assert b"".join(bytes(c) for c in encode_response(header, body)) == expected
