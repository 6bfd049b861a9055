"""Produce (0), served for v3-8 (v0-2 answer UNSUPPORTED_VERSION per partition).

A topic-partition named more than once in a request is appended once, with the records of its
last mention, and answered once (Kafka's KafkaApis collects the request into a map from
TopicPartition to records, so a later entry replaces an earlier one): a client that repeated a
partition by mistake does not get its records written twice.

Per partition, in request order: batch-level validation (exactly one batch, CRC-32C,
magic, base offset 0, size against ``max.message.bytes``, codec, a record count matching the
offset range, the first record's start; zstd needs v7+). The hot path does per-batch work
only: on a topic whose records need no decoding (the default: not compacted,
``compression.type=producer`` or the batch's own codec, no ``message.timestamp.before.max.ms``)
the records inside a CRC-valid batch are stored as sent and the header's maxTimestamp is
trusted. Reading every record as Kafka's LogValidator does costs ~1.1 us a record here, which
cut W1 produce from above 1.0x of Tansu's rate to 0.48x (broker CPU 0.4 -> 2.0 s per million
records). Where the records are decoded anyway (a compacted topic's key check, re-encoding to
the topic's codec, each record's timestamp against ``message.timestamp.before.max.ms``: a
batch stamped out of order may hold an older record than its first, INVALID_TIMESTAMP as in
Kafka), every record is first read as LogValidator reads it (framing, a count matching the
records, offset deltas 0..n-1, nothing after the last record: else INVALID_RECORD,
CORRUPT_MESSAGE before v8) and a CreateTime batch gets its records' highest timestamp as
maxTimestamp. Then the leader append, which rewrites base offsets in the request's own buffer
and writes it to the active segment (zero copy from the socket buffer to the file). A batch
larger than the topic's ``segment.bytes`` fits no segment: the append refuses it with
RECORD_LIST_TOO_LARGE (hot/log_append.py, where Kafka's UnifiedLog.append checks it), nothing
appended, the other partitions unaffected.
acks=0 sends no response at all; acks=1 and acks=-1 answer once the batch is in the log
(single node: the ISR is this broker, so the high watermark moved with the append; acks=-1
needs ``min.insync.replicas`` in-sync replicas, at most as many as the partition has replicas,
as Kafka 3.7+'s effectiveMinIsr; else NOT_ENOUGH_REPLICAS). An acks=0 request
with any partition in error closes the connection instead (Kafka's KafkaApis: the producer
reads no answer, the disconnect makes it refresh its metadata and log the failure). A
duplicate idempotent batch answers its original base offset and appends nothing.
A topic whose ``compression.type`` is not ``producer`` gets its batches re-encoded with that
codec first (recompress.py). A compacted topic refuses records without a key
(compaction/validation.py: INVALID_RECORD, CORRUPT_MESSAGE before v8). These paths decode in
a worker thread: a big batch (up to
``message.max.decompressed.bytes``) never stalls the other connections. A connection's
requests are still handled one at a time, so a producer's batches keep their order.
Transactional batches must come with the request's ``transactional_id`` from the transaction's
current producer epoch, to a partition added with AddPartitionsToTxn (else INVALID_TXN_STATE,
INVALID_PRODUCER_EPOCH or INVALID_PRODUCER_ID_MAPPING; see broker/txn/coordinator.py
``verify_produce``), checked before the work and again under the partition lock, right before
the append (Kafka's verification guard, KIP-890): a transaction that ended while the batch was
re-encoded refuses it, instead of the batch landing after the transaction's marker and holding
the last stable offset forever.
Clients may not write the internal topics (``__consumer_offsets``, ``__transaction_state``):
INVALID_TOPIC_EXCEPTION, as in Kafka (whose own admin client id is let through).
With an authorizer, the principal needs WRITE on each topic (else TOPIC_AUTHORIZATION_FAILED)
and on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition).
Transactional batches without a ``transactional_id`` are TRANSACTIONAL_ID_AUTHORIZATION_FAILED
too, as Kafka's KafkaApis answers them (a null id is never authorized), here per partition
holding one (Kafka refuses the whole request: a client sends no such mix).
``acks`` other than 0, 1 and -1 is INVALID_REQUIRED_ACKS, after the checks Kafka's KafkaApis
makes before ReplicaManager looks at ``acks``: WRITE on the topic, the partition known
(UNKNOWN_TOPIC_OR_PARTITION), and ProduceRequest.validateRecords (no batch, magic other than 2
or a second batch: INVALID_RECORD, CORRUPT_MESSAGE before v8; zstd before v7:
UNSUPPORTED_COMPRESSION_TYPE). Nothing is appended.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any, Final

from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import error_code, error_message, require_topic
from tiered_mq.broker.partition import validate_records
from tiered_mq.broker.recompress import (
    needs_recompression,
    recompress,
    target_codec,
    target_level,
)
from tiered_mq.broker.response_writer import CloseConnection
from tiered_mq.broker.topic_names import is_internal
from tiered_mq.compaction.validation import require_keys
from tiered_mq.errors import (
    CorruptRecordError,
    InvalidRequiredAcksError,
    InvalidTopicError,
    InvalidTxnStateError,
    KafkaError,
    KafkaStorageError,
    NotEnoughReplicasError,
    TransactionalIdAuthorizationFailedError,
    UnsupportedCompressionTypeError,
    UnsupportedVersionError,
    invalid_record,
)
from tiered_mq.hot.log_config import LogConfig
from tiered_mq.hot.record_timestamps import check_record_timestamps, needs_record_check
from tiered_mq.protocol.api_versions import ApiKey
from tiered_mq.record.batch import iter_batches, read_header, set_max_timestamp
from tiered_mq.record.compression import DecompressedTooLargeError
from tiered_mq.record.records import Record, check_records
from tiered_mq.topic_partition import TopicPartition

API_KEY = ApiKey.PRODUCE
ZSTD = 4
MAGIC_AT, ATTRIBUTES_AT, UP_TO_MAGIC = 16, 21, 17  # v2 batch header layout
MIN_VERSION = 3
ADMIN_CLIENT_ID = "__admin_client"  # Kafka lets only this client id write internal topics
ZSTD_MIN_VERSION = 7
_WRITE: Final = AclOperation.WRITE  # read once: an Enum class attribute costs a lookup call


def _error(
    index: int, code: int, message: str | None = None, records: tuple[tuple[int, str], ...] = ()
) -> dict[str, Any]:
    """A refused partition; ``records``: the refused records (v8+ ``record_errors``)."""
    return {
        "index": index,
        "error_code": code,
        "base_offset": -1,
        "log_append_time_ms": -1,
        "log_start_offset": -1,
        "record_errors": [{"batch_index": i, "batch_index_error_message": m} for i, m in records],
        "error_message": message,
    }


def _verify_transactional(
    ctx: RequestContext, tp: TopicPartition, txn_id: str | None, batches: list[Any]
) -> bool:
    """Raise unless the transactional batches of ``batches`` may be appended now; False when
    there is none (nothing to check, now or under the partition lock)."""
    txn = [h for _, h in batches if h.is_transactional]
    if not txn:
        return False
    if txn_id is None:  # Kafka: a null transactional id is never authorized
        raise TransactionalIdAuthorizationFailedError(
            "transactional batches without a transactional id"
        )
    tc = ctx.broker.txn_coordinator
    if tc is None:
        raise InvalidTxnStateError("no transaction coordinator")
    tc.verify_produce(txn_id, txn[0].producer_id, txn[0].producer_epoch, tp)
    return True


def _check_records(
    records: Any, batches: list[Any], api_version: int, max_size: int
) -> tuple[list[Any], list[list[Record]]]:
    """Every record of the (one) batch read as Kafka's LogValidator reads it: count, framing,
    offset deltas 0..n-1 and no byte after the last record, else INVALID_RECORD (CORRUPT_MESSAGE
    before v8), nothing appended. Before, only the first record was looked at: a batch with a
    broken second record, bytes after the last one or more records than its count was stored,
    and consumers then lost records, refused the fetch, or looped on offsets past the high
    watermark. A CreateTime batch whose maxTimestamp is not its records' highest gets the
    records' one written in (as Kafka sets it): the time index, ListOffsets by time, time
    retention and the ``message.timestamp.after.max.ms`` check all take it from there. Returns
    the batches' headers as they now are and their decoded records (decoded once, here)."""
    out = []
    decoded = []
    for pos, h in batches:
        try:
            highest, batch_records = check_records(records, pos, max_size=max_size)
        except DecompressedTooLargeError:
            raise
        except CorruptRecordError as e:
            raise invalid_record(f"invalid records: {e.args[0]}", api_version) from None
        if highest != h.max_timestamp and not h.is_log_append_time:
            set_max_timestamp(records, pos, highest)
            h = read_header(records, pos)
        out.append((pos, h))
        decoded.append(batch_records)
    return out, decoded


def _decoded_checks(
    records: Any,
    batches: list[Any],
    compact: bool,
    recompress_to: int | None,
    level: int | None,
    api_version: int,
    max_size: int,
    timestamps: tuple[LogConfig, int] | None = None,
) -> tuple[Any, list[Any]]:
    """The checks that decode records (in a worker thread: a batch may take up to ``max_size``
    bytes and a second to decompress): a compacted topic's key check, each record's timestamp
    against ``message.timestamp.before.max.ms`` (``timestamps``: the topic's config and now;
    hot/record_timestamps.py), and re-encoding with the topic's codec (``recompress_to``,
    None: kept as sent) at the topic's ``level``. Returns the records to append and their
    batches. Records that cannot be encoded again (offset deltas out of order, a timestamp out
    of range) are INVALID_RECORD (CORRUPT_MESSAGE before v8). Every record is read first
    (:func:`_check_records`)."""
    batches, decoded = _check_records(records, batches, api_version, max_size)
    if compact:  # records without a key are refused (Kafka)
        require_keys(records, batches, api_version, decoded=decoded)
    if timestamps is not None:  # INVALID_TIMESTAMP for any record out of the window (Kafka)
        check_record_timestamps(records, batches, *timestamps, decoded=decoded)
    if recompress_to is not None:
        try:
            records = recompress(records, batches, recompress_to, level=level, decoded=decoded)
        except (ValueError, OverflowError, struct.error) as e:
            raise invalid_record(f"records cannot be re-encoded: {e}", api_version) from None
        # freshly encoded by us: headers only (LocalLog still checks their size)
        batches = iter_batches(records, validate=False)
    return records, batches


async def _append(
    ctx: RequestContext, tp: TopicPartition, records: Any, acks: int, txn_id: str | None = None
) -> dict[str, Any]:
    broker = ctx.broker
    require_topic(ctx, _WRITE, tp.topic)
    if records is None:
        raise CorruptRecordError("null records")
    if is_internal(tp.topic) and ctx.header.client_id != ADMIN_CLIENT_ID:
        raise InvalidTopicError(f"Cannot append to internal topic {tp.topic}")
    version = ctx.header.api_version
    partition = broker.replica_manager.get_partition(tp)
    config = partition.log.config
    batches = validate_records(records, config.max_message_bytes, version)
    if (  # the setting first: met (the default), there is no cap to work out
        acks == -1
        and (in_sync := len(partition.isr)) < config.min_insync_replicas
        and in_sync < partition.effective_min_isr()
    ):
        raise NotEnoughReplicasError(
            f"{tp}: {in_sync} in-sync replicas of {len(partition.replicas)}, "
            f"min.insync.replicas is {config.min_insync_replicas}"
        )
    if version < ZSTD_MIN_VERSION and any(h.compression == ZSTD for _, h in batches):
        raise UnsupportedCompressionTypeError(
            f"zstd needs produce v{ZSTD_MIN_VERSION}+, got v{version}"
        )
    transactional = _verify_transactional(ctx, tp, txn_id, batches)
    codec = target_codec(config.compression_type)
    recompress_to = codec if needs_recompression(batches, codec) else None
    timestamps = (config, partition.log.clock()) if needs_record_check(config, batches) else None
    if config.compact or recompress_to is not None or timestamps is not None:  # off the loop
        max_size = broker.replica_manager.max_decompressed_bytes  # decompression bombs: code 10
        records, batches = await asyncio.to_thread(
            _decoded_checks,
            records,
            batches,
            config.compact,
            recompress_to,
            None if recompress_to is None else target_level(config, recompress_to),
            version,
            max_size,
            timestamps,
        )
    # checked again under the partition lock: the transaction may have ended meanwhile
    verify = (lambda: _verify_transactional(ctx, tp, txn_id, batches)) if transactional else None
    result = await partition.append_as_leader(records, batches, verify)
    if not result.duplicate:
        metrics = broker.metrics
        if len(batches) == 1:  # Produce v3+: one batch per partition
            appended = batches[0][1].records_count
        else:  # re-encoded batches
            appended = sum(h.records_count for _, h in batches)
        size = len(records)
        metrics.bytes_in.inc(size)
        metrics.messages_in.inc(appended)
        stats = metrics.topic(tp.topic)
        stats.bytes_in += size
        stats.messages_in += appended
    return {
        "index": tp.partition,
        "error_code": 0,
        "base_offset": result.base_offset,
        "log_append_time_ms": result.log_append_time,
        "log_start_offset": result.log_start_offset,
        "record_errors": [],
        "error_message": None,
    }


def _refuse_acks(ctx: RequestContext, tp: TopicPartition, records: Any, acks: int) -> None:
    """Raise the error of a partition of a request whose ``acks`` is invalid (see the module
    docstring): Kafka's checks that come first, else INVALID_REQUIRED_ACKS. Reads the first
    batch's header only."""
    require_topic(ctx, _WRITE, tp.topic)
    try:
        ctx.broker.replica_manager.get_partition(tp)
    except KafkaStorageError:
        pass  # offline, but known: Kafka's metadata cache has it
    version = ctx.header.api_version
    if records is not None:
        if len(records) < UP_TO_MAGIC:
            raise invalid_record(f"produce v{version} needs a record batch", version)
        if records[MAGIC_AT] != 2:
            raise invalid_record(f"produce v{version} takes record batches of magic 2", version)
        first = int.from_bytes(records[8:12], "big", signed=True) + 12
        codec = records[ATTRIBUTES_AT + 1] & 7 if len(records) > ATTRIBUTES_AT + 1 else 0
        if version < ZSTD_MIN_VERSION and codec == ZSTD:
            raise UnsupportedCompressionTypeError(f"zstd needs produce v{ZSTD_MIN_VERSION}+")
        if 0 < first < len(records):
            raise invalid_record("produce v3+ carries exactly one record batch", version)
    raise InvalidRequiredAcksError(f"acks={acks}")


def _by_partition(topic_data: list[dict[str, Any]]) -> dict[str, dict[int, Any]]:
    """Topic -> partition index -> records, in the order of first mention; a topic-partition
    named again takes the records of its last mention (Kafka's map from TopicPartition to
    records). Per partition, never per record."""
    merged: dict[str, dict[int, Any]] = {}
    for topic in topic_data:
        parts = merged.setdefault(topic["name"], {})
        for pd in topic["partition_data"]:
            parts[pd["index"]] = pd["records"]
    return merged


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any] | None:
    acks = request["acks"]
    txn_id = request.get("transactional_id")
    fixed_error: tuple[int, str] | None = None
    if ctx.api_version < MIN_VERSION:
        fixed_error = (UnsupportedVersionError.errno, "produce v0-2 is not supported")
    elif txn_id is not None and not ctx.authorize(
        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id
    ):
        fixed_error = (TransactionalIdAuthorizationFailedError.errno, f"transactional id {txn_id}")
    valid_acks = acks in (0, 1, -1)
    responses: list[dict[str, Any]] = []
    for name, partitions in _by_partition(request["topic_data"]).items():
        parts = []
        for index, records in partitions.items():
            if fixed_error is not None:
                parts.append(_error(index, *fixed_error))
                continue
            try:
                tp = TopicPartition(name, index)
                if not valid_acks:
                    _refuse_acks(ctx, tp, records, acks)
                parts.append(await _append(ctx, tp, records, acks, txn_id))
            except Exception as e:
                errors = e.record_errors if isinstance(e, KafkaError) else ()
                parts.append(_error(index, error_code(e), error_message(e), errors))
        responses.append({"name": name, "partition_responses": parts})
    if acks == 0:
        failed = [
            f"{topic['name']}-{p['index']}: error {p['error_code']}"
            for topic in responses
            for p in topic["partition_responses"]
            if p["error_code"] != 0
        ]
        if failed:  # no answer to carry the error: Kafka closes the connection
            raise CloseConnection(
                f"acks=0 produce failed ({', '.join(failed)})", response={"responses": responses}
            )
        return None
    return {"responses": responses, "throttle_time_ms": 0}
