"""freeze_startup_heap: what is alive at the end of the start leaves the collector's passes;
what is made later is still collected, cycles included."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tiered_mq.broker.startup_heap import freeze_startup_heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def frozen() -> Iterator[int]:
    try:
        yield freeze_startup_heap()
    finally:
        gc.unfreeze()


def test_later_cycles_are_still_collected(frozen: int) -> None:
    assert frozen > 0 and gc.get_freeze_count() > 0
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None
