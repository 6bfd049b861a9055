"""Broker configuration by Kafka's names.

``BrokerConfig`` holds the broker-level settings (``BROKER_DEFAULTS`` overridden by
``--config key=value``) and the broker's defaults for topic configs. A ``--config`` key is read as:

- a broker config if it is in ``BROKER_DEFAULTS`` or starts with a broker-only prefix
  (``group.``, ``offsets.``, ``transaction.``, ``socket.``, ``metrics.``, ``remote.log.``,
  ``ssl.``, ``sasl.``, ``listener.name.``);
- an accepted Kafka setting with no effect here if it is in ``KAFKA_UNUSED`` (thread pools,
  replica fetchers, inter-broker settings: logged at start), and refused with the reason if it
  is in ``UNSUPPORTED`` (KRaft, ``log.dirs``, Java plugin classes);
- a topic default if it is a topic config name (``segment.bytes``) or a broker synonym of one
  (``log.segment.bytes``; see ``TOPIC_SYNONYMS``; ``log.retention.hours``, ``.minutes``,
  ``log.roll.hours``, ``log.roll.jitter.hours`` and ``log.flush.scheduler.interval.ms`` in
  ``TIME_SYNONYMS``). Topic defaults are validated by
  ``LogConfig.from_properties`` when the broker starts.

The broker names of topic configs (``TOPIC_SYNONYMS``' keys) may also be changed while the
broker runs (broker/dynamic_config.py): ``dynamic_default`` holds the cluster-wide dynamic
defaults and ``dynamic_broker`` this broker's own, each by broker name. ``topic_defaults``
resolves them as Kafka does: this broker's dynamic value, else the cluster-wide dynamic
default, else ``--config``, else (absent here) Kafka's default in ``LogConfig``.

Values stay strings (Kafka's wire form); ``get_int``/``get_bool`` parse them, and
``check_values`` (when a ``Broker`` is made) refuses a value its setting's type cannot take,
and for a setting in ``FIXED_VALUES`` (replication factors: a cluster has one broker) any value
but the only one possible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from tiered_mq.hot.log_config import DEFAULTS as TOPIC_CONFIG_DEFAULTS

BROKER_DEFAULTS: Final[dict[str, str]] = {
    "broker.id": "0",
    "listeners": "",  # empty: PLAINTEXT on --host/--port (broker/listener.py)
    "advertised.listeners": "",  # empty: each listener's own address
    # NAME:PROTOCOL,...; Kafka's default, in its order (SocketServerConfigs: each security
    # protocol's name mapped to itself). A value set replaces it whole, as in Kafka.
    "listener.security.protocol.map": (
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
    ),
    "advertised.host.name": "",  # empty: the bind address (a wildcard: the host name)
    "broker.rack": "",  # empty: none (Kafka's null); registered, and answered by Metadata
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "delete.topic.enable": "true",
    "message.max.bytes": "1048588",
    # tiered-mq extension (Kafka has none): bound on one batch's decompressed payload where the
    # broker decodes records (compression.type re-encoding, compacted-topic key check, log
    # cleaner); beyond it Produce answers MESSAGE_TOO_LARGE. 256 MiB: ~256 x message.max.bytes.
    "message.max.decompressed.bytes": "268435456",
    "socket.request.max.bytes": "104857600",
    "connections.max.idle.ms": "600000",  # broker/server.py (0 or less: never)
    "socket.send.buffer.bytes": "-1",  # Kafka: 102400; -1 keeps Linux's autotuning (faster)
    "socket.receive.buffer.bytes": "-1",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.replication.factor": "1",  # FIXED_VALUES
    "offsets.topic.segment.bytes": "104857600",
    "offsets.retention.minutes": "10080",
    "offsets.retention.check.interval.ms": "600000",
    "offsets.load.buffer.size": "5242880",
    # OffsetCommit/TxnOffsetCommit: longer metadata is OFFSET_METADATA_TOO_LARGE (group/commits.py)
    "offset.metadata.max.bytes": "4096",
    # log cleaner (tiered_mq/compaction/): compacts cleanup.policy=compact topics
    "log.cleaner.enable": "true",
    "log.cleaner.backoff.ms": "15000",
    "log.cleaner.dedupe.buffer.size": "134217728",
    "group.min.session.timeout.ms": "6000",
    "group.max.session.timeout.ms": "1800000",
    "group.initial.rebalance.delay.ms": "300",  # Kafka: 3000 (broker/group/config.py says why)
    "group.max.size": "2147483647",  # JoinGroup beyond it: GROUP_MAX_SIZE_REACHED
    "transaction.state.log.num.partitions": "50",
    "transaction.state.log.replication.factor": "1",  # FIXED_VALUES
    "transaction.state.log.segment.bytes": "104857600",
    "transaction.max.timeout.ms": "900000",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "10000",
    # transactional ids idle (Empty/Complete*) this long are removed (txn/coordinator.py)
    "transactional.id.expiration.ms": "604800000",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "3600000",
    # producer ids idle this long leave the partitions' producer state (KIP-854;
    # producer.id.expiration.ms is dynamic, broker/dynamic_config.py)
    "producer.id.expiration.ms": "86400000",
    "producer.id.expiration.check.interval.ms": "600000",
    "log.flush.interval.messages": "9223372036854775807",
    "log.retention.check.interval.ms": "300000",
    # the fallbacks of log.retention.ms, log.roll.ms, log.roll.jitter.ms and
    # log.flush.interval.ms (TIME_SYNONYMS); Kafka's defaults are these, the .ms forms have none
    # (null), and log.retention.minutes none either
    "log.retention.hours": "168",
    "log.roll.hours": "168",
    "log.roll.jitter.hours": "0",
    "log.flush.scheduler.interval.ms": "9223372036854775807",
    "producer.id.block.size": "1000",
    "fetch.max.bytes": "57671680",
    "fetch.single.partition.max.bytes": "52428800",  # handlers/fetch.py (0: off)
    # tiered storage (broker/remote_tier.py); rates 0 = unlimited, task interval dev-friendly
    "remote.log.storage.system.enable": "true",
    "remote.log.manager.task.interval.ms": "1000",
    "remote.log.manager.task.retry.backoff.ms": "500",
    "remote.log.manager.task.retry.backoff.max.ms": "30000",
    "remote.log.manager.copy.max.bytes.per.second": "0",
    "remote.log.manager.fetch.max.bytes.per.second": "0",
    "remote.log.reader.cache.bytes": "268435456",
    "remote.log.reader.chunk.bytes": "1048576",
    "remote.log.reader.read.ahead.chunks": "4",
    "remote.log.reader.fetch.max.bytes": "67108864",  # capped at cache / 2
    "remote.fetch.max.wait.ms": "500",  # cold/remote_fetch.py (Kafka's, KIP-1018)
    "remote.list.offsets.request.timeout.ms": "30000",  # cold/remote_list_offsets.py (KIP-1075)
    "remote.log.index.file.cache.total.size.bytes": "67108864",
    "remote.log.s3.region": "",
    "remote.log.s3.path.style": "",
    # TLS for an SSL:// listener (broker/listener.py): PEM files only
    "ssl.keystore.type": "PEM",
    "ssl.keystore.location": "",
    "ssl.key.password": "",
    "ssl.truststore.location": "",
    "ssl.client.auth": "none",
    "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
    # SASL for a SASL_PLAINTEXT:// or SASL_SSL:// listener (broker/sasl.py)
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    # ACLs (broker/acl/): empty = no authorizer (every request allowed, ACL APIs answer
    # SECURITY_DISABLED); Kafka's StandardAuthorizer or AclAuthorizer class name turns them on
    "authorizer.class.name": "",
    "super.users": "",  # User:admin;User:ops
    "allow.everyone.if.no.acl.found": "false",
    "sasl.jaas.config": "",
    "sasl.server.max.receive.size": "524288",  # the largest frame before authentication
    # cluster metadata (coordination/): empty = cluster.json in the data dir (embedded);
    # host:port[,host:port][/chroot] = ZooKeeper (coordination/zookeeper.py)
    "zookeeper.connect": "",
    "zookeeper.session.timeout.ms": "18000",
    "zookeeper.connection.timeout.ms": "",  # empty: the session timeout, as in Kafka
}

#: broker config name -> the topic config it defaults (Kafka's synonyms)
TOPIC_SYNONYMS: Final[dict[str, str]] = {
    "log.segment.bytes": "segment.bytes",
    "log.roll.ms": "segment.ms",
    "log.roll.jitter.ms": "segment.jitter.ms",
    "log.retention.ms": "retention.ms",
    "log.retention.bytes": "retention.bytes",
    "log.cleanup.policy": "cleanup.policy",
    "log.index.interval.bytes": "index.interval.bytes",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.message.timestamp.type": "message.timestamp.type",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "log.local.retention.ms": "local.retention.ms",
    "log.local.retention.bytes": "local.retention.bytes",
    "log.segment.delete.delay.ms": "file.delete.delay.ms",
    "log.cleaner.min.cleanable.ratio": "min.cleanable.dirty.ratio",
    "log.cleaner.delete.retention.ms": "delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms": "min.compaction.lag.ms",
    "log.cleaner.max.compaction.lag.ms": "max.compaction.lag.ms",
    "log.message.timestamp.before.max.ms": "message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms": "message.timestamp.after.max.ms",
    "log.preallocate": "preallocate",
    "message.max.bytes": "max.message.bytes",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "min.insync.replicas": "min.insync.replicas",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
}
#: topic config name -> its broker synonym (``segment.bytes`` -> ``log.segment.bytes``)
BROKER_NAMES: Final[dict[str, str]] = {topic: broker for broker, topic in TOPIC_SYNONYMS.items()}
#: the cluster-wide level of dynamic broker configs (Kafka's ``/config/brokers/<default>``);
#: one broker's level is named by its ``broker.id``
DEFAULT_BROKER_ENTITY: Final = "<default>"

#: the further broker names of a time topic config, each the fallback of the one before
#: (Kafka's ``ServerTopicConfigSynonyms``, after the first name, ``TOPIC_SYNONYMS``' key) ->
#: (the topic config it defaults, ms per unit); in Kafka ``log.retention.ms`` wins over
#: ``log.retention.minutes``, which wins over ``.hours``; ``log.roll.ms`` over ``log.roll.hours``,
#: ``log.roll.jitter.ms`` over ``log.roll.jitter.hours``, ``log.flush.interval.ms`` over
#: ``log.flush.scheduler.interval.ms`` (Kafka's log flusher period, here only that default).
#: Static only: none of them is a dynamic config, as in Kafka
TIME_SYNONYMS: Final[dict[str, tuple[str, int]]] = {
    "log.retention.hours": ("retention.ms", 3_600_000),
    "log.retention.minutes": ("retention.ms", 60_000),
    "log.roll.hours": ("segment.ms", 3_600_000),
    "log.roll.jitter.hours": ("segment.jitter.ms", 3_600_000),
    "log.flush.scheduler.interval.ms": ("flush.ms", 1),
}

#: configs whose value is a fact of this broker, not a choice (a cluster has one broker, so an
#: internal topic has one replica): ``check_values`` refuses any other value
FIXED_VALUES: Final[dict[str, str]] = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
}

#: configs with a lower bound (Kafka's ``atLeast``): ``check_values`` refuses a smaller value
MIN_VALUES: Final[dict[str, int]] = {
    "group.max.size": 1,
    "transactional.id.expiration.ms": 1,
    "transaction.remove.expired.transaction.cleanup.interval.ms": 1,
    "producer.id.expiration.ms": 1,
    "producer.id.expiration.check.interval.ms": 1,
}

#: Kafka settings this broker cannot honour, which would weaken security if they were accepted
#: and ignored: ``check_values`` refuses a non-empty value, also per listener
#: (``listener.name.<l>.[<mechanism>.]<key>``), with the reason
UNSUPPORTED: Final[dict[str, str]] = {
    "ssl.cipher.suites": "TLS listeners use OpenSSL's default cipher suites; "
    "restrict the TLS versions with ssl.enabled.protocols",
    "sasl.server.callback.handler.class": "it names a Java class; SASL users come from "
    "sasl.jaas.config and the SCRAM credentials",
    "principal.builder.class": "it names a Java class; principals come from SASL and "
    "ssl.principal.mapping.rules",
    "create.topic.policy.class.name": "it names a Java class; no topic policy can be plugged in",
    "alter.config.policy.class.name": "it names a Java class; no config policy can be plugged in",
    "log.dirs": "this broker keeps its data in one directory: use --data-dir",
    "log.dir": "this broker keeps its data in one directory: use --data-dir",
    "process.roles": "KRaft mode is not supported: metadata is embedded (cluster.json) or in "
    "ZooKeeper (zookeeper.connect)",
    "node.id": "KRaft mode is not supported; the broker's id is broker.id",
    "controller.quorum.voters": "KRaft mode is not supported; use zookeeper.connect",
    "controller.quorum.bootstrap.servers": "KRaft mode is not supported; use zookeeper.connect",
    "controller.listener.names": "KRaft mode is not supported; there is no controller listener",
}

#: Kafka broker settings that tune what a single broker without replication does not have
#: (network and I/O thread pools, replica fetchers, leader balancing, inter-broker traffic,
#: connection quotas): accepted so that a Kafka setup's settings can be given as they are,
#: stored and shown by DescribeConfigs, and logged at start as not used (Kafka logs "supplied but
#: are not used yet" for what it does not know)
KAFKA_UNUSED: Final = frozenset(
    {
        "num.network.threads", "num.io.threads", "num.replica.fetchers",
        "num.recovery.threads.per.data.dir", "num.replica.alter.log.dirs.threads",
        "background.threads", "queued.max.requests", "queued.max.request.bytes",
        "auto.leader.rebalance.enable", "leader.imbalance.per.broker.percentage",
        "leader.imbalance.check.interval.seconds", "inter.broker.listener.name",
        "inter.broker.protocol.version", "security.inter.broker.protocol",
        "controlled.shutdown.enable", "controlled.shutdown.max.retries",
        "controlled.shutdown.retry.backoff.ms", "log.flush.offset.checkpoint.interval.ms",
        "log.flush.start.offset.checkpoint.interval.ms", "log.cleaner.threads",
        "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second",
        "log.message.format.version", "log.message.downconversion.enable", "metric.reporters",
        "kafka.metrics.reporters", "max.connections", "max.connections.per.ip",
        "max.connections.per.ip.overrides", "max.connection.creation.rate",
        "broker.id.generation.enable", "reserved.broker.max.id", "request.timeout.ms",
        "quota.window.num", "quota.window.size.seconds", "replication.quota.window.num",
        "replication.quota.window.size.seconds", "delegation.token.expiry.check.interval.ms",
        "zookeeper.set.acl", "zookeeper.max.in.flight.requests",
    }
)  # fmt: skip
#: with the prefix ``replica.``: the follower fetchers' settings (replica.lag.time.max.ms, ...)
_KAFKA_UNUSED_PREFIXES: Final = ("replica.",)

_BROKER_PREFIXES: Final = (
    "group.",
    "offsets.",
    "transaction.",
    "socket.",
    "metrics.",
    "remote.log.",
    "ssl.",
    "sasl.",
    "listener.name.",
)


class BrokerConfig:
    """Settings of one broker; ``props`` are broker configs, ``topic_defaults`` topic configs."""

    def __init__(
        self,
        data_dir: Path,
        host: str = "127.0.0.1",
        port: int = 9092,
        overrides: dict[str, str] | None = None,
        cold_url: str | None = None,
        s3_endpoint: str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port
        self.cold_url = cold_url
        self.s3_endpoint = s3_endpoint
        self.props: dict[str, str] = dict(BROKER_DEFAULTS)
        self.overridden: set[str] = set()
        self.static_topic_defaults: dict[str, str] = {}
        self.dynamic_default: dict[str, str] = {}  # cluster-wide dynamic, by broker name
        self.dynamic_broker: dict[str, str] = {}  # this broker's dynamic, by broker name
        for key, value in (overrides or {}).items():
            self.set(key, value)
        in_ms = set(self.static_topic_defaults)
        for key, (topic_key, unit) in TIME_SYNONYMS.items():  # minutes after hours: they win
            value = self.props[key] if key in self.overridden else ""
            if topic_key not in in_ms and value.strip().lstrip("-").isdigit():
                forever_or_ms = str(max(-1, int(value) * unit))  # < 0: forever
                self.static_topic_defaults[topic_key] = forever_or_ms
        if "log.dirs" not in self.overridden:  # given: refused by check_values
            self.props["log.dirs"] = str(self.data_dir)

    @property
    def topic_defaults(self) -> dict[str, str]:
        """The broker's defaults of topic configs, by topic name (module docstring)."""
        return self.topic_defaults_with(self.dynamic_default, self.dynamic_broker)

    def topic_defaults_with(
        self, dynamic_default: dict[str, str], dynamic_broker: dict[str, str]
    ) -> dict[str, str]:
        """``topic_defaults`` if the dynamic levels were these (broker names)."""
        out = dict(self.static_topic_defaults)
        for layer in (dynamic_default, dynamic_broker):  # the more specific one last
            out.update({TOPIC_SYNONYMS[k]: v for k, v in layer.items() if k in TOPIC_SYNONYMS})
        return out

    def dynamic_layer(self, entity: str) -> dict[str, str]:
        """The dynamic configs of ``entity``: ``DEFAULT_BROKER_ENTITY`` or this broker's id."""
        return self.dynamic_default if entity == DEFAULT_BROKER_ENTITY else self.dynamic_broker

    def set_dynamic(self, entity: str, configs: dict[str, str]) -> None:
        """Replace the dynamic configs of ``entity`` (validated by the caller)."""
        if entity == DEFAULT_BROKER_ENTITY:
            self.dynamic_default = dict(configs)
        else:
            self.dynamic_broker = dict(configs)

    def set(self, key: str, value: str) -> None:
        """Set a static config; a topic config's name counts as its broker synonym's
        (``segment.bytes`` is ``log.segment.bytes``), so DescribeConfigs shows it there."""
        key = BROKER_NAMES.get(key, key)
        if key in TOPIC_SYNONYMS:
            self.static_topic_defaults[TOPIC_SYNONYMS[key]] = value
        if (
            key in BROKER_DEFAULTS
            or key in TOPIC_SYNONYMS
            or key in TIME_SYNONYMS
            or key in KAFKA_UNUSED
            or key in UNSUPPORTED
            or key.startswith(_BROKER_PREFIXES + _KAFKA_UNUSED_PREFIXES)
        ):
            self.props[key] = value
            self.overridden.add(key)
        else:
            self.static_topic_defaults[key] = value

    def check_values(self) -> None:
        """``ValueError`` for a broker config given a value its type refuses: a number setting
        (default ``"1"``) that is not an integer, a boolean one that is not true or false, a
        fixed one other than its value, an ``UNSUPPORTED`` one set. Kafka
        refuses to start on such a value; checked lazily, it would fail requests instead.

        A ``--config`` key that is neither a broker config nor a topic config (a Kafka broker
        config this broker does not implement, such as ``num.network.threads``, or a misspelt
        name) is refused too, named as such: it used to be taken for a topic default and
        refused at start as ``unknown topic config``."""
        for key in sorted(self.static_topic_defaults):
            if key not in TOPIC_CONFIG_DEFAULTS:
                raise ValueError(
                    f"config {key}={self.static_topic_defaults[key]!r} is unknown: not a broker "
                    f"config this broker implements, nor a topic config"
                )
        for key in sorted(self.overridden):
            default, value = BROKER_DEFAULTS.get(key), self.props[key]
            unsupported = [u for u in UNSUPPORTED if key == u or key.endswith(f".{u}")]
            if unsupported and value.strip():
                raise ValueError(
                    f"broker config {key}={value!r} is not supported: {UNSUPPORTED[unsupported[0]]}"
                )
            if key in FIXED_VALUES and value.strip() != FIXED_VALUES[key]:
                raise ValueError(
                    f"broker config {key}={value!r}: this broker has no replication, "
                    f"only {FIXED_VALUES[key]} is possible"
                )
            if default in ("true", "false") and value.strip().lower() not in ("true", "false"):
                raise ValueError(f"broker config {key}={value!r} is not true or false")
            if (default and default.lstrip("-").isdigit()) or key in TIME_SYNONYMS:
                self.get_int(key)
            if key in MIN_VALUES and self.get_int(key) < MIN_VALUES[key]:
                raise ValueError(f"broker config {key}={value!r} is below {MIN_VALUES[key]}")

    @property
    def unused(self) -> list[str]:
        """The ``KAFKA_UNUSED`` settings given: accepted, and with no effect here."""
        return sorted(
            k for k in self.overridden if k in KAFKA_UNUSED or k.startswith(_KAFKA_UNUSED_PREFIXES)
        )

    @property
    def node_id(self) -> int:
        return self.get_int("broker.id")

    def get(self, key: str, default: str | None = None) -> str | None:
        """The effective value: this broker's dynamic one, the cluster-wide dynamic one, the
        static one (``--config`` or the default)."""
        for layer in (self.dynamic_broker, self.dynamic_default, self.props):
            if key in layer:
                return layer[key]
        return default

    def get_int(self, key: str, default: int | None = None) -> int:
        value = self.get(key)
        if value is None:
            if default is None:
                raise KeyError(key)
            return default
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"broker config {key}={value!r} is not an integer") from None

    def get_bool(self, key: str, default: bool = False) -> bool:
        value = self.get(key)
        if value is None:
            return default
        return value.strip().lower() == "true"

    def is_default(self, key: str) -> bool:
        return key not in self.overridden

    def __getitem__(self, key: str) -> str:
        return self.props[key]

    def __contains__(self, key: object) -> bool:
        return key in self.props
