"""The error codes a response carries, counted as Kafka's ``AbstractResponse.errorCounts()``.

    counter = error_counter(api_key, version)   compiled once per (api, version), cached
    counter(body, counts)                        counts[code] += 1 for every error code in body

Every field named ``error_code`` (or ``partition_error_code``, AddPartitionsToTxn's) that the
response carries at ``version`` is counted once per occurrence: the top-level one, one per
topic, group or resource, one per partition, so a Produce of 3 partitions answered NONE counts
NONE three times and a Fetch of one partition counts NONE twice (its top-level error and its
partition's), as Kafka counts them. Code 0 (NONE) is counted too. A field the body omits
counts as its default (0: what goes on the wire). Fields that are not error codes of the
response (CreateTopics' tagged ``topic_config_error_code``) are not counted.

The counter walks only the arrays and structs that hold an error code field (never records),
so its cost is one dict update per error code: per partition at most. An unknown api key or
version raises UnsupportedVersionError (as the codec does). No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from tiered_mq.errors import UnsupportedVersionError
from tiered_mq.protocol.messages import RESPONSES
from tiered_mq.protocol.schema import Array, Field, Struct

ERROR_FIELDS: Final = frozenset({"error_code", "partition_error_code"})

Counts = dict[int, int]
CountFn = Callable[[dict[str, Any], Counts], None]

_COUNTERS: dict[tuple[int, int], CountFn] = {}
# counters of a struct whose only error code is one direct field (a partition): that field's
# name and default, so a list of them is counted in one loop, without a call per item
_SINGLE: dict[CountFn, tuple[str, int]] = {}


def error_counter(api_key: int, version: int) -> CountFn:
    """The compiled counter of ``api_key``'s responses at ``version`` (see the module doc)."""
    key = (api_key, version)
    fn = _COUNTERS.get(key)
    if fn is None:
        msg = RESPONSES.get(api_key)
        if msg is None or version not in msg.valid:
            raise UnsupportedVersionError(f"no response of api key {api_key} v{version}")
        fn = _struct_counter(msg.fields, version) or _count_nothing
        _COUNTERS[key] = fn
    return fn


def _count_nothing(body: dict[str, Any], counts: Counts) -> None:
    return None


def _struct_counter(fields: tuple[Field, ...], version: int) -> CountFn | None:
    """A counter of one struct's error codes, None when it (and what it nests) has none."""
    direct: list[tuple[str, int]] = []
    arrays: list[tuple[str, CountFn]] = []
    structs: list[tuple[str, CountFn]] = []
    for fld in fields:
        if version not in fld.versions:
            continue
        t = fld.type
        if fld.name in ERROR_FIELDS and fld.tag is None:
            direct.append((fld.name, int(fld.default_at(version) or 0)))
        elif isinstance(t, Array) and isinstance(t.element, Struct):
            sub = _struct_counter(t.element.fields, version)
            if sub is not None:
                arrays.append((fld.name, sub))
        elif isinstance(t, Struct):
            sub = _struct_counter(t.fields, version)
            if sub is not None:
                structs.append((fld.name, sub))
    if not (direct or arrays or structs):
        return None
    if len(direct) == 1 and not arrays and not structs:  # a partition: the hot case
        ((name, default),) = direct

        def count_one(body: dict[str, Any], counts: Counts) -> None:
            code = body.get(name, default)
            counts[code] = counts.get(code, 0) + 1

        _SINGLE[count_one] = (name, default)
        return count_one
    if len(arrays) == 1 and not direct and not structs:  # a list of topics or partitions
        ((name, sub),) = arrays
        single = _SINGLE.get(sub)
        if single is not None:  # a list of partitions
            item_name, item_default = single

            def count_items(body: dict[str, Any], counts: Counts) -> None:
                items = body.get(name)
                if items:
                    get = counts.get
                    for item in items:
                        code = item.get(item_name, item_default)
                        counts[code] = get(code, 0) + 1

            return count_items

        def count_each(body: dict[str, Any], counts: Counts) -> None:
            items = body.get(name)
            if items:
                for item in items:
                    sub(item, counts)

        return count_each

    items_of = [(name, sub, _SINGLE.get(sub)) for name, sub in arrays]

    def count(body: dict[str, Any], counts: Counts) -> None:
        for name, default in direct:
            code = body.get(name, default)
            counts[code] = counts.get(code, 0) + 1
        for name, sub, single in items_of:
            items = body.get(name)
            if not items:
                continue
            if single is None:
                for item in items:
                    sub(item, counts)
                continue
            item_name, item_default = single  # a list of partitions: one loop
            get = counts.get
            for item in items:
                code = item.get(item_name, item_default)
                counts[code] = get(code, 0) + 1
        for name, sub in structs:
            value = body.get(name)
            if value is not None:
                sub(value, counts)

    return count
