"""Tiered storage with bad input, on SeaweedFS: a corrupt segment object is never served (the
fetch gets KAFKA_STORAGE_ERROR and the broker log names the object), wrong credentials and a
missing bucket stop the broker at start with a clear reason, an unreachable endpoint does not
(hot data keeps flowing)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.tiered_support import S3_ENV, TieredBroker, broker_args, message, wait_until
from tiered_mq.cold import layout
from tiered_mq.record.batch import iter_batches

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KAFKA_STORAGE_ERROR = 56


@pytest.mark.parametrize("where", ["record", "base-offset"])
def test_corrupt_object_is_never_served(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
    where: str,
) -> None:
    topic = "corrupt"
    with TieredBroker(tmp_path, seaweedfs) as b:
        b.create_topic(topic, **{"local.retention.bytes": "1"})
        b.produce(topic, 0, 1500)
        wait_until(lambda: len(b.local_segments(topic)) == 1, what="segments in the bucket")
        b.process.stop()  # the chunk cache is emptied at start: the next read is from S3
        first, victim = b.remote_segments(topic)[:2]
        key = victim.objects[layout.LOG]
        assert key is not None
        data = bytearray(b.store.get(key)[0])
        batches = iter_batches(bytes(data))
        assert len(batches) >= 2
        position, header = batches[1]
        # inside the CRC-covered records, or the base offset (outside the CRC)
        data[position + (header.size // 2 if where == "record" else 6)] ^= 0xFF
        b.store.put(key, bytes(data))
        b.process.start()

        answer = b.fetch(topic, victim.base_offset)
        assert answer["error_code"] == KAFKA_STORAGE_ERROR
        assert not answer["records"]
        assert key in b.process.log_tail(400)  # the broker names the object
        assert b.fetch(topic, 0)["error_code"] == 0  # other segments still served
        assert b.metric("tiered_mq_remote_fetch_errors_total") > 0

        # a real consumer gets the good segment, then nothing (retries), never wrong bytes
        consumer = Consumer(
            {"bootstrap.servers": b.bootstrap, "group.id": "corrupt", "enable.auto.commit": False}
        )
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = []
        deadline = time.monotonic() + 6
        try:
            while time.monotonic() < deadline:
                for m in consumer.consume(500, timeout=0.5):
                    if m.error() is None:
                        got.append((m.offset(), m.key(), m.value()))
        finally:
            consumer.close()
        assert got == [(i, *message(i)) for i in range(first.end_offset + 1)]


def test_missing_bucket_fails_the_start(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
) -> None:
    args = broker_args(seaweedfs, "no-such-bucket-tmq", 0)
    broker = BrokerProcess(tmp_path / "b", extra_args=args, env=S3_ENV, startup_timeout=20)
    with pytest.raises(RuntimeError, match="exited") as failure:
        broker.start()
    assert "no-such-bucket-tmq" in str(failure.value)
    assert "does not exist" in str(failure.value)


def test_unreachable_endpoint_still_serves_hot_data(tmp_path: Path) -> None:
    args = [
        "--cold-url",
        "s3://away/tmq",
        "--s3-endpoint",
        f"http://127.0.0.1:{free_port()}",
        "--config",
        "remote.storage.enable=true",
    ]
    env = {**S3_ENV, "AWS_MAX_ATTEMPTS": "1"}
    with BrokerProcess(tmp_path / "b", extra_args=args, env=env) as broker:
        assert "unreachable at start" in broker.log_tail()
        tb = TieredBroker.__new__(TieredBroker)  # reuse the produce helper without a bucket
        tb.process = broker
        tb.produce("hot", 0, 200)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "hot"})
        consumer.assign([TopicPartition("hot", 0, 0)])
        try:
            got = []
            while len(got) < 200:
                batch = consumer.consume(200, timeout=10)
                assert batch
                got += [(m.offset(), m.key(), m.value()) for m in batch]
        finally:
            consumer.close()
        assert got == [(i, *message(i)) for i in range(200)]


class SeaweedFSWithIAM(SeaweedFS):
    """SeaweedFS whose S3 gateway accepts only the test's access key."""

    def command(self) -> list[str]:
        config = self.data_dir / "s3.json"
        identity = {
            "name": "tmq",
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        config.write_text(json.dumps({"identities": [identity]}))
        return [*super().command(), f"-s3.config={config}"]


@pytest.fixture
def iam_seaweedfs() -> Iterator[SeaweedFS]:
    server = SeaweedFSWithIAM()
    server.start()
    try:
        yield server
    finally:
        server.close()


def test_wrong_credentials_fail_the_start(tmp_path: Path, iam_seaweedfs: SeaweedFS) -> None:
    bucket = iam_seaweedfs.new_bucket()
    args = broker_args(iam_seaweedfs, bucket, 0)
    env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": "wrong-secret"}
    broker = BrokerProcess(tmp_path / "b", extra_args=args, env=env, startup_timeout=20)
    with pytest.raises(RuntimeError, match="exited") as failure:
        broker.start()
    assert "signature mismatch" in str(failure.value) or "access denied" in str(failure.value)
    # the right credentials work against the same server
    with BrokerProcess(tmp_path / "ok", extra_args=args, env=S3_ENV) as ok:
        assert "tiered storage on" in ok.log_tail()
