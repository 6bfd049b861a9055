"""``groups reset-offsets G --all-topics`` of a group without committed offsets: the note says
there is nothing to reset; no empty GROUP TOPIC PARTITION NEW-OFFSET table, no "Dry run" line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tiered_mq.cli import main, reset_offsets
from tiered_mq.client.admin import GroupDescription


class NoOffsetsAdmin:
    def describe_group(self, group: str) -> GroupDescription:
        return GroupDescription(group, "EMPTY", "", 0, (), ())

    def list_offsets(self, tps: list[object], spec: str) -> dict[object, int]:
        return {}


def test_nothing_to_reset_prints_no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reset_offsets, "admin_client", lambda *a: NoOffsetsAdmin())
    args = ["groups", "reset-offsets", "g", "--all-topics", "--to-earliest"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert r.stderr == "Note: group 'g' has no committed offsets: nothing to reset\n"
