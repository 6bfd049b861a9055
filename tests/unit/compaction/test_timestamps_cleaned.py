"""A cleaned segment is indexed by the batches written, not the batches read: the time index
and the segment's max timestamp are those of the records kept (Kafka's filterTo), so
ListOffsets -3 and timestamp lookups see the greatest timestamp still in the log."""

from pathlib import Path

from tiered_mq.hot.log_segment import LogSegment
from tiered_mq.record.records import encode_batch

from .helpers import TP, Clock, cleaner, open_log

NOW = 1_000_000


async def test_a_cleaned_segment_keeps_the_max_timestamp_of_its_records(tmp_path: Path) -> None:
    clock = Clock(NOW)
    log = open_log(tmp_path / "t-0", clock, segment_bytes="100000", index_interval_bytes="1")
    # one batch: a stamped NOW + 5000 and b NOW + 3000; then a again, stamped older
    first = [(b"a", b"v", [], NOW + 5000), (b"b", b"v", [], NOW + 3000)]
    log.append_as_leader(bytearray(encode_batch(first)), 0)
    log.append_as_leader(bytearray(encode_batch([(b"a", b"v", [], NOW + 1000)])), 0)
    log.roll()
    c, partition = cleaner(log, clock)
    assert await c.clean_partition(TP, partition) is not None
    await c.close()
    cleaned: LogSegment = log.segments()[0]
    assert cleaned.max_timestamp() == NOW + 3000
    assert cleaned.time_index.entries()[-1][0] == NOW + 3000
    assert log.offset_of_max_timestamp() == (1, NOW + 3000)  # ListOffsets -3: b, not nothing
    assert log.offset_for_timestamp(NOW + 2000) == (1, NOW + 3000)
    log.close()
    reopened = open_log(tmp_path / "t-0", clock)
    assert reopened.offset_of_max_timestamp() == (1, NOW + 3000)
    reopened.close()
