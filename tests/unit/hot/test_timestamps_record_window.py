"""Each record's timestamp against message.timestamp.before/after.max.ms (Kafka's
LogValidator), not only the batch's first and max timestamps."""

import pytest

from tiered_mq.errors import InvalidTimestampError
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.record_timestamps import check_record_timestamps, needs_record_check
from tiered_mq.record.batch import iter_batches
from tiered_mq.record.compression import LZ4
from tiered_mq.record.records import encode_batch

NOW = 1_800_000_000_000
DAY = 86_400_000
WINDOW = LogConfig.from_properties({"message.timestamp.before.max.ms": str(DAY)})


def batch(*timestamps: int) -> bytes:
    return encode_batch([(b"k", b"v", [], ts) for ts in timestamps], compression=LZ4)


def test_an_old_record_after_a_new_first_record_is_refused() -> None:
    records = batch(NOW, NOW - 2 * DAY)
    batches = iter_batches(records)
    assert needs_record_check(WINDOW, batches)
    with pytest.raises(InvalidTimestampError) as refused:
        check_record_timestamps(records, batches, WINDOW, NOW)
    [(index, message)] = refused.value.record_errors
    assert index == 1 and "offset 1 is out of range" in message


def test_records_in_the_window_or_without_timestamp_pass() -> None:
    records = batch(NOW, NOW - DAY, -1, NOW + 1000)
    check_record_timestamps(records, iter_batches(records), WINDOW, NOW)


def test_no_decoding_without_before_max_ms_or_with_log_append_time() -> None:
    batches = iter_batches(batch(NOW, NOW - 2 * DAY))
    assert not needs_record_check(LogConfig(), batches)
    lat = LogConfig.from_properties(
        {"message.timestamp.before.max.ms": str(DAY), "message.timestamp.type": "LogAppendTime"}
    )
    assert not needs_record_check(lat, batches)
    # one record too: its timestamp is baseTimestamp + its delta, not the header's
    assert needs_record_check(WINDOW, iter_batches(batch(NOW)))
