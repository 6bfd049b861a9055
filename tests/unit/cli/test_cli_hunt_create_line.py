"""``topics create`` without counts reads back what the broker chose; a topic not yet in the
metadata (another broker of a cluster answered) is no error: the create succeeded."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from tiered_mq.cli import main, topics
from tiered_mq.client.errors import ClientError


class NotYetListed:
    def create_topic(self, *args: Any) -> None:
        pass

    def describe_topic(self, name: str, with_configs: bool = True) -> None:
        raise ClientError("UNKNOWN_TOPIC_OR_PARTITION", f"topic {name} does not exist", 3)


def test_created_topic_missing_from_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(topics, "admin_client", lambda *a: NotYetListed())
    r = CliRunner().invoke(main, ["topics", "create", "t"])
    assert r.exit_code == 0, r.output
    assert r.stdout == "Created topic t (the broker's default partitions and replication factor).\n"
