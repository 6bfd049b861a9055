"""Integration fixtures: brokers started as `tiered-mq dev` subprocesses.

- ``broker_factory(**kwargs)``: start a BrokerProcess (data dir under the test's tmp_path;
  kwargs as BrokerProcess: ``port``, ``extra_args``, ``env``); every one is stopped at teardown.
- ``broker``: one started broker for the test.
- ``shared_broker``: one broker for a whole test module (for tests that only add topics).
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer

from tests.integration.broker_process import BrokerProcess

BrokerFactory = Callable[..., BrokerProcess]


@pytest.fixture(scope="session", autouse=True)
def _sigint_reaches_children() -> Iterator[None]:
    """The processes these tests start get SIGINT's default disposition, as from a terminal.
    A pytest run in the background by a non-interactive shell (``cmd &`` in a script) starts
    with SIGINT ignored, and an ignored signal stays ignored across exec: the CLI's Ctrl-C
    tests then sent a SIGINT the command never saw and waited out its timeout. A Python
    handler, unlike SIG_IGN, is reset to the default on exec, so one installed here is enough."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def broker_factory(tmp_path: Path) -> Iterator[BrokerFactory]:
    started: list[BrokerProcess] = []
    counter = itertools.count()

    def make(**kwargs: Any) -> BrokerProcess:
        data_dir = kwargs.pop("data_dir", None) or tmp_path / f"broker-{next(counter)}"
        broker = BrokerProcess(data_dir, **kwargs)
        started.append(broker)
        return broker.start()

    try:
        yield make
    finally:
        for b in started:
            b.stop()


@pytest.fixture
def broker(broker_factory: BrokerFactory) -> BrokerProcess:
    return broker_factory()


@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("shared") / "data") as b:
        yield b


@pytest.fixture
def consumers() -> Iterator[list[Consumer]]:
    """confluent-kafka consumers a test makes; those it did not close are closed after it."""
    made: list[Consumer] = []
    yield made
    for c in made:
        try:
            c.close()
        except RuntimeError:
            pass  # already closed by the test
