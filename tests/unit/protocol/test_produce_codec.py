"""The hand-written Produce v3-8 codec (produce_codec.py) against the schema-driven one."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol import decoder, encoder, produce_codec
from tiered_mq.protocol.codec import decode_request, encode_request, encode_response
from tiered_mq.protocol.encoder import Writer
from tiered_mq.protocol.header import RequestHeader, decode_request_header
from tiered_mq.protocol.messages.produce import REQUEST, RESPONSE

VERSIONS = range(produce_codec.MIN_VERSION, produce_codec.MAX_VERSION + 1)


def _generic_read(version: int, body: memoryview) -> Any:
    return decoder.message_reader(REQUEST.fields, version, False)(body, 0)[0]


def _generic_write(version: int, header: bytes, body: dict[str, Any]) -> bytes:
    w = Writer()
    w.buf += b"\x00\x00\x00\x00"
    w.buf += header
    encoder.message_writer(RESPONSE.fields, version, False)(w, body)
    out = b"".join(bytes(c) for c in w.finish())  # type: ignore[arg-type]
    return (len(out) - 4).to_bytes(4, "big", signed=True) + out[4:]


def _request(rng: random.Random) -> dict[str, Any]:
    return {
        "transactional_id": rng.choice([None, "", "txn-ü"]),
        "acks": rng.choice([-1, 0, 1]),
        "timeout_ms": rng.randrange(2**31),
        "topic_data": [
            {
                "name": f"t{t}",
                "partition_data": [
                    {"index": p, "records": rng.choice([None, b"", rng.randbytes(30)])}
                    for p in range(rng.randrange(3))
                ],
            }
            for t in range(rng.randrange(3))
        ],
    }


def _normalised(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _normalised(v) for k, v in d.items()}
    if isinstance(d, list):
        return [_normalised(v) for v in d]
    return bytes(d) if isinstance(d, memoryview) else d


@pytest.mark.parametrize("version", VERSIONS)
def test_request_reads_as_the_generic_reader(version: int) -> None:
    rng = random.Random(version)
    for _ in range(200):
        frame = encode_request(0, version, 7, "c", _request(rng))
        _, pos = decode_request_header(memoryview(frame)[4:])
        body = memoryview(frame)[4 + pos :]
        fast = produce_codec.read_request(body)
        assert fast is not None
        assert _normalised(fast) == _normalised(_generic_read(version, body))
        records = [p["records"] for t in fast["topic_data"] for p in t["partition_data"]]
        assert all(r is None or isinstance(r, memoryview) for r in records)  # zero copy


@pytest.mark.parametrize("version", VERSIONS)
def test_truncated_or_malformed_request_falls_back_to_the_generic_error(version: int) -> None:
    rng = random.Random(100 + version)
    header = RequestHeader(0, version, 7, "c")
    for _ in range(100):
        frame = encode_request(0, version, 7, "c", _request(rng))
        _, pos = decode_request_header(memoryview(frame)[4:])
        body = bytearray(frame[4 + pos :])
        cut = rng.randrange(len(body))
        for bad in (body[:cut], body[:cut] + b"\xff\xfe" + body[cut + 2 :]):
            view = memoryview(bad)
            fast = produce_codec.read_request(view)
            try:
                generic = _generic_read(version, view)
            except Exception:
                assert fast is None
                with pytest.raises(InvalidRequestError):
                    decode_request(header, view)
                continue
            assert fast is None or _normalised(fast) == _normalised(generic)


def _partition(rng: random.Random) -> dict[str, Any]:
    return {
        "index": rng.randrange(100),
        "error_code": rng.choice([0, 10, 87]),
        "base_offset": rng.choice([-1, rng.randrange(2**40)]),
        "log_append_time_ms": rng.choice([-1, 1_700_000_000_000]),
        "log_start_offset": rng.choice([-1, 0, 55]),
        "record_errors": [
            {"batch_index": i, "batch_index_error_message": rng.choice([None, "bad é"])}
            for i in range(rng.randrange(3))
        ],
        "error_message": rng.choice([None, "", "oops"]),
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_response_writes_as_the_generic_writer(version: int) -> None:
    rng = random.Random(200 + version)
    for _ in range(200):
        body = {
            "responses": [
                {
                    "name": f"topic-{t}",
                    "partition_responses": [_partition(rng) for _ in range(rng.randrange(3))],
                }
                for t in range(rng.randrange(3))
            ],
            "throttle_time_ms": rng.randrange(1000),
        }
        frame = produce_codec.write_response(version, b"\x00\x00\x00\x07", body)
        assert frame is not None
        assert bytes(frame) == _generic_write(version, b"\x00\x00\x00\x07", body)
        [chunk] = encode_response(RequestHeader(0, version, 7, "c"), body)
        assert isinstance(chunk, bytearray) and chunk == frame


@pytest.mark.parametrize(
    "body",
    [
        {"responses": [{"name": "t", "partition_responses": [{"index": 1}]}]},  # defaults
        {"responses": [], "throttle_time_ms": 2**40},  # out of range: the generic error
        {"responses": [{"name": None, "partition_responses": []}], "throttle_time_ms": 0},
    ],
)
def test_response_outside_the_common_case_goes_to_the_generic_writer(
    body: dict[str, Any],
) -> None:
    assert produce_codec.write_response(8, b"\x00\x00\x00\x07", body) is None
    header = RequestHeader(0, 8, 7, "c")
    try:
        expected = _generic_write(8, b"\x00\x00\x00\x07", body)
    except ValueError:
        with pytest.raises(ValueError):
            encode_response(header, body)
        return
    assert b"".join(bytes(c) for c in encode_response(header, body)) == expected  # type: ignore[arg-type]
