"""kafka-python 3's protocol classes as an independent codec for our bytes.

For every API and version both sides know, kafka-python decodes the body we encode, its
values agree with ours field by field, and its re-encoding is byte-identical to ours. A field
in the wrong order, type or version would fail one of the three.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.unit.protocol.samples import all_versions, sample
from tiered_mq.protocol import codec
from tiered_mq.protocol.header import RequestHeader, decode_request_header, response_header_version
from tiered_mq.protocol.messages import REQUESTS, RESPONSES

kp_modules = [
    pytest.importorskip(f"kafka.protocol.{m}")
    for m in ("consumer", "metadata", "admin", "producer", "sasl")
]


def kp_class(name: str) -> Any:
    for mod in kp_modules:
        if hasattr(mod, name):
            return getattr(mod, name)
    pytest.skip(f"kafka-python has no {name}")


def _agree(ours: Any, theirs: Any, path: str) -> None:
    """Every value we hold equals kafka-python's (it may hold fields we do not declare)."""
    if isinstance(ours, dict):
        assert isinstance(theirs, dict), path
        for k, v in ours.items():
            if k in theirs and not k.endswith("authorized_operations"):  # a set there
                _agree(v, theirs[k], f"{path}.{k}")
    elif isinstance(ours, list):
        assert isinstance(theirs, list) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _agree(a, b, f"{path}[{i}]")
    elif isinstance(ours, bytes | memoryview):
        assert bytes(ours) == bytes(theirs), path
    else:
        assert ours == theirs, path


def _tame(value: Any) -> Any:
    """kafka-python turns authorized_operations bit fields into sets: keep ours at the default."""
    if isinstance(value, dict):
        return {
            k: -(2**31)
            if k.endswith("authorized_operations") and not k.startswith("include")
            else _tame(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_tame(v) for v in value]
    return value


def _check(cls: Any, version: int, body_bytes: bytes, ours: dict[str, Any]) -> None:
    if version > cls.max_version:
        pytest.skip(f"kafka-python {cls.__name__} stops at v{cls.max_version}")
    obj = cls.decode(body_bytes, version=version)
    obj._header = None  # decode() without a header leaves the slot unset
    _agree(ours, obj.to_dict(json=False), cls.__name__)
    assert bytes(obj.encode(version=version)) == body_bytes


@pytest.mark.parametrize(("api_key", "version"), all_versions(REQUESTS))
def test_requests_against_kafka_python(api_key: int, version: int) -> None:
    msg = REQUESTS[api_key]
    cls = kp_class(msg.name)
    rng = random.Random(api_key + 31 * version)
    for i in range(10):
        body = _tame(sample(msg, version, rng))
        frame = codec.encode_request(api_key, version, i, "oracle", body)
        _, offset = decode_request_header(memoryview(frame)[4:])
        _check(cls, version, frame[4 + offset :], body)


@pytest.mark.parametrize(("api_key", "version"), all_versions(RESPONSES))
def test_responses_against_kafka_python(api_key: int, version: int) -> None:
    msg = RESPONSES[api_key]
    cls = kp_class(msg.name)
    rng = random.Random(api_key + 37 * version)
    for i in range(10):
        body = _tame(sample(msg, version, rng))
        chunks = codec.encode_response(RequestHeader(api_key, version, i, None), body)
        frame = b"".join(bytes(c) for c in chunks)
        offset = 4 + 4 + response_header_version(api_key, version)
        _check(cls, version, frame[offset:], body)
