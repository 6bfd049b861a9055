"""How ``produce`` and ``consume`` look for the broker before they read or write anything: the
admin commands' all-brokers-down check (``client/admin_base.py``) for a producer or consumer.

``BrokerWatch`` is the client's librdkafka ``error_cb``: it keeps the last connection error and
whether every broker was reported down (``_ALL_BROKERS_DOWN``). ``reach`` asks for the topic's
partitions in rounds of ``ROUND_S``; a round in which no broker could be reached (librdkafka's
``_TRANSPORT``) after every broker was reported down ends the look-up at once with ``_TRANSPORT:
metadata for T: no broker could be reached: <librdkafka's last connection error>``, as the admin
commands say it: a port nobody listens on, a name that does not resolve or a broker that is down
fails within about a second, not after ``REACH_TIMEOUT_S``. While no report came (a name whose
resolution hangs, a listener that accepts and never answers), the look-up gives up after
``REACH_TIMEOUT_S`` (10 s), or ``timeout`` if shorter, with the same error (``_TRANSPORT``);
without a connection error to name, its detail is ``no answer within Ns`` (N: that bound),
whether the bound or librdkafka's every-broker-down report (its ApiVersions request timing out
after 10 s) came first. A broker that was reached but has not answered yet (``_TIMED_OUT``: an
overloaded one) gets the rest of ``timeout`` in one call. A dead address before a live one in
``-b`` is no error: librdkafka reports every broker down only when the live one is down too.

Once the look-up has succeeded (``started``), a broker lost later is no error: a client keeps
retrying (as Kafka's do). For ``consume``, ``BrokerWatch(note_when_lost=True)`` then writes one
stderr line when every broker is gone, at most once every ``NOTE_EVERY_S`` (librdkafka's own
log lines show only with ``-v``, so the user would otherwise see silence).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import click
import confluent_kafka

from tiered_mq.client._lookup import UNREACHABLE
from tiered_mq.client.errors import ClientError

ROUND_S = 0.5
"""One round of the look-up while no broker is reached: the all-brokers-down report is read
between two."""
REACH_TIMEOUT_S = 10.0
"""How long the look-up goes on while no broker can be reached and librdkafka has not reported
every broker down."""
NOTE_EVERY_S = 60.0
"""How often, at most, ``consume`` says that every broker is gone."""


class BrokerWatch:
    """librdkafka's ``error_cb`` of the CLI's producer or consumer (served by its polls)."""

    def __init__(self, note_when_lost: bool = False) -> None:
        self.started = False
        """Set once ``reach`` has found the broker."""
        self.all_down = False
        """librdkafka reported every broker down since the last round of ``reach``."""
        self.last_error = ""
        """librdkafka's last other error (a failed connection), its text."""
        self._note_when_lost = note_when_lost
        self._noted = -NOTE_EVERY_S

    def __call__(self, err: Any) -> None:
        name = err.name()
        if name != "_ALL_BROKERS_DOWN":
            self.last_error = (err.str() or "").strip()
            return
        self.all_down = True
        now = time.monotonic()
        if self.started and self._note_when_lost and now - self._noted >= NOTE_EVERY_S:
            self._noted = now
            click.echo(
                f"Warning: {name}: lost the connection to every broker; retrying"
                " (Ctrl-C to stop, -v shows librdkafka's log)",
                err=True,
            )

    def unreachable(self, context: str, waited: float) -> ClientError:
        """The admin commands' error for a cluster none of whose brokers could be reached,
        ``<context>: no broker could be reached: <detail>``: the detail is librdkafka's last
        connection error, or, when none was reported (a listener that accepts and never
        answers, a name whose resolution hangs), ``no answer within <waited>s``."""
        detail = self.last_error or f"no answer within {waited:g}s"
        message = f"{context}: no broker could be reached: {detail}"
        return ClientError("_TRANSPORT", message, confluent_kafka.KafkaError._TRANSPORT, True)


def reach(
    partitions_for: Callable[[float], list[int]],
    serve: Callable[[], object],
    watch: BrokerWatch,
    topic: str,
    timeout: float,
) -> list[int]:
    """``partitions_for(seconds)`` (the topic's partition ids) asked as the module's docstring
    says, within ``timeout`` s; ``serve()`` runs the client's callbacks (``watch`` among them)
    after each round. Raises the look-up's ``ClientError`` (a topic's own error at once)."""
    started = time.monotonic()
    deadline = started + timeout
    give_up = min(deadline, started + REACH_TIMEOUT_S)
    bound = give_up - started  # how long the look-up waits for a broker to be reached
    slow = False  # a broker was reached but has not answered: the rest in one call
    while True:
        left = max(0.01, deadline - time.monotonic())
        round_s = left if slow else min(ROUND_S, left)
        round_end = time.monotonic() + round_s
        try:
            partitions = partitions_for(round_s)
        except ClientError as err:
            if err.name not in UNREACHABLE | {"_TIMED_OUT"}:
                raise
            serve()
            if err.name in UNREACHABLE and (watch.all_down or time.monotonic() >= give_up):
                # the same error whichever comes first: a listener that accepts and never
                # answers is reported down (librdkafka's 10 s ApiVersions timeout) about when
                # REACH_TIMEOUT_S ends the look-up
                waited = min(bound, round(time.monotonic() - started, 1))
                raise watch.unreachable(f"metadata for {topic}", waited) from err
            watch.all_down = False  # a broker was up in the round: an older report
            if err.name == "_TIMED_OUT":
                slow, give_up = True, deadline
            if time.monotonic() >= give_up:
                raise
            time.sleep(max(0.0, min(round_end, give_up) - time.monotonic()))  # no busy loop
        else:
            watch.started = True
            return partitions
