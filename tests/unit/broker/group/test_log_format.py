from __future__ import annotations

import pytest

from tiered_mq.broker.group import log_format as fmt


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("polygenelubricants", -(2**31)),  # Java's famous Integer.MIN_VALUE hash
        ("\U0001f600", 0xD83D * 31 + 0xDE00),  # a surrogate pair counts as two UTF-16 units
    ],
)
def test_java_string_hash(s: str, expected: int) -> None:
    assert fmt.java_string_hash(s) == expected


def test_partition_for_matches_kafka() -> None:
    assert fmt.partition_for("hello", 50) == 99162322 % 50
    assert fmt.partition_for("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) = 0
    negative = next(
        s for s in (f"consumer-group-{i}" for i in range(1000)) if fmt.java_string_hash(s) < 0
    )
    assert fmt.partition_for(negative, 50) == abs(fmt.java_string_hash(negative)) % 50


def test_offset_key_bytes_are_kafkas_layout() -> None:
    key = fmt.encode_offset_key(fmt.OffsetKey("g", "t", 3))
    assert key == b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + b"\x00\x00\x00\x03"
    assert fmt.decode_key(key) == fmt.OffsetKey("g", "t", 3)
    assert fmt.decode_key(fmt.encode_group_key(fmt.GroupKey("grp"))) == fmt.GroupKey("grp")


def test_offset_value_v3_and_v1_round_trip() -> None:
    v3 = fmt.OffsetValue(42, 7, "meta", 1234)
    data = fmt.encode_offset_value(v3)
    assert data[:2] == b"\x00\x03"
    assert len(data) == 2 + 8 + 4 + 2 + 4 + 8
    assert fmt.decode_offset_value(data) == v3
    v1 = fmt.OffsetValue(42, -1, "", 1234, 9999)
    data = fmt.encode_offset_value(v1)
    assert data[:2] == b"\x00\x01"
    assert fmt.decode_offset_value(data) == v1


def test_group_value_round_trip() -> None:
    value = fmt.GroupValue(
        "consumer",
        5,
        "range",
        "m1",
        777,
        [
            fmt.MemberValue("m1", None, "c1", "/h", 30000, 10000, b"sub1", b"asg1"),
            fmt.MemberValue("m2", "inst", "c2", "/h", 30000, 10000, b"", b"\x00"),
        ],
    )
    data = fmt.encode_group_value(value)
    assert data[:2] == b"\x00\x03"
    assert fmt.decode_group_value(data) == value


@pytest.mark.parametrize(
    "data", [b"", b"\x00", b"\x00\x09abc", b"\x00\x01\x00\x05ab", b"\x00\x03\x00\x00\x00"]
)
def test_malformed_records_raise_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        fmt.decode_key(data)
    with pytest.raises(ValueError):
        fmt.decode_offset_value(data)
