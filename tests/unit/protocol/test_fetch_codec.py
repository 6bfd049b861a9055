"""The hand-written Fetch v4-11 response writer (fetch_codec.py) against the schema-driven one:
the same chunks (equal bytes, the very same FileRegion and big records objects, in the same
places), for every version, and the generic writer's answer or error outside the common case."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiered_mq.protocol import encoder, fetch_codec
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey
from tiered_mq.protocol.codec import decode_response, encode_response
from tiered_mq.protocol.encoder import INLINE_RECORDS_MAX, Chunk, Writer, chunk_size
from tiered_mq.protocol.header import RequestHeader
from tiered_mq.protocol.messages.fetch import RESPONSE
from tiered_mq.record.file_records import FileRegion

VERSIONS = range(fetch_codec.MIN_VERSION, fetch_codec.MAX_VERSION + 1)
HEADER = b"\x00\x00\x00\x07"  # response header v0: the correlation id
# A segment file that cannot be read (BytesIO has no fileno for FileRegion.read's pread): a
# writer that read a region into memory would fail, not pass.
SEGMENT = io.BytesIO()


def _generic(version: int, body: dict[str, Any]) -> list[Chunk]:
    w = Writer()
    w.buf += b"\x00\x00\x00\x00"
    w.buf += HEADER
    encoder.message_writer(RESPONSE.fields, version, False)(w, body)
    chunks = w.finish()
    first = chunks[0]
    assert isinstance(first, bytearray)
    first[:4] = (sum(chunk_size(c) for c in chunks) - 4).to_bytes(4, "big", signed=True)
    return chunks


def _assert_same_chunks(got: list[Chunk], expected: list[Chunk]) -> None:
    """Equal byte buffers; every FileRegion and records object passed through is the same
    object (zero copy), in the same place."""
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        if isinstance(e, bytearray):
            assert isinstance(g, bytearray) and g == e
        else:
            assert g is e


def _ints(bits: int) -> st.SearchStrategy[int]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from([lo, hi, -1, 0]), st.integers(lo, hi))


_REGION = st.builds(
    FileRegion, st.just(SEGMENT), st.integers(0, 2**40), st.integers(0, 3 * INLINE_RECORDS_MAX)
)
_SMALL = st.binary(max_size=40)
# byte strings around the inline limit: copied up to it, their own chunk past it
_BIG = st.integers(INLINE_RECORDS_MAX - 2, INLINE_RECORDS_MAX + 2).map(lambda n: b"r" * n)
_BYTES = st.one_of(
    _SMALL,
    _BIG,
    _SMALL.map(lambda b: memoryview(b)),
    _BIG.map(lambda b: memoryview(bytearray(b))),
    _SMALL.map(bytearray),
)
_PARTS = st.lists(st.one_of(_REGION, _BYTES, st.just(b"")), max_size=4)
_RECORDS = st.one_of(
    st.none(),
    st.just(b""),
    _BYTES,
    _REGION,
    _PARTS,  # a read's parts
    _PARTS.map(tuple),
)
_ABORTED: st.SearchStrategy[list[dict[str, int]] | None] = st.one_of(
    st.none(),
    st.just([]),
    st.lists(st.fixed_dictionaries({"producer_id": _ints(64), "first_offset": _ints(64)})),
)
_PARTITION = st.fixed_dictionaries(
    {
        "partition_index": _ints(32),
        "error_code": _ints(16),
        "high_watermark": _ints(64),
        "last_stable_offset": _ints(64),
        "log_start_offset": _ints(64),
        "aborted_transactions": _ABORTED,
        "preferred_read_replica": _ints(32),
        "records": _RECORDS,
    }
)
_NAME = st.text(st.characters(codec="utf-8"), max_size=20)
_TOPIC = st.fixed_dictionaries({"topic": _NAME, "partitions": st.lists(_PARTITION, max_size=8)})
# every field of every version: a handler fills one dict, the version picks what goes out
_BODY = st.fixed_dictionaries(
    {
        "throttle_time_ms": _ints(32),
        "error_code": _ints(16),
        "session_id": _ints(32),
        "responses": st.one_of(
            st.lists(_TOPIC, max_size=5),
            st.lists(_PARTITION, min_size=40, max_size=60).map(  # one topic, many partitions
                lambda ps: [{"topic": "many", "partitions": ps}]
            ),
        ),
    }
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_BODY)
def test_response_writes_as_the_generic_writer(body: dict[str, Any]) -> None:
    for version in VERSIONS:
        fast = fetch_codec.write_response(version, HEADER, body)
        assert fast is not None
        _assert_same_chunks(fast, _generic(version, body))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_broker_encodes_fetch_responses_with_the_hand_writer(
    version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    region = FileRegion(SEGMENT, 4096, 70)
    body = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
                "topic": "t",
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        "high_watermark": 12,
                        "last_stable_offset": 12,
                        "log_start_offset": 0,
                        "aborted_transactions": None,
                        "preferred_read_replica": -1,
                        "records": [region],
                    }
                ],
            }
        ],
    }
    calls: list[int] = []
    write = fetch_codec.write_response

    def spy(v: int, header: bytes, b: dict[str, Any]) -> list[Chunk] | None:
        calls.append(v)
        return write(v, header, b)

    monkeypatch.setattr(fetch_codec, "write_response", spy)
    chunks = encode_response(RequestHeader(ApiKey.FETCH, version, 7, "c"), body)
    assert calls == [version]
    _assert_same_chunks(chunks, _generic(version, body))
    assert chunks[-1] is region  # sent with sendfile, never read
    payload = b"".join(bytes(c) for c in chunks[:-1] if not isinstance(c, FileRegion))
    head = decode_response(ApiKey.FETCH, version, payload[4:] + b"\x00" * 70)
    assert head["responses"][0]["partitions"][0]["high_watermark"] == 12


def test_every_supported_non_flexible_version_and_no_flexible_one_is_covered() -> None:
    lo, hi = SUPPORTED[ApiKey.FETCH]
    assert list(VERSIONS) == [v for v in range(lo, hi + 1) if v not in RESPONSE.flexible]


def _partition(**changes: Any) -> dict[str, Any]:
    p: dict[str, Any] = {
        "partition_index": 1,
        "error_code": 0,
        "high_watermark": 5,
        "last_stable_offset": 5,
        "log_start_offset": 0,
        "aborted_transactions": [{"producer_id": 3, "first_offset": 1}],
        "preferred_read_replica": -1,
        "records": b"abc",
    }
    p.update(changes)
    return p


def _body(*partitions: dict[str, Any], topic: Any = "t", **changes: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [{"topic": topic, "partitions": list(partitions)}],
    }
    b.update(changes)
    return b


_p_missing_lso = _partition()
del _p_missing_lso["last_stable_offset"]


@pytest.mark.parametrize(
    "body",
    [
        {"responses": [{"topic": "t", "partitions": [{"partition_index": 1}]}]},  # defaults
        _body(_p_missing_lso),
        _body(_partition(aborted_transactions=[{"producer_id": 3}])),  # first_offset default
        _body(_partition(), throttle_time_ms=2**31),  # out of range: the generic error
        _body(_partition(high_watermark=None)),  # null where none is allowed
        _body(_partition(), topic=None),
        _body(_partition(), topic="x" * 0x8000),  # longer than an int16 length
        _body(_partition(), topic="\ud800"),  # not encodable
        _body(_partition(records=[b"a", 5])),  # a records part of another type
        _body(_partition(records=5)),
        _body(_partition(aborted_transactions=[(3, 1)])),
        _body(responses=None),
    ],
)
@pytest.mark.parametrize("version", [4, 7, 11])
def test_response_outside_the_common_case_goes_to_the_generic_writer(
    version: int, body: dict[str, Any]
) -> None:
    assert fetch_codec.write_response(version, HEADER, body) is None
    header = RequestHeader(ApiKey.FETCH, version, 7, "c")
    try:
        expected = _generic(version, body)
    except Exception as e:
        with pytest.raises(type(e)):
            encode_response(header, body)
        return
    _assert_same_chunks(encode_response(header, body), expected)
