"""Every project type that a public method of the SDK's classes takes or returns (and, for the
data types it returns, every type of their fields) can be imported from ``tiered_mq.client`` and
is in its ``__all__``: ``Admin.list_offsets`` took ``TopicPartition``, which only
``tiered_mq.topic_partition`` offered."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Iterable

import pytest

import tiered_mq.client as sdk

CLASSES = (sdk.Producer, sdk.Consumer, sdk.Admin, sdk.RetryingProcessor)


def project_types(hints: Iterable[object]) -> set[type]:
    """The ``tiered_mq`` classes in type hints (``dict[TopicPartition, int] | None``, ...), and
    those of the fields of the dataclasses and named tuples among them."""
    found: set[type] = set()

    def walk(hint: object) -> None:
        if isinstance(hint, type) and hint.__module__.startswith("tiered_mq"):
            if hint in found:
                return
            found.add(hint)
            if dataclasses.is_dataclass(hint) or issubclass(hint, tuple):
                for field_hint in typing.get_type_hints(hint).values():
                    walk(field_hint)
        for arg in typing.get_args(hint):
            walk(arg)

    for hint in hints:
        walk(hint)
    return found


def public_signatures(cls: type) -> dict[str, dict[str, object]]:
    """The type hints of ``cls``'s constructor, public methods and properties, by name."""
    hints = {}
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") and name != "__init__":
            continue
        function = member.fget if isinstance(member, property) else member
        if callable(function):
            hints[name] = typing.get_type_hints(function)
    return hints


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_type_of_the_public_methods_is_exported(cls: type) -> None:
    missing = {
        f"{cls.__name__}.{name}: {t.__module__}.{t.__name__}"
        for name, hints in public_signatures(cls).items()
        for t in project_types(hints.values())
        if getattr(sdk, t.__name__, None) is not t or t.__name__ not in sdk.__all__
    }
    assert not missing


def test_the_walk_sees_the_types() -> None:
    """The walk finds the types behind generics, unions and returned data types."""
    admin = public_signatures(sdk.Admin)
    assert sdk.TopicPartition in project_types(admin["list_offsets"].values())
    assert sdk.ConfigSynonym in project_types(admin["describe_topic"].values())
    assert sdk.ScramCredential in project_types(admin["scram_users"].values())


def test_list_offsets_takes_the_exported_topic_partition() -> None:
    """What the README's SDK user writes: no import from outside ``tiered_mq.client``."""
    from tiered_mq.client import Admin, TopicPartition

    partitions = typing.get_type_hints(Admin.list_offsets)["partitions"]
    assert typing.get_args(partitions) == (TopicPartition,)
    assert TopicPartition("orders", 0) == ("orders", 0)
