"""A topic's remote storage turned off with ``remote.log.delete.on.disable=true`` (KIP-950) moves
its log start offset to the local log start offset inside the AlterConfigs call, durably, as
Kafka's config handler does, not in the uploader's next pass; on a real broker, SeaweedFS and
confluent-kafka.

The pass is held by causing it: the S3 server is frozen (SIGSTOP) while new segments roll, so
the uploader's pass hangs in an upload. The change was answered, yet ListOffsets EARLIEST still
answered offset 0, held only by the bucket, and an ``auto.offset.reset=earliest`` consumer was
sent to the frozen cold tier and got nothing. Then the broker is killed (SIGKILL) before any
pass ran, and restarted with tiering on (the remote segments are then deleted) and off: the log
start stays the local log start and every record on disk is read from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer

from tests.integration.broker_process import BrokerProcess
from tests.integration.client_helpers import take
from tests.integration.s3_server import SeaweedFS, seaweedfs  # noqa: F401  (the fixture)
from tests.integration.test_cold_url_change import configs, earliest_local
from tests.integration.test_tieroff_s3 import (
    COUNT,
    LOCAL,
    earliest,
    segment_objects,
    set_incrementally,
)
from tests.integration.tiered_support import TieredBroker, message, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "turned-off"
MORE = 1000  # rolled while the bucket is frozen: the uploader's pass hangs uploading them
OFF = configs("remote.log.storage.system.enable=false")


def read_from_earliest(bootstrap: str, group: str, count: int) -> list[int]:
    """The offsets an ``auto.offset.reset=earliest`` consumer of a new group reads (at most
    ``count``, within 20 s); checks the first record's key and value. Reading from offset 0
    would give ``count`` offsets from 0, which no expected list is."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group}
        | {"auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([TOPIC])
        got = take(consumer, count, timeout=20)
    finally:
        consumer.close()
    if got:
        assert (got[0].key(), got[0].value()) == message(got[0].offset())
    return [m.offset() for m in got]


def test_the_log_start_moves_with_the_change_and_survives_a_kill(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    total = COUNT + MORE
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(TOPIC, **LOCAL)
        b.produce(TOPIC, 0, COUNT)
        wait_until(lambda: earliest_local(b.process.port, TOPIC) > 0, what="uploads")
        port = b.process.port
        with seaweedfs.hung():
            b.produce(TOPIC, COUNT, MORE)  # segments roll: the pass hangs uploading them
            local_start = earliest_local(port, TOPIC)
            assert 0 < local_start < COUNT  # below it the records are in the bucket only
            set_incrementally(
                b.bootstrap,
                TOPIC,
                remote_storage_enable="false",
                remote_log_delete_on_disable="true",
            )
            # answered: the change is in force, though no pass could run
            assert earliest(port, TOPIC) == local_start
            expected = list(range(local_start, total))
            assert read_from_earliest(b.bootstrap, "during", len(expected)) == expected
            b.process.kill()  # before any pass ran: the bucket still holds every segment
        assert segment_objects(b, TOPIC)

        b.process.start()  # tiering on: the pass deletes what the killed broker left
        assert earliest(b.process.port, TOPIC) == local_start
        wait_until(lambda: not segment_objects(b, TOPIC), what="the remote log to be deleted")
        assert read_from_earliest(b.bootstrap, "tiering-on", len(expected)) == expected
        b.process.stop()

        with BrokerProcess(b.process.data_dir, extra_args=OFF) as off:
            assert earliest(off.port, TOPIC) == earliest_local(off.port, TOPIC) == local_start
            assert read_from_earliest(off.bootstrap, "tiering-off", len(expected)) == expected
