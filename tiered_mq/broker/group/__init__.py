"""Consumer groups (classic protocol) and committed offsets.

Modules: ``group`` (state machine and member metadata), ``membership`` (join/sync/heartbeat/
leave), ``offsets`` (offset cache over ``__consumer_offsets``), ``log_format`` (Kafka's record
formats of that topic), ``config``, ``seams`` (Protocols for storage and timers), and
``coordinator`` (``GroupCoordinator``, what the broker and the handlers use).
"""
