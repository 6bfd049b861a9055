"""The refusal to start with a changed cold URL says plainly why: the data dir's tiered
partitions have records only in the recorded cold tier (it read "the records 1 tiered
partition(s) of <dir> (orders-0) uploaded are there")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiered_mq.broker import cold_tier_record, meta_properties
from tiered_mq.broker.cold_tier_record import InconsistentRemoteStorageError


def test_the_refusal_names_the_partitions_whose_records_are_only_in_the_old_tier(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    old, new = tmp_path / "old-cold", tmp_path / "new-cold"
    meta_properties.write(data, 1, "cluster", {cold_tier_record.KEY: f"file://{old}"})
    partition = data / "orders-0"
    partition.mkdir()
    (partition / f"{30:020d}.log").write_bytes(b"")  # its first 30 records were uploaded

    with pytest.raises(InconsistentRemoteStorageError) as refused:
        cold_tier_record.check(data, f"file://{new}", lambda tp: tp.topic == "orders")

    message = str(refused.value)
    assert f"1 tiered partition(s) of {data} (orders-0) have records only there." in message
    assert "uploaded are there" not in message
    assert message.startswith(f"Configured cold tier file://{new} doesn't match the cold tier")
    assert message.endswith(f"Nothing in {data} was changed.")
