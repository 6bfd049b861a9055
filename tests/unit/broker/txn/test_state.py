"""The transaction state machine (pure) and the __transaction_state record formats."""

from __future__ import annotations

import struct

import pytest

from tiered_mq import errors
from tiered_mq.broker.txn import log_format as fmt
from tiered_mq.broker.txn import state as sm
from tiered_mq.broker.txn.state import TxnMetadata, TxnState
from tiered_mq.topic_partition import TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def fresh() -> TxnMetadata:
    return TxnMetadata("tx", 5, 0, 60_000)


def test_add_partitions_starts_and_extends_the_transaction() -> None:
    m = sm.add_partitions(fresh(), 5, 0, [A0], now_ms=100)
    assert (m.state, m.partitions, m.start_ms) == (TxnState.ONGOING, {A0}, 100)
    m = sm.add_partitions(m, 5, 0, [A1, B0], now_ms=200)
    assert m.partitions == {A0, A1, B0} and m.start_ms == 100  # start kept
    assert not m.expired(60_100) and m.expired(60_101)


def test_commit_path_and_retry() -> None:
    m = sm.add_partitions(fresh(), 5, 0, [A0], now_ms=1)
    prepared = sm.end_txn(m, 5, 0, commit=True, now_ms=2)
    assert prepared is not None and prepared.state is TxnState.PREPARE_COMMIT
    with pytest.raises(errors.ConcurrentTransactionsError):
        sm.end_txn(prepared, 5, 0, commit=True, now_ms=3)
    with pytest.raises(errors.ConcurrentTransactionsError):
        sm.add_partitions(prepared, 5, 0, [A1], now_ms=3)
    done = sm.complete(prepared, now_ms=4)
    assert done.state is TxnState.COMPLETE_COMMIT and done.partitions == set()
    assert sm.end_txn(done, 5, 0, commit=True, now_ms=5) is None  # a retried EndTxn
    with pytest.raises(errors.InvalidTxnStateError):
        sm.end_txn(done, 5, 0, commit=False, now_ms=5)
    # the next transaction starts fresh
    nxt = sm.add_partitions(done, 5, 0, [B0], now_ms=6)
    assert nxt.partitions == {B0} and nxt.start_ms == 6


def test_abort_path() -> None:
    m = sm.add_partitions(fresh(), 5, 0, [A0], now_ms=1)
    prepared = sm.end_txn(m, 5, 0, commit=False, now_ms=2)
    assert prepared is not None and prepared.state is TxnState.PREPARE_ABORT
    with pytest.raises(errors.InvalidTxnStateError):
        sm.end_txn(prepared, 5, 0, commit=True, now_ms=3)
    assert sm.complete(prepared, 4).state is TxnState.COMPLETE_ABORT


def test_end_without_transaction_is_invalid_state() -> None:
    with pytest.raises(errors.InvalidTxnStateError):
        sm.end_txn(fresh(), 5, 0, commit=True, now_ms=1)
    with pytest.raises(errors.InvalidTxnStateError):
        sm.complete(fresh(), 1)


def test_fencing() -> None:
    m = sm.add_partitions(fresh(), 5, 0, [A0], now_ms=1)
    with pytest.raises(errors.InvalidProducerIdMappingError):
        sm.add_partitions(m, 6, 0, [A1], now_ms=2)
    with pytest.raises(errors.ConcurrentTransactionsError):
        sm.init_existing(m, 1000, now_ms=2)  # ongoing: must be aborted first
    fenced = sm.fence_and_abort(m, now_ms=2)
    assert (fenced.producer_epoch, fenced.state) == (1, TxnState.PREPARE_ABORT)
    with pytest.raises(errors.InvalidProducerEpochError):
        sm.end_txn(fenced, 5, 0, commit=True, now_ms=3)  # the zombie
    done = sm.complete(fenced, 3)
    bumped = sm.init_existing(done, 2000, now_ms=4)
    assert (bumped.producer_epoch, bumped.state, bumped.timeout_ms) == (2, TxnState.EMPTY, 2000)
    assert not sm.needs_new_producer_id(bumped)
    assert sm.needs_new_producer_id(bumped.replace(producer_epoch=sm.MAX_EPOCH))


def test_log_format_round_trip_and_layout() -> None:
    m = TxnMetadata("tx-é", 9, 3, 1500, TxnState.ONGOING, {A1, A0, B0}, 10, 20)
    key = fmt.encode_key(m.transactional_id)
    assert key == struct.pack(">hh", 0, 5) + "tx-é".encode()
    assert fmt.decode_key(key) == m.transactional_id
    value = fmt.encode_value(m)
    assert value[:17] == struct.pack(">hqhib", 0, 9, 3, 1500, 1)
    assert value[-16:] == struct.pack(">qq", 20, 10)
    assert fmt.decode_value(m.transactional_id, value) == m
    empty = TxnMetadata("x", 1, 0, 100)
    assert fmt.decode_value("x", fmt.encode_value(empty)) == empty
    with pytest.raises(ValueError):
        fmt.decode_value("x", value[:20])
    with pytest.raises(ValueError):
        fmt.decode_key(struct.pack(">hh", 1, 0))


def test_partition_for_matches_kafka() -> None:
    # Java: "tx".hashCode() == 116 * 31 + 120 == 3716; 3716 % 50 == 16
    assert fmt.partition_for("tx", 50) == 16
    assert all(0 <= fmt.partition_for(f"id-{i}", 7) < 7 for i in range(100))
