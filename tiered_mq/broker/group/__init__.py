"""Consumer groups (classic protocol) and committed offsets.

Modules: ``group`` (state machine and member metadata), ``membership`` (join/sync/heartbeat/
leave) over ``rebalance`` (the join phase, session timers, member removal), ``offsets`` (offset
cache over ``__consumer_offsets``) with ``txn_offsets`` (transactional offsets pending a
marker), ``log_format`` (Kafka's record formats of that topic), ``consumer_protocol`` (the
``consumer`` protocol's subscription metadata), ``config``, ``seams`` (Protocols for storage and
timers), ``commits`` (OffsetCommit, TxnOffsetCommit), ``admin`` (list, describe, delete groups
and offsets, offset expiry) and ``coordinator`` (``GroupCoordinator``, what the broker and the
handlers use; it checks each request, then hands it to the others).
"""
