"""Kafka transactions on one broker.

- :mod:`.partition_txn`: the partition side: aborted transactions (``.txnindex``), log replay;
- :mod:`.log_format`: ``__transaction_state`` key/value records (Kafka's v0 formats);
- :mod:`.state`: transaction metadata and its state machine (pure, unit-tested);
- :mod:`.coordinator`: the transaction coordinator behind the transactional APIs;
- :mod:`.markers`: the one way a COMMIT/ABORT marker is written.

TxnOffsetCommit offsets are held until the transaction ends by the group coordinator
(broker/group/txn_offsets.py).
"""
