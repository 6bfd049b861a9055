"""A damaged ``cluster.json`` or ``meta.properties`` stops the start with an error naming the
file (the broker printed only the decoder's message, or a traceback for a JSON list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker import meta_properties
from tiered_mq.coordination.embedded import EmbeddedCoordinator


@pytest.mark.parametrize("content", [b"", b"{garbage", b"[]", b"\xff\xfe"])
def test_a_damaged_cluster_json_is_named(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "cluster.json").write_bytes(content)
    with pytest.raises(ValueError, match=r"cluster\.json"):
        EmbeddedCoordinator(tmp_path)


def test_a_binary_meta_properties_is_named(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match=r"meta\.properties: not UTF-8"):
        meta_properties.read(tmp_path)
