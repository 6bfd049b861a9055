"""EmbeddedCoordinator's SCRAM credentials: Kafka's mechanism -> credential string map per user
in cluster.json, durable across reopen, all-or-nothing per alter, and older files read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiered_mq.coordination.embedded import FILE_NAME, EmbeddedCoordinator

A = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096"
B = "salt=YnNhbHQ=,stored_key=YnN0b3JlZA==,server_key=YnNlcnZlcg==,iterations=8192"


async def test_credentials_survive_reopen_in_kafkas_form(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    assert c.scram_users() == [] and c.scram_credentials("alice") == {}
    await c.alter_scram_credentials(
        {"alice": {"SCRAM-SHA-256": A, "SCRAM-SHA-512": B}, "bob": {"SCRAM-SHA-512": A}}
    )
    assert c.scram_users() == ["alice", "bob"]
    await c.close()
    on_disk = json.loads((tmp_path / FILE_NAME).read_text())
    assert on_disk["users"] == {
        "alice": {"SCRAM-SHA-256": A, "SCRAM-SHA-512": B},
        "bob": {"SCRAM-SHA-512": A},
    }
    again = EmbeddedCoordinator(tmp_path)
    await again.start()
    assert again.scram_credentials("alice") == {"SCRAM-SHA-256": A, "SCRAM-SHA-512": B}
    await again.alter_scram_credentials(
        {"alice": {"SCRAM-SHA-256": B, "SCRAM-SHA-512": None}, "bob": {"SCRAM-SHA-512": None}}
    )
    assert again.scram_credentials("alice") == {"SCRAM-SHA-256": B}
    assert again.scram_users() == ["alice"]  # bob lost his last credential: gone
    assert "bob" not in json.loads((tmp_path / FILE_NAME).read_text())["users"]
    await again.alter_scram_credentials({"nobody": {"SCRAM-SHA-256": None}})  # no error
    assert again.scram_users() == ["alice"]


async def test_a_failed_write_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    await c.alter_scram_credentials({"alice": {"SCRAM-SHA-256": A}})

    def disk_full(_path: Path, _data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("tiered_mq.coordination.embedded.replace_durably", disk_full)
    with pytest.raises(OSError):
        await c.alter_scram_credentials(
            {"alice": {"SCRAM-SHA-256": None}, "carol": {"SCRAM-SHA-256": B}}
        )
    assert c.scram_users() == ["alice"] and c.scram_credentials("alice") == {"SCRAM-SHA-256": A}
    monkeypatch.undo()
    reopened = EmbeddedCoordinator(tmp_path)
    assert reopened.scram_users() == ["alice"]


async def test_a_file_from_before_users_reads_as_none(tmp_path: Path) -> None:
    c = EmbeddedCoordinator(tmp_path)
    await c.start()
    state = json.loads((tmp_path / FILE_NAME).read_text())
    del state["users"]
    (tmp_path / FILE_NAME).write_text(json.dumps(state))
    old = EmbeddedCoordinator(tmp_path)
    await old.start()
    assert old.scram_users() == []
    await old.alter_scram_credentials({"alice": {"SCRAM-SHA-256": A}})
    assert old.scram_credentials("alice") == {"SCRAM-SHA-256": A}
