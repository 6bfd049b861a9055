"""Broker CPU per request, by request type, as instruction counts under callgrind.

Wall-clock timing on a shared two-core machine moves by 10-20% between runs; instruction
counts under ``valgrind --tool=callgrind`` are reproducible to a fraction of a percent, so a
cut of 3% shows. The script re-runs itself under callgrind (``PYTHONHASHSEED=0``) with
``--dump-before=getppid``: the measured process calls ``os.getppid()`` right before and right
after the measured requests of each case, so each case's instructions land in a dump of their
own (nothing else in the broker calls getppid). Printed: instructions per request, the
average over ``--requests`` requests after ``--warmup`` requests of the same kind.

The broker is in process (tests/unit/broker/conftest.py's settings: one offsets partition,
``group.initial.rebalance.delay.ms=0``), on a real data directory; requests go through
``KafkaConnection._handle`` as bench_produce_path.py does: header and body decode, the
handler, the response encode; no socket. Each case's frames are built before its first
marker. Cases (the versions librdkafka 2.x sends):

- Produce v8 of 50 partitions in one request, one batch of 10 x 100 B records each, acks=1,
  acks=-1, and acks=-1 idempotent (producer id, epoch and consecutive sequences);
- Fetch v11 of the same 50 partitions: from the last batch of each (a consumer following the
  log end), and at the log end (nothing to return, max_wait_ms=0); the long poll of an idle
  consumer of 2,000 empty partitions (max_wait_ms=10: registered, expired, answered empty);
- Heartbeat v3, OffsetCommit v7 of 10 partitions, OffsetFetch v7 of the same, a
  JoinGroup v5 + SyncGroup v3 round of a stable one-member group (a rebalance to the next
  generation), Metadata v8 of 1 topic and of all topics (500 and __consumer_offsets),
  ListOffsets v7 (latest) of 10 partitions, ApiVersions v3.

Compare figures between runs of the same cases (``--only`` changes what ran before a case,
and so its count by a few percent). A case whose requests wait (the JoinGroup+SyncGroup round,
the long poll) or yield to the event loop also counts what the loop runs meanwhile (other
tasks' callbacks, timers): its figure moves between runs; the others move by well under 1%.
Takes about two minutes. ``--profile CASE`` instead runs that case under cProfile, without
valgrind, and prints where the time goes (the functions to look at). Usage::

    python benchmarks/bench_request_cpu.py [--requests 20] [--warmup 5] [--only produce]
    python benchmarks/bench_request_cpu.py --profile fetch-50-data
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.server import KafkaConnection
from tiered_mq.broker.topic_registry import TopicRequest
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.protocol.codec import decode_response, encode_request
from tiered_mq.record.file_records import FileRegion
from tiered_mq.record.records import encode_batch
from tiered_mq.topic_partition import TopicPartition

TOPIC = "bench"
PARTITIONS = 50
IDLE_TOPIC = "idle"
IDLE_PARTITIONS = 2000
OTHER_TOPICS = 499  # with TOPIC: 500 topics
GROUP = "bench-group"
RECORDS = 10
VALUE = 100
PRODUCER_ID = 1000


Request = tuple[int, int, dict[str, Any]]  # api key, version, body


@dataclass
class Case:
    """``steps(i)``: the requests of round i (one, or JoinGroup then SyncGroup)."""

    name: str
    steps: Callable[[int], list[Request]]


def one(
    api_key: int, version: int, body: Callable[[int], dict[str, Any]]
) -> Callable[[int], list[Request]]:
    return lambda i: [(api_key, version, body(i))]


class Bench:
    def __init__(self, conn: KafkaConnection, args: argparse.Namespace) -> None:
        self.conn = conn
        self.args = args
        self.correlation = 0
        self.names: list[str] = []
        self.profile: cProfile.Profile | None = None

    def frame(self, api_key: int, version: int, body: dict[str, Any]) -> bytes:
        self.correlation += 1
        return bytes(encode_request(api_key, version, self.correlation, "bench", body)[4:])

    async def call(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """One request outside any measurement, its response decoded."""
        chunks = await self.conn._handle(bytearray(self.frame(api_key, version, body)))
        assert chunks
        return _decode(api_key, version, chunks)

    def wants(self, name: str) -> bool:
        """Whether the case of this name is measured in this run."""
        args = self.args
        if args.profile:
            return bool(name == args.profile)
        return not args.only or any(name.startswith(o) for o in args.only)

    async def run(self, case: Case) -> None:
        args = self.args
        if not self.wants(case.name):
            return
        rounds = [case.steps(i) for i in range(args.warmup + args.requests)]
        frames = [[self.frame(*step) for step in steps] for steps in rounds]
        handle = self.conn._handle
        for warm in frames[: args.warmup]:
            for frame in warm:
                await handle(bytearray(frame))
        measured = [bytearray(f) for fs in frames[args.warmup :] for f in fs]
        chunks = None
        if args.profile:
            self.profile = cProfile.Profile()
            self.profile.enable()
        os.getppid()  # callgrind dump: everything before this case's measured requests
        for frame in measured:
            chunks = await handle(frame)
        os.getppid()  # callgrind dump: the measured requests
        if self.profile is not None:
            self.profile.disable()
        assert chunks
        api_key, version, _body = rounds[-1][-1]
        _check(case.name, _decode(api_key, version, chunks))
        self.names.append(case.name)


def _decode(api_key: int, version: int, chunks: list[Any]) -> dict[str, Any]:
    """The response body; a fetch's file regions are read for it."""
    data = b"".join(c.read() if isinstance(c, FileRegion) else bytes(c) for c in chunks)
    return decode_response(api_key, version, data[4:])


def _check(name: str, response: Any) -> None:
    """Every error_code in the response is 0 (the case measured the path it means to)."""
    if isinstance(response, dict):
        for key, value in response.items():
            if key == "error_code":
                assert value == 0, f"{name}: {response}"
            else:
                _check(name, value)
    elif isinstance(response, list):
        for item in response:
            _check(name, item)


def _produce(acks: int, batches: list[bytes]) -> dict[str, Any]:
    return {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 30000,
        "topic_data": [
            {
                "name": TOPIC,
                "partition_data": [{"index": p, "records": b} for p, b in enumerate(batches)],
            }
        ],
    }


def _fetch(topic: str, offsets: list[int], max_wait_ms: int) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "max_bytes": 52428800,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": 0,
                        "fetch_offset": offset,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1048576,
                    }
                    for p, offset in enumerate(offsets)
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


def _join_body(member_id: str) -> dict[str, Any]:
    return {
        "group_id": GROUP,
        "session_timeout_ms": 45000,
        "rebalance_timeout_ms": 300000,
        "member_id": member_id,
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00"}],
    }


def _sync_body(member_id: str, generation: int) -> dict[str, Any]:
    return {
        "group_id": GROUP,
        "generation_id": generation,
        "member_id": member_id,
        "group_instance_id": None,
        "assignments": [{"member_id": member_id, "assignment": b"\x00\x01" + b"\x00" * 10}],
    }


async def _cases(bench: Bench, broker: Broker) -> None:
    run = bench.run
    items = [(b"k%d" % i, b"v" * VALUE, None, 1_700_000_000_000 + i) for i in range(RECORDS)]
    plain = [encode_batch(items) for _ in range(PARTITIONS)]
    await run(Case("produce-50-acks1", one(ApiKey.PRODUCE, 8, lambda i: _produce(1, plain))))
    await run(Case("produce-50-acks-1", one(ApiKey.PRODUCE, 8, lambda i: _produce(-1, plain))))

    def idempotent(i: int) -> dict[str, Any]:
        sequence = i * RECORDS
        batch = encode_batch(
            items, producer_id=PRODUCER_ID, producer_epoch=0, base_sequence=sequence
        )
        return _produce(-1, [batch] * PARTITIONS)

    await run(Case("produce-50-acks-1-idempotent", one(ApiKey.PRODUCE, 8, idempotent)))

    if not any(bench.wants(n) for n in ("produce-50-acks1", "produce-50-acks-1")):
        _check("setup", await bench.call(ApiKey.PRODUCE, 8, _produce(1, plain)))
    manager = broker.replica_manager
    partitions = [manager.get_partition(TopicPartition(TOPIC, p)) for p in range(PARTITIONS)]
    ends = [p.log.log_end_offset for p in partitions]
    last = [max(0, end - RECORDS) for end in ends]
    await run(Case("fetch-50-data", one(ApiKey.FETCH, 11, lambda i: _fetch(TOPIC, last, 0))))
    await run(Case("fetch-50-empty", one(ApiKey.FETCH, 11, lambda i: _fetch(TOPIC, ends, 0))))

    # a stable one-member group
    member = (await bench.call(ApiKey.JOIN_GROUP, 5, _join_body("")))["member_id"]
    joined = await bench.call(ApiKey.JOIN_GROUP, 5, _join_body(member))
    gen = joined["generation_id"]
    _check("setup", await bench.call(ApiKey.SYNC_GROUP, 3, _sync_body(member, gen)))
    heartbeat = {"group_id": GROUP, "generation_id": gen, "member_id": member}
    heartbeat["group_instance_id"] = None
    await run(Case("heartbeat", one(ApiKey.HEARTBEAT, 3, lambda i: heartbeat)))
    tps = list(range(10))

    def commit(i: int) -> dict[str, Any]:
        offsets = [
            {"partition_index": p, "committed_offset": i, "committed_leader_epoch": -1} for p in tps
        ]
        for o in offsets:
            o["committed_metadata"] = ""
        return {
            "group_id": GROUP,
            "generation_id_or_member_epoch": gen,
            "member_id": member,
            "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": offsets}],
        }

    await run(Case("offset-commit-10", one(ApiKey.OFFSET_COMMIT, 7, commit)))
    fetch_offsets = {"group_id": GROUP, "require_stable": True}
    fetch_offsets["topics"] = [{"name": TOPIC, "partition_indexes": tps}]
    await run(Case("offset-fetch-10", one(ApiKey.OFFSET_FETCH, 7, lambda i: fetch_offsets)))

    def rebalance(i: int) -> list[Request]:
        # each round is a rebalance: the generation after the setup's is gen + 1 + i
        join = (ApiKey.JOIN_GROUP, 5, _join_body(member))
        return [join, (ApiKey.SYNC_GROUP, 3, _sync_body(member, gen + 1 + i))]

    await run(Case("join+sync-group", rebalance))

    def metadata(topics: list[dict[str, str]] | None) -> dict[str, Any]:
        return {
            "topics": topics,
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }

    one_topic = metadata([{"name": TOPIC}])
    all_topics = metadata(None)
    await run(Case("metadata-1-topic", one(ApiKey.METADATA, 8, lambda i: one_topic)))
    await run(Case("metadata-all-500-topics", one(ApiKey.METADATA, 8, lambda i: all_topics)))
    latest = [{"partition_index": p, "current_leader_epoch": -1, "timestamp": -1} for p in tps]
    list_offsets = {"replica_id": -1, "isolation_level": 0}
    list_offsets["topics"] = [{"name": TOPIC, "partitions": latest}]
    await run(Case("list-offsets-10", one(ApiKey.LIST_OFFSETS, 7, lambda i: list_offsets)))
    versions = {"client_software_name": "librdkafka", "client_software_version": "2.6.1"}
    await run(Case("api-versions", one(ApiKey.API_VERSIONS, 3, lambda i: versions)))

    idle = "fetch-2000-idle-long-poll"
    if bench.wants(idle):
        await broker.topic_registry.create_topic(IDLE_TOPIC, IDLE_PARTITIONS, {})
        empty = [0] * IDLE_PARTITIONS
        await run(Case(idle, one(ApiKey.FETCH, 11, lambda i: _fetch(IDLE_TOPIC, empty, 10))))


async def _inside(args: argparse.Namespace, names_file: Path | None) -> Bench:
    with tempfile.TemporaryDirectory(prefix="bench_request_cpu_") as tmp:
        overrides = {
            "offsets.topic.num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        broker = Broker(BrokerConfig(Path(tmp) / "data", port=0, overrides=overrides))
        await broker.start()
        try:
            others = [TopicRequest(f"topic-{i:03d}", 1) for i in range(OTHER_TOPICS)]
            await broker.topic_registry.create_topics([TopicRequest(TOPIC, PARTITIONS), *others])
            conn = KafkaConnection(broker.server)
            conn.peer = "bench"
            bench = Bench(conn, args)
            await _cases(bench, broker)
        finally:
            await broker.close()
    if names_file is not None:
        names_file.write_text(json.dumps(bench.names))  # noqa: ASYNC240 (after the cases)
    return bench


def _callgrind(args: argparse.Namespace) -> None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.exit("valgrind is not installed (apt-get install -y valgrind)")
    with tempfile.TemporaryDirectory(prefix="bench_request_cpu_cg_") as tmp:
        out = Path(tmp)
        command = [
            valgrind,
            "--tool=callgrind",
            "--dump-before=getppid",
            f"--callgrind-out-file={out}/callgrind.out",
            sys.executable,  # the interpreter itself, not a shim script
            __file__,
            "--inside",
            str(out / "names.json"),
            "--requests",
            str(args.requests),
            "--warmup",
            str(args.warmup),
        ]
        for o in args.only or []:
            command += ["--only", o]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(
            command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        names = json.loads((out / "names.json").read_text())
        totals = {}
        for path in out.glob("callgrind.out.*"):
            number = int(path.name.rsplit(".", 1)[1])
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("totals:") or line.startswith("summary:"):
                    totals[number] = int(line.split()[1])
                    break
    print(f"instructions per request (callgrind, {args.requests} requests after {args.warmup})")
    for k, name in enumerate(names):
        # dump 1: up to the first case's first marker; case k's measured requests: dump 2k + 2
        count = totals[2 * k + 2] / args.requests
        print(f"{name:32} {count:>12,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--only", action="append", help="cases whose names start with this")
    ap.add_argument("--profile", help="run this case under cProfile (no valgrind)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--inside", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside is not None:
        asyncio.run(_inside(args, args.inside))
    elif args.profile:
        args.requests = max(args.requests, 200)
        bench = asyncio.run(_inside(args, None))
        if bench.profile is None:
            sys.exit(f"no case named {args.profile}")
        pstats.Stats(bench.profile).sort_stats("tottime").print_stats(args.top)
    else:
        _callgrind(args)


if __name__ == "__main__":
    main()
