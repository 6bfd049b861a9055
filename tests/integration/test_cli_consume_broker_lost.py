"""``tiered-mq consume`` when its broker dies mid-run: librdkafka's own log lines are shown only
with ``-v``, and the consumer keeps retrying, so the CLI itself says once that every broker is
gone (as kafka-console-consumer.sh warns), instead of going silent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess
from tiered_mq.client import Producer, ProducerConfig

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-c", "import sys; from tiered_mq.cli import main; sys.exit(main())"]
ENV = {k: v for k, v in os.environ.items() if k != "TIERED_MQ_BOOTSTRAP"}


def test_consume_says_when_every_broker_is_gone(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        producer = Producer(ProducerConfig(bootstrap_servers=broker.bootstrap))
        producer.send("lost", b"first")
        producer.flush()
        args = ["consume", "lost", "--offset", "earliest", "-b", broker.bootstrap]
        consumer = subprocess.Popen(
            CLI + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
        )
        assert consumer.stdout is not None
        assert consumer.stdout.readline() == b"first\n"
        broker.kill()
        time.sleep(8)  # librdkafka reports _ALL_BROKERS_DOWN after its reconnect attempts
        consumer.send_signal(signal.SIGINT)
        _, err = consumer.communicate(timeout=30)
    finally:
        broker.stop()
    stderr = err.decode()
    assert stderr.count("_ALL_BROKERS_DOWN: lost the connection to every broker") == 1, stderr
    assert "Processed a total of 1 messages" in stderr
