"""The aborted transactions a read_committed fetch lists are searched from the fetch offset on,
up to the first entry whose last stable offset reaches the end of the range (Kafka's
``collectAbortedTxns``): a transaction open across the range is still listed (the integration
test, test_fetch_hunt_aborted.py, checks what a fetch lists)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.broker.txn.test_partition_txn import open_partition
from tiered_mq.hot.transaction_index import AbortedTxn


def test_a_long_transaction_is_listed_and_the_search_stops_after_the_range(
    tmp_path: Path,
) -> None:
    txns = open_partition(tmp_path).txns
    long = AbortedTxn(9, first_offset=5, last_offset=100, last_stable_offset=101)
    short = AbortedTxn(1, first_offset=20, last_offset=22, last_stable_offset=5)  # long is open
    later = AbortedTxn(2, first_offset=30, last_offset=31, last_stable_offset=5)
    after = AbortedTxn(3, first_offset=200, last_offset=201, last_stable_offset=202)
    txns.aborted = [short, later, long, after]  # marker order
    assert txns.aborted_between(20, 25) == [long, short]
    assert txns.aborted_between(101, 300) == [after]
    txns.aborted = [short, later, long, AbortedTxn(4, 21, 300, 301)]  # an entry it never reaches
    assert txns.aborted_between(20, 25) == [long, short]  # stopped at long's last stable offset
