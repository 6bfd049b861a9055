from pathlib import Path

from tiered_mq.hot import log_files


def test_file_name_is_20_digits_and_sorts_numerically() -> None:
    names = [log_files.file_name(o) for o in (0, 9, 10, 123456789012, 2**63 - 1)]
    assert all(len(n) == 20 for n in names)
    assert names == sorted(names)
    assert log_files.file_name(42) == "00000000000000000042"


def test_paths_and_parse(tmp_path: Path) -> None:
    assert log_files.log_file(tmp_path, 7).name == "00000000000000000007.log"
    assert log_files.offset_index_file(tmp_path, 7).name.endswith(".index")
    assert log_files.time_index_file(tmp_path, 7).name.endswith(".timeindex")
    assert log_files.snapshot_file(tmp_path, 7).name.endswith(".snapshot")
    assert log_files.txn_index_file(tmp_path, 7).name.endswith(".txnindex")
    assert log_files.offset_from_file_name("00000000000000000042.log") == 42
    assert log_files.offset_from_file_name("00000000000000000042.log.deleted") == 42
    assert log_files.offset_from_file_name("42.log") is None
    assert log_files.offset_from_file_name("recovery-point-offset-checkpoint") is None
    assert log_files.is_log_file("00000000000000000042.log")
    assert not log_files.is_log_file("00000000000000000042.index")
    assert log_files.partition_dir_name("orders", 3) == "orders-3"


def test_checkpoint_roundtrip_and_garbage(tmp_path: Path) -> None:
    path = tmp_path / log_files.RECOVERY_POINT_CHECKPOINT
    assert log_files.read_checkpoint(path) is None
    log_files.write_checkpoint(path, 12345)
    assert log_files.read_checkpoint(path) == 12345
    assert path.read_text() == "0\n12345\n"
    assert not list(tmp_path.glob("*.tmp"))
    path.write_bytes(b"0\nxyz\n")
    assert log_files.read_checkpoint(path) is None
    path.write_bytes(b"\xff\xfe")
    assert log_files.read_checkpoint(path) is None
