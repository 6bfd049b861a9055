"""One-line documentation of the configs this broker honours, as DescribeConfigs v3 returns it
(``include_documentation``). Written for this broker: where it differs from Kafka, the line says
what this broker does.

``documentation(name)`` looks a name up among broker configs, then topic configs; a broker
synonym of a topic config (``log.segment.bytes``) without a line of its own gets the topic
config's line, prefixed "Default of topic config X:". ``None`` for a name not described here
(a listener-prefixed key, a key set with a broker-only prefix that this broker only stores).
"""

from __future__ import annotations

from typing import Final

from tiered_mq.broker.config import TIME_SYNONYMS, TOPIC_SYNONYMS

TOPIC_DOCS: Final[dict[str, str]] = {
    "segment.bytes": "Largest size of one log segment file; a bigger batch starts a new one.",
    "segment.ms": "Age after which the active segment is rolled even if not full.",
    "segment.jitter.ms": "Random amount subtracted from segment.ms so segments do not all roll "
    "at once.",
    "segment.index.bytes": "Largest size of a segment's offset and time index files.",
    "index.interval.bytes": "Bytes of records between two entries of the offset index.",
    "retention.ms": "How long records are kept before their segment may be deleted (-1: "
    "forever); with tiered storage, in both tiers together.",
    "retention.bytes": "Largest size of a partition's log before old segments are deleted "
    "(-1: no limit); with tiered storage, both tiers together.",
    "local.retention.ms": "How long a tiered topic keeps a segment on local disk after it was "
    "copied to the remote tier (-2: retention.ms).",
    "local.retention.bytes": "Largest local size of a tiered topic's partition; older copied "
    "segments leave local disk (-2: retention.bytes).",
    "flush.messages": "Records appended before the log is fsynced (the default leaves it to "
    "the OS).",
    "flush.ms": "Milliseconds after which appended records are fsynced (the default leaves it "
    "to the OS).",
    "remote.storage.enable": "Copy this topic's closed segments to the remote (cold) tier and "
    "serve old offsets from it.",
    "remote.log.copy.disable": "Stop copying new segments to the remote tier; what is there "
    "stays readable.",
    "remote.log.delete.on.disable": "With remote.storage.enable=false, delete the topic's "
    "remote segments.",
    "cleanup.policy": "delete (by retention), compact (keep the last record of each key), or both.",
    "max.message.bytes": "Largest record batch, after compression, a producer may append.",
    "message.timestamp.type": "CreateTime (the producer's timestamp) or LogAppendTime (the "
    "broker's clock).",
    "message.timestamp.before.max.ms": "How far in the past a CreateTime timestamp may be "
    "before the batch is refused.",
    "message.timestamp.after.max.ms": "How far in the future a CreateTime timestamp may be "
    "before the batch is refused.",
    "min.insync.replicas": "In-sync replicas that must have a write for acks=all, at most the "
    "partition's replica count (Kafka 3.7+); fewer in sync: NOT_ENOUGH_REPLICAS.",
    "file.delete.delay.ms": "Delay before a deleted segment's files are removed from disk.",
    "compression.type": "Codec of stored batches: producer keeps the producer's, or one of "
    "uncompressed, gzip, snappy, lz4, zstd (re-encoded on append).",
    "compression.gzip.level": "gzip level when compression.type=gzip (-1: the codec's default).",
    "compression.lz4.level": "lz4 level when compression.type=lz4.",
    "compression.zstd.level": "zstd level when compression.type=zstd.",
    "delete.retention.ms": "How long a compacted topic keeps tombstones (and transaction "
    "markers) after they were cleaned.",
    "min.compaction.lag.ms": "Youngest age of a record the log cleaner may compact away.",
    "max.compaction.lag.ms": "Oldest age a record may reach before its segment must be compacted.",
    "min.cleanable.dirty.ratio": "Share of the log not yet compacted above which the cleaner "
    "compacts the partition.",
    "unclean.leader.election.enable": "Allow an out-of-sync replica to become leader; with one "
    "broker there is no other replica.",
    "preallocate": "Preallocate a new segment file to its full size.",
    "leader.replication.throttled.replicas": "Replicas (partition:broker, or *) whose "
    "replication the leader side throttles; stored only, with one broker nothing replicates.",
    "follower.replication.throttled.replicas": "Replicas (partition:broker, or *) whose "
    "replication the follower side throttles; stored only, with one broker nothing replicates.",
}

BROKER_DOCS: Final[dict[str, str]] = {
    "broker.id": "This broker's id (the BROKER resource's name in DescribeConfigs).",
    "log.dirs": "The data directory (--data-dir) holding partitions and metadata.",
    "listeners": "Listeners as NAME://host:port, comma-separated (empty: PLAINTEXT on "
    "--host/--port); shown with the bound ports.",
    "advertised.listeners": "Addresses given to clients, per listener (empty: each listener's "
    "own, a host binding every interface given as the machine's canonical host name).",
    "listener.security.protocol.map": "Listener names and their security protocols, "
    "NAME:PROTOCOL pairs; the default maps each protocol's name to itself, and a value set "
    "replaces it whole.",
    "broker.rack": "This broker's rack (empty: none), registered with the broker and answered "
    "by Metadata and DescribeCluster.",
    "advertised.host.name": "Host advertised for the default listener (empty: the bind address).",
    "auto.create.topics.enable": "Create a topic on Metadata for an unknown topic.",
    "num.partitions": "Partitions of a topic created without a count (auto-created, or "
    "CreateTopics with -1).",
    "default.replication.factor": "Replication factor of a topic created without one; a "
    "cluster has one broker, so 1.",
    "delete.topic.enable": "Whether DeleteTopics may delete topics.",
    "message.max.decompressed.bytes": "tiered-mq: largest decompressed payload of one batch "
    "where the broker decodes records; beyond it, MESSAGE_TOO_LARGE.",
    "socket.request.max.bytes": "Largest request the broker reads; a bigger one closes the "
    "connection.",
    "connections.max.idle.ms": "Close a connection idle this long (0 or less: never).",
    "socket.send.buffer.bytes": "SO_SNDBUF of client connections (-1: the OS's autotuning).",
    "socket.receive.buffer.bytes": "SO_RCVBUF of client connections (-1: the OS's autotuning).",
    "offsets.topic.num.partitions": "Partitions of __consumer_offsets (fixed once the topic "
    "exists).",
    "offsets.topic.replication.factor": "Replicas of __consumer_offsets; one broker: 1.",
    "offsets.topic.segment.bytes": "segment.bytes of __consumer_offsets.",
    "offsets.retention.minutes": "How long committed offsets of an empty group are kept.",
    "offsets.retention.check.interval.ms": "How often expired committed offsets are removed.",
    "offsets.load.buffer.size": "Bytes read at a time when loading __consumer_offsets at start.",
    "offset.metadata.max.bytes": "Longest metadata string of a committed offset; longer is "
    "OFFSET_METADATA_TOO_LARGE.",
    "log.cleaner.enable": "Run the log cleaner, which compacts cleanup.policy=compact topics.",
    "log.cleaner.backoff.ms": "Pause of the log cleaner when no partition needs cleaning.",
    "log.cleaner.dedupe.buffer.size": "Memory of the log cleaner's key-to-offset map.",
    "group.min.session.timeout.ms": "Shortest session timeout a consumer may ask for.",
    "group.max.session.timeout.ms": "Longest session timeout a consumer may ask for.",
    "group.initial.rebalance.delay.ms": "Wait for more members before a new group's first "
    "rebalance (tiered-mq's default 300; Kafka's 3000).",
    "group.max.size": "Most members a consumer group may have; a JoinGroup beyond it is "
    "answered GROUP_MAX_SIZE_REACHED.",
    "transaction.state.log.num.partitions": "Partitions of __transaction_state.",
    "transaction.state.log.replication.factor": "Replicas of __transaction_state; one broker: 1.",
    "transaction.state.log.segment.bytes": "segment.bytes of __transaction_state.",
    "transaction.max.timeout.ms": "Longest transaction.timeout.ms a producer may ask for.",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "How often transactions "
    "past their timeout are aborted.",
    "log.retention.check.interval.ms": "How often segments past retention are deleted.",
    "transactional.id.expiration.ms": "How long a transactional id without an ongoing "
    "transaction is kept after its last update; then it is removed (a tombstone in "
    "__transaction_state).",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "How often expired "
    "transactional ids are removed.",
    "producer.id.expiration.ms": "How long a partition remembers an idle producer id without "
    "an ongoing transaction (its sequence numbers, for idempotence).",
    "producer.id.expiration.check.interval.ms": "How often expired producer ids are removed.",
    "log.retention.hours": "Hours to keep records, the default of retention.ms when neither "
    "log.retention.ms nor log.retention.minutes is set.",
    "log.retention.minutes": "Minutes to keep records, the default of retention.ms when "
    "log.retention.ms is not set; wins over log.retention.hours.",
    "log.retention.ms": "Milliseconds to keep records, the default of retention.ms; wins over "
    "log.retention.minutes and log.retention.hours.",
    "log.roll.hours": "Hours after which a segment rolls, the default of segment.ms when "
    "log.roll.ms is not set.",
    "log.roll.ms": "Milliseconds after which a segment rolls, the default of segment.ms; wins "
    "over log.roll.hours.",
    "log.roll.jitter.hours": "Hours of jitter, the default of segment.jitter.ms when "
    "log.roll.jitter.ms is not set.",
    "log.roll.jitter.ms": "Milliseconds of jitter, the default of segment.jitter.ms; wins over "
    "log.roll.jitter.hours.",
    "log.flush.interval.ms": "Milliseconds after which appended records are fsynced, the default "
    "of flush.ms; wins over log.flush.scheduler.interval.ms.",
    "log.flush.scheduler.interval.ms": "The default of flush.ms when log.flush.interval.ms is "
    "not set (Kafka's log flusher period too; here flush.ms is checked on append and every "
    "second).",
    "producer.id.block.size": "Producer ids this broker takes from the cluster at a time.",
    "fetch.max.bytes": "Largest Fetch response, whatever the request asks.",
    "fetch.single.partition.max.bytes": "tiered-mq: largest share of one partition in a Fetch "
    "response (0: no bound).",
    "remote.log.storage.system.enable": "Turn tiered storage on (with --cold-url).",
    "remote.log.manager.task.interval.ms": "How often each tiered partition copies closed "
    "segments and applies remote retention.",
    "remote.log.manager.task.retry.backoff.ms": "First pause after a failed remote tier task.",
    "remote.log.manager.task.retry.backoff.max.ms": "Longest pause between retries of a failed "
    "remote tier task.",
    "remote.log.manager.copy.max.bytes.per.second": "Bound on the upload rate to the remote "
    "tier (0: none).",
    "remote.log.manager.fetch.max.bytes.per.second": "Bound on the read rate from the remote "
    "tier (0: none).",
    "remote.log.reader.cache.bytes": "tiered-mq: memory of the cache of remote segment chunks.",
    "remote.log.reader.chunk.bytes": "tiered-mq: size of one ranged read from the remote tier.",
    "remote.log.reader.read.ahead.chunks": "tiered-mq: chunks read ahead of a sequential remote "
    "reader.",
    "remote.log.reader.fetch.max.bytes": "tiered-mq: largest remote read for one Fetch "
    "(capped at half the cache).",
    "remote.fetch.max.wait.ms": "Longest wait of a Fetch for data from the remote tier.",
    "remote.list.offsets.request.timeout.ms": "Longest wait of ListOffsets for a timestamp "
    "lookup in the remote tier.",
    "remote.log.index.file.cache.total.size.bytes": "Memory of the cache of remote segments' "
    "indexes.",
    "remote.log.s3.region": "tiered-mq: S3 region of the cold tier (empty: the client's).",
    "remote.log.s3.path.style": "tiered-mq: true for path-style S3 addresses (empty: the "
    "client's choice).",
    "ssl.keystore.type": "Key store format of SSL listeners; only PEM.",
    "ssl.keystore.location": "PEM file with the SSL listeners' certificate chain and key.",
    "ssl.key.password": "Password of the key in ssl.keystore.location.",
    "ssl.truststore.location": "PEM file of CAs trusted for client certificates.",
    "ssl.client.auth": "none, requested or required: whether SSL clients present a certificate.",
    "ssl.enabled.protocols": "TLS versions SSL listeners accept.",
    "sasl.enabled.mechanisms": "SASL mechanisms SASL listeners offer.",
    "sasl.jaas.config": 'JAAS configuration of SASL/PLAIN users (user_NAME="password").',
    "sasl.server.max.receive.size": "Largest request before a client has authenticated.",
    "authorizer.class.name": "Kafka's authorizer class name to enforce ACLs (empty: every "
    "request allowed).",
    "super.users": "Principals (User:name;...) that pass every ACL check.",
    "allow.everyone.if.no.acl.found": "Allow a resource that has no ACL at all.",
    "zookeeper.connect": "ZooKeeper host:port[/chroot] for cluster metadata (empty: "
    "cluster.json in the data directory).",
    "zookeeper.session.timeout.ms": "ZooKeeper session timeout.",
    "zookeeper.connection.timeout.ms": "Longest wait to connect to ZooKeeper (empty: the "
    "session timeout).",
}


def documentation(name: str) -> str | None:
    """The line describing config ``name`` (module docstring)."""
    own = BROKER_DOCS.get(name) or TOPIC_DOCS.get(name)
    if own is not None:
        return own
    topic = TOPIC_SYNONYMS.get(name) or TIME_SYNONYMS.get(name, (None, 0))[0]
    if topic is not None and topic in TOPIC_DOCS:
        return f"Default of topic config {topic}: {TOPIC_DOCS[topic]}"
    return None
