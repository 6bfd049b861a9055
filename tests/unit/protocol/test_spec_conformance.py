"""Our declarations against Kafka's JSON message specs (the copy bundled with kafka-python 3).

For every API and every version we serve, the fields on the wire must match the spec's in
order, name (snake_case), type, nullability, tag and explicit default. This catches
transcription mistakes (a field in the wrong version range, a missed nullable) that a
round-trip through our own codec cannot.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.unit.protocol.samples import all_versions
from tiered_mq.protocol.messages import REQUESTS, RESPONSES
from tiered_mq.protocol.schema import Array, Field, Primitive, Struct, parse_versions

load_json = pytest.importorskip("kafka.protocol.schemas").load_json


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _type_name(t: Any) -> str:
    if isinstance(t, Primitive):
        return t.name
    if isinstance(t, Array):
        return "[]" + _type_name(t.element)
    return "struct"


def _spec_type(sf: dict[str, Any]) -> str:
    t: str = sf["type"]
    if t.startswith("[]"):
        inner = t[2:]
        return "[]" + ("struct" if inner[0].isupper() else inner)
    return "struct" if t[0].isupper() else t


def _spec_default(sf: dict[str, Any]) -> Any:
    d = sf["default"]
    if isinstance(d, bool | int):
        return d
    if d == "null":
        return None
    if d in ("true", "false"):
        return d == "true"
    if sf["type"] in ("string",):
        return d
    return int(d, 0)


def _compare(spec: list[dict[str, Any]], mine: tuple[Field, ...], v: int, path: str) -> None:
    spec_on = [sf for sf in spec if v in parse_versions(sf["versions"])]
    mine_on = [mf for mf in mine if v in mf.versions]
    assert [mf.name for mf in mine_on] == [snake(sf["name"]) for sf in spec_on], path
    for sf, mf in zip(spec_on, mine_on, strict=True):
        where = f"{path}.{mf.name} v{v}"
        assert _type_name(mf.type) == _spec_type(sf), where
        spec_nullable = v in parse_versions(sf.get("nullableVersions", "none"))
        assert (v in mf.nullable) == spec_nullable, where
        assert mf.tag == sf.get("tag"), where
        if "default" in sf:
            assert mf.default_at(v) == _spec_default(sf), where
        if "fields" in sf:
            t = mf.type
            sub = t.element if isinstance(t, Array) else t
            assert isinstance(sub, Struct), where
            _compare(sf["fields"], sub.fields, v, f"{path}.{mf.name}")


@pytest.mark.parametrize(("api_key", "version"), all_versions(REQUESTS))
def test_request_matches_spec(api_key: int, version: int) -> None:
    msg = REQUESTS[api_key]
    spec = load_json(msg.name)
    assert spec["apiKey"] == api_key
    assert (version in parse_versions(spec["flexibleVersions"])) == (version in msg.flexible)
    _compare(spec["fields"], msg.fields, version, msg.name)


@pytest.mark.parametrize(("api_key", "version"), all_versions(RESPONSES))
def test_response_matches_spec(api_key: int, version: int) -> None:
    msg = RESPONSES[api_key]
    spec = load_json(msg.name)
    assert (version in parse_versions(spec["flexibleVersions"])) == (version in msg.flexible)
    _compare(spec["fields"], msg.fields, version, msg.name)
