"""Partition directories renamed for deletion (Kafka's ``logDeleteDirName``), found again at
start and removed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.unit.hot.helpers import make_batch
from tiered_mq.hot import log_dir_deletion as deletion
from tiered_mq.hot.local_log import LocalLog
from tiered_mq.hot.log_config import LogConfig

HEX_ID = "[0-9a-f]{32}"


def test_the_delete_name_is_kafkas_and_fits_a_file_name() -> None:
    assert re.fullmatch(rf"orders-3\.{HEX_ID}-delete", deletion.delete_dir_name("orders-3"))
    assert deletion.delete_dir_name("a-0") != deletion.delete_dir_name("a-0")  # unique
    longest = "t" * 249  # Kafka's longest topic name: the topic is cut, never the suffix
    name = deletion.delete_dir_name(f"{longest}-12345")
    assert len(name.encode()) == deletion.MAX_NAME_BYTES
    assert re.fullmatch(rf"t+-12345\.{HEX_ID}-delete", name)
    assert deletion.is_delete_dir(name) and not deletion.is_delete_dir("orders-delete-0")


def test_deleting_a_log_renames_its_directory_beside_it(tmp_path: Path) -> None:
    log = LocalLog.open(tmp_path / "orders-0", LogConfig())
    log.append_as_leader(make_batch(), 0)
    renamed = log.delete()
    assert renamed is not None and renamed.parent == tmp_path
    assert re.fullmatch(rf"orders-0\.{HEX_ID}-delete", renamed.name)
    assert not (tmp_path / "orders-0").exists()
    assert any(renamed.glob("*.log")) and log.closed
    assert deletion.leftover_delete_dirs(tmp_path) == [renamed]
    assert deletion.remove_dirs([renamed, tmp_path / "missing-0.x-delete"]) == []
    assert deletion.leftover_delete_dirs(tmp_path) == []


def test_leftovers_are_the_delete_directories_only(tmp_path: Path) -> None:
    assert deletion.leftover_delete_dirs(tmp_path / "absent") == []
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "a-delete-0").mkdir()  # a partition of topic "a-delete"
    (tmp_path / "note-delete").write_text("a file, not a directory")
    b = tmp_path / deletion.delete_dir_name("b-1")
    a = tmp_path / deletion.delete_dir_name("a-0")
    a.mkdir()
    b.mkdir()
    assert deletion.leftover_delete_dirs(tmp_path) == sorted([a, b])


def test_a_failed_removal_is_reported_and_the_rest_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a-0.1-delete", tmp_path / "b-0.2-delete"
    first.mkdir()
    second.mkdir()
    real = shutil.rmtree

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path) == first:
            raise PermissionError(13, "Permission denied", str(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    assert deletion.remove_dirs([first, second]) == [first]
    assert first.exists() and not second.exists()
