"""Headers, the ApiVersions fallback, version support, records chunks and malformed input."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest

from tiered_mq.errors import InvalidRequestError, KafkaError, UnsupportedVersionError
from tiered_mq.protocol import codec
from tiered_mq.protocol.api_versions import SUPPORTED, ApiKey, advertised, is_supported
from tiered_mq.protocol.codec import Support, classify
from tiered_mq.protocol.encoder import INLINE_RECORDS_MAX
from tiered_mq.protocol.header import RequestHeader, decode_request_header
from tiered_mq.protocol.messages import REQUESTS
from tiered_mq.record.file_records import FileRegion


def _body(frame: bytes) -> tuple[RequestHeader, memoryview]:
    view = memoryview(frame)[4:]
    header, offset = decode_request_header(view)
    return header, view[offset:]


def _join(chunks: list) -> bytes:
    return b"".join(c.read() if isinstance(c, FileRegion) else bytes(c) for c in chunks)


# ---------------------------------------------------------------- ApiVersions fallback


def test_fallback_bytes_exactly() -> None:
    lo, hi = SUPPORTED[ApiKey.API_VERSIONS]
    expected = (
        struct.pack(">i", 16)  # size: header 4 + error 2 + count 4 + one entry 6
        + struct.pack(">i", 0x01020304)  # response header v0: correlation id only
        + struct.pack(">h", 35)  # UNSUPPORTED_VERSION
        + struct.pack(">i", 1)
        + struct.pack(">hhh", 18, lo, hi)  # no throttle_time_ms
    )
    assert codec.api_versions_fallback(0x01020304) == expected
    assert (lo, hi) == (0, 3)


def test_fallback_parses_as_clients_do() -> None:
    frame = codec.api_versions_fallback(7)
    # A client that asked for v4 parses an erroneous response as v0.
    decoded = codec.decode_response(ApiKey.API_VERSIONS, 3, frame[4:])
    assert decoded["error_code"] == 35
    assert decoded["api_keys"] == [{"api_key": 18, "min_version": 0, "max_version": 3}]
    kp = pytest.importorskip("kafka.protocol.metadata")
    obj = kp.ApiVersionsResponse.decode(frame[4:], version=3, header=True)
    assert obj.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in obj.api_keys] == [(18, 0, 3)]


def test_kafka_python_api_versions_v4_gets_the_fallback() -> None:
    kp = pytest.importorskip("kafka.protocol.metadata")
    request = kp.ApiVersionsRequest(
        version=4, client_software_name="kafka-python", client_software_version="3"
    )
    request.with_header(correlation_id=11, client_id="kp")
    frame = bytes(request.encode(header=True, framed=True))
    header, _ = _body(frame)
    assert header == RequestHeader(18, 4, 11, "kp")
    assert classify(header) is Support.UNSUPPORTED_VERSION
    answer = codec.api_versions_fallback(header.correlation_id)
    obj = kp.ApiVersionsResponse.decode(answer[4:], version=4, header=True)
    assert obj.error_code == 35 and obj.api_keys[0].max_version == 3


def test_erroneous_api_versions_response_is_v0_at_any_version() -> None:
    header = RequestHeader(ApiKey.API_VERSIONS, 3, 9, None)
    frame = _join(codec.encode_response(header, {"error_code": 35, "api_keys": []}))
    assert frame == struct.pack(">iihi", 10, 9, 35, 0)


def test_api_versions_v3_response_uses_header_v0() -> None:
    header = RequestHeader(ApiKey.API_VERSIONS, 3, 5, None)
    frame = _join(codec.encode_response(header, {"api_keys": advertised([18])}))
    # correlation id, then straight into the body: error_code 0, compact array of 1 entry (2)
    assert frame[4:8] == struct.pack(">i", 5)
    assert frame[8:11] == b"\x00\x00\x02"


# ---------------------------------------------------------------- support


@pytest.mark.parametrize(
    ("api_key", "version", "support"),
    [
        (ApiKey.FETCH, 11, Support.SUPPORTED),
        (ApiKey.PRODUCE, 0, Support.SUPPORTED),
        (ApiKey.FETCH, 3, Support.UNSUPPORTED_VERSION),
        (ApiKey.FETCH, 12, Support.UNSUPPORTED_VERSION),
        (ApiKey.API_VERSIONS, 4, Support.UNSUPPORTED_VERSION),
        (ApiKey.OFFSET_FETCH, 7, Support.SUPPORTED),  # require_stable (KIP-447)
        (ApiKey.OFFSET_FETCH, 8, Support.UNSUPPORTED_VERSION),  # several groups: not served
        (4, 0, Support.UNKNOWN_API),  # LeaderAndIsr: inter-broker, not served
        (ApiKey.WRITE_TXN_MARKERS, 1, Support.SUPPORTED),  # KIP-664's admin abort
        (ApiKey.WRITE_TXN_MARKERS, 2, Support.UNSUPPORTED_VERSION),  # KIP-890's v2
        (5, 0, Support.UNKNOWN_API),  # StopReplica: inter-broker, not served
        (-1, 0, Support.UNKNOWN_API),
        (999, 0, Support.UNKNOWN_API),
    ],
)
def test_classify(api_key: int, version: int, support: Support) -> None:
    header = RequestHeader(api_key, version, 1, None)
    assert classify(header) is support
    assert is_supported(api_key, version) == (support is Support.SUPPORTED)
    if support is not Support.SUPPORTED:
        with pytest.raises(UnsupportedVersionError):
            codec.decode_request(header, memoryview(b""))


def test_supported_table_matches_declarations() -> None:
    assert set(SUPPORTED) == set(REQUESTS)
    for key, (lo, hi) in SUPPORTED.items():
        assert (REQUESTS[key].valid.lo, REQUESTS[key].valid.hi) == (lo, hi)
    assert advertised([0, 1, 4])[0] == {"api_key": 0, "min_version": 0, "max_version": 8}
    assert [e["api_key"] for e in advertised([1, 0, 4])] == [0, 1]


# ---------------------------------------------------------------- headers


def test_request_header_v1_null_client_id() -> None:
    frame = codec.encode_request(ApiKey.METADATA, 4, 42, None, {"topics": None})
    header, body = _body(frame)
    assert header == RequestHeader(3, 4, 42, None)
    assert codec.decode_request(header, body)["topics"] is None


def test_request_header_v2_skips_tagged_fields() -> None:
    body = b"\x05kcat\x062.0.2\x00"  # compact strings (length + 1) + no tagged fields
    hdr = struct.pack(">hhih", 18, 3, 77, 4) + b"rdkf"
    tagged = b"\x01\x05\x03abc"  # one unknown tagged field (tag 5, 3 bytes)
    frame = memoryview(hdr + tagged + body)
    header, offset = decode_request_header(frame)
    assert header == RequestHeader(18, 3, 77, "rdkf")
    request = codec.decode_request(header, frame[offset:])
    assert request == {"client_software_name": "kcat", "client_software_version": "2.0.2"}


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00\x03\x00",
        struct.pack(">hhih", 3, 1, 1, 10) + b"abc",
        struct.pack(">hhih", 3, 1, 1, -2),
    ],
)
def test_short_or_bad_header(raw: bytes) -> None:
    with pytest.raises(InvalidRequestError):
        decode_request_header(memoryview(raw))


def test_flexible_response_header_v1() -> None:
    header = RequestHeader(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, 3, None)
    frame = _join(codec.encode_response(header, {}))
    assert frame[4:9] == struct.pack(">i", 3) + b"\x00"  # correlation id + no tagged fields


# ---------------------------------------------------------------- OffsetFetch v6-7 (flexible)


def test_offset_fetch_v7_request_bytes_exactly() -> None:
    """Header v2, compact strings/arrays (length + 1), tagged-field sections, then v7's
    require_stable; v6 is the same without it; a null topic list is a 0 count."""
    body = {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 2]}]}
    header_v2 = struct.pack(">hhih", 9, 7, 5, 1) + b"c" + b"\x00"  # + no tagged fields
    group = b"\x02g"  # compact string: length + 1
    topics = b"\x02" + b"\x02t" + b"\x03" + struct.pack(">ii", 0, 2) + b"\x00"
    frame = codec.encode_request(ApiKey.OFFSET_FETCH, 7, 5, "c", {**body, "require_stable": True})
    assert frame[4:] == header_v2 + group + topics + b"\x01" + b"\x00"
    header, decoded = _body(frame)
    assert codec.decode_request(header, decoded) == {**body, "require_stable": True}

    v6 = codec.encode_request(ApiKey.OFFSET_FETCH, 6, 5, "c", body)
    assert v6[4:] == struct.pack(">hhih", 9, 6, 5, 1) + b"c\x00" + group + topics + b"\x00"
    header, decoded = _body(v6)
    assert codec.decode_request(header, decoded) == {**body, "require_stable": False}

    every = codec.encode_request(ApiKey.OFFSET_FETCH, 7, 5, "c", {"group_id": "g", "topics": None})
    assert every[4:] == header_v2 + group + b"\x00" + b"\x00" + b"\x00"

    kp = pytest.importorskip("kafka.protocol.consumer")
    theirs = kp.OffsetFetchRequest.decode(frame[4 + len(header_v2) :], version=7)
    assert theirs.require_stable is True and theirs.topics[0].partition_indexes == [0, 2]


def test_offset_fetch_v7_response_bytes_exactly() -> None:
    partition = {
        "partition_index": 1,
        "committed_offset": -1,
        "committed_leader_epoch": -1,
        "metadata": "",
        "error_code": 88,  # UNSTABLE_OFFSET_COMMIT
    }
    body = {"throttle_time_ms": 0, "topics": [{"name": "t", "partitions": [partition]}]}
    frame = _join(codec.encode_response(RequestHeader(ApiKey.OFFSET_FETCH, 7, 5, None), body))
    part = struct.pack(">iqi", 1, -1, -1) + b"\x01" + struct.pack(">h", 88) + b"\x00"
    topics = b"\x02" + b"\x02t" + b"\x02" + part + b"\x00"
    payload = struct.pack(">i", 5) + b"\x00" + struct.pack(">i", 0) + topics + b"\x00\x00\x00"
    assert frame == struct.pack(">i", len(payload)) + payload  # header v1; error 0; no tags
    decoded = codec.decode_response(ApiKey.OFFSET_FETCH, 7, frame[4:])
    assert decoded == {**body, "error_code": 0}


# ---------------------------------------------------------------- records


def _produce_frame(records: bytes) -> bytes:
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}],
    }
    return codec.encode_request(ApiKey.PRODUCE, 7, 1, "p", body)


def test_request_records_are_zero_copy() -> None:
    frame = bytearray(_produce_frame(b"R" * 100))
    view = memoryview(frame)[4:]
    header, offset = decode_request_header(view)
    records = codec.decode_request(header, view[offset:])["topic_data"][0]["partition_data"][0]
    mv = records["records"]
    assert isinstance(mv, memoryview) and mv.obj is frame
    frame[-1] = ord("Z")  # a write to the frame shows through: no copy was made
    assert bytes(mv)[-1:] == b"Z"


def test_response_records_file_regions_are_separate_chunks(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"A" * 50 + b"B" * 70)
    with open(path, "rb") as fh:
        regions = [FileRegion(fh, 0, 50), FileRegion(fh, 50, 70)]
        big = b"C" * (INLINE_RECORDS_MAX + 1)
        body = {
            "responses": [
                {
                    "topic": "t",
                    "partitions": [
                        {"partition_index": 0, "records": regions},
                        {"partition_index": 1, "records": big},
                        {"partition_index": 2, "records": b"small"},
                    ],
                }
            ]
        }
        chunks = codec.encode_response(RequestHeader(ApiKey.FETCH, 11, 8, None), body)
        assert chunks[1] is regions[0] and chunks[2] is regions[1]
        assert any(c is big for c in chunks)
        frame = _join(chunks)
    assert struct.unpack(">i", frame[:4])[0] == len(frame) - 4
    parts = codec.decode_response(ApiKey.FETCH, 11, frame[4:])["responses"][0]["partitions"]
    assert bytes(parts[0]["records"]) == b"A" * 50 + b"B" * 70
    assert bytes(parts[1]["records"]) == big
    assert bytes(parts[2]["records"]) == b"small"


def test_null_and_missing_records() -> None:
    header = RequestHeader(ApiKey.FETCH, 4, 8, None)
    body = {"responses": [{"topic": "t", "partitions": [{}, {"records": None}]}]}
    frame = _join(codec.encode_response(header, body))
    parts = codec.decode_response(ApiKey.FETCH, 4, frame[4:])["responses"][0]["partitions"]
    assert bytes(parts[0]["records"]) == b""  # missing: empty, never null
    assert parts[1]["records"] is None


# ---------------------------------------------------------------- encode errors


def test_encode_rejects_none_in_non_nullable_field() -> None:
    header = RequestHeader(ApiKey.METADATA, 8, 1, None)
    with pytest.raises(ValueError, match="host"):
        codec.encode_response(header, {"brokers": [{"node_id": 1, "host": None, "port": 1}]})


def test_encode_rejects_out_of_range_int() -> None:
    header = RequestHeader(ApiKey.HEARTBEAT, 1, 1, None)
    with pytest.raises(ValueError, match="error_code"):
        codec.encode_response(header, {"error_code": 1 << 20})


# ---------------------------------------------------------------- malformed input


def _fetch_v4_prefix() -> bytes:
    # replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level
    return struct.pack(">iiiib", -1, 500, 1, 1 << 20, 0)


def test_huge_array_count_allocates_nothing() -> None:
    body = memoryview(_fetch_v4_prefix() + struct.pack(">i", 2**31 - 1) + b"\x00" * 64)
    tracemalloc.start()
    try:
        with pytest.raises(InvalidRequestError):
            codec.decode_request(RequestHeader(ApiKey.FETCH, 4, 1, None), body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_huge_primitive_array_count() -> None:
    # DeleteTopics v1: topic_names []string, timeout_ms; and Metadata: replica ids []int32
    body = memoryview(struct.pack(">i", 2**31 - 1) + b"\x00\x01a")
    with pytest.raises(InvalidRequestError):
        codec.decode_request(RequestHeader(ApiKey.DELETE_TOPICS, 1, 1, None), body)
    resp = struct.pack(">i", 1) + struct.pack(">ii", 1, 2**31 - 1)  # brokers... fake count
    with pytest.raises(KafkaError):
        codec.decode_response(ApiKey.METADATA, 0, resp)


@pytest.mark.parametrize(
    "tail",
    [
        struct.pack(">i", 1) + struct.pack(">h", 100) + b"abc",  # string past the end
        struct.pack(">i", 1) + struct.pack(">h", -5) + b"abc",  # negative length
        struct.pack(">i", 1) + struct.pack(">h", -1),  # null topic name: not nullable
        struct.pack(">i", 1) + struct.pack(">h", 2) + b"\xff\xfe",  # not UTF-8
        struct.pack(">i", -7),  # negative array count
        b"\x00\x00",  # truncated count
    ],
)
def test_malformed_request_raises_invalid_request(tail: bytes) -> None:
    with pytest.raises(InvalidRequestError):
        codec.decode_request(
            RequestHeader(ApiKey.FETCH, 4, 1, None), memoryview(_fetch_v4_prefix() + tail)
        )


def test_produce_v0_to_v2_still_decode() -> None:
    """Advertised for librdkafka's sake: the broker must decode them to answer an error."""
    for version in (0, 1, 2):
        body = {"acks": 1, "timeout_ms": 5, "topic_data": [{"name": "t", "partition_data": []}]}
        header, view = _body(codec.encode_request(ApiKey.PRODUCE, version, 1, None, body))
        decoded = codec.decode_request(header, view)
        assert decoded["transactional_id"] is None and decoded["acks"] == 1
