"""DescribeConfigs (32), v1-3: topic (resource type 2), broker (4) and broker logger (8) configs.

Topic configs resolve as Kafka's do: the topic's own override (source DYNAMIC_TOPIC_CONFIG 1),
else this broker's dynamic value of the broker default (DYNAMIC_BROKER_CONFIG 2), else the
cluster-wide dynamic one (DYNAMIC_DEFAULT_BROKER_CONFIG 3), else ``--config``
(STATIC_BROKER_CONFIG 4), else Kafka's default (DEFAULT_CONFIG 5); broker/dynamic_config.py.
With ``include_synonyms`` a config lists that chain, most specific first, the broker's entries
under the broker's names (``log.retention.ms``, ``.minutes``, ``.hours``; config_entries.py),
as Kafka's ``kafka-configs.sh --describe --all`` shows. A topic name that is not a legal one
("", too long, other characters) answers INVALID_TOPIC_EXCEPTION, as Kafka's Topic.validate;
a legal one that names no topic UNKNOWN_TOPIC_OR_PARTITION with a null error message, as Kafka's
ConfigHelper answers it (clients show the code's own text: the Java Admin's "This server does not
host this topic-partition.", librdkafka's "Broker: Unknown topic or partition"). An error raised
without a message of its own is answered with a null one, as Kafka's ``ApiError.fromThrowable``.

The broker resource named by this broker's id lists every broker config this broker honours
(broker/config.py's table, the broker names of topic configs with their fallbacks in
``TIME_SYNONYMS``, and whatever ``--config`` set), each resolved the same way from level 2 down;
read-only is false for the dynamic ones only (broker/dynamic_config.py). The one with an empty name
(the cluster-wide default, ``--entity-default``) lists only the configs set at that level, as Kafka
does, with the levels below it as synonyms. A sensitive config (a password, ``sasl.jaas.config``)
has a null value, in its synonyms too, and type PASSWORD. ``documentation`` (v3) is filled when
``include_documentation`` asks for it (broker/config_docs.py), else null.
BROKER_LOGGER resources (8, named by this broker's id) list every logger with its level
(broker/broker_loggers.py), with DESCRIBE_CONFIGS on the cluster, as Kafka's ConfigHelper.
CLIENT_METRICS (16) and GROUP (32) are authorized as Kafka does (the cluster; the group), then
answered INVALID_REQUEST: this broker keeps no such configs. A resource type Kafka does not
know (ConfigResource.Type UNKNOWN, e.g. 99) fails the whole request, as Kafka's KafkaApis throws
while authorizing: every resource is answered INVALID_REQUEST with no configs.
``configuration_keys`` filters the answer; a null or empty list asks for every config (Kafka's
``ConfigHelper.describeConfigs`` reads both as "all": kafka-python sends ``[]`` for
``ConfigResource(..., configs={})``).
"""

from __future__ import annotations

from typing import Any

from tiered_mq.broker import broker_loggers
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
from tiered_mq.broker.config import TIME_SYNONYMS
from tiered_mq.broker.config_entries import (
    CONFIG_TYPES,
    DYNAMIC_BROKER_CONFIG,
    broker_chain,
    config_entry,
    topic_config_entries,
)
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.dynamic_config import DYNAMIC_CONFIGS, entity_of
from tiered_mq.broker.handlers._common import (
    api_error_message,
    error_code,
    require,
    require_cluster,
    require_topic,
)
from tiered_mq.broker.listener import is_sensitive
from tiered_mq.broker.topic_names import validate_topic_name
from tiered_mq.errors import GroupAuthorizationFailedError as GroupAuthError
from tiered_mq.errors import InvalidRequestError, UnknownTopicOrPartitionError
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DESCRIBE_CONFIGS

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
CLIENT_METRICS = 16
GROUP = 32
KNOWN_TYPES = frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})  # ConfigResource
DYNAMIC_BROKER_LOGGER_CONFIG = 6  # a logger's config source
# Errors.INVALID_REQUEST.message(): what Kafka's whole-request error response carries
INVALID_REQUEST_MESSAGE = (
    "This most likely occurs because of a request being malformed by the client library or "
    "the message was sent to an incompatible broker. See the broker logs for more details."
)


def topic_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    validate_topic_name(name)  # Kafka's Topic.validate: INVALID_TOPIC_EXCEPTION, not unknown
    meta = ctx.broker.topic_registry.get_topic(name)
    if meta is None:  # Kafka's ConfigHelper: the code, no message
        raise UnknownTopicOrPartitionError()
    return topic_config_entries(ctx.broker, meta.configs, synonyms)


def broker_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    config = ctx.broker.config
    if name == "":  # the cluster-wide default: only what is set there, above the static levels
        return [
            _hide_if_sensitive(
                config_entry(
                    key,
                    [c for c in broker_chain(config, key) if c[2] != DYNAMIC_BROKER_CONFIG],
                    False,
                    synonyms,
                )
            )
            for key in sorted(config.dynamic_default)
        ]
    entity_of(name, config.node_id)  # INVALID_REQUEST for another broker's id
    out = []
    for key in sorted(set(config.props) | DYNAMIC_CONFIGS | set(TIME_SYNONYMS)):
        entry = config_entry(key, broker_chain(config, key), key not in DYNAMIC_CONFIGS, synonyms)
        if key == "listeners":  # with the bound ports
            entry["value"] = ",".join(map(str, ctx.broker.listeners))
        out.append(_hide_if_sensitive(entry))
    return out


def logger_configs(ctx: RequestContext, name: str) -> list[dict[str, Any]]:
    """Every logger with its level (broker/broker_loggers.py), as Kafka's ConfigHelper lists
    Log4jController.loggers: source DYNAMIC_BROKER_LOGGER_CONFIG, no synonyms, not read-only.
    The name must be this broker's id (INVALID_REQUEST otherwise)."""
    node_id = ctx.broker.config.node_id
    if name == "":
        raise InvalidRequestError("Broker id must not be empty")
    try:
        broker_id = int(name)
    except ValueError:
        raise InvalidRequestError(f"Broker id must be an integer, but it is: {name}") from None
    if broker_id != node_id:
        raise InvalidRequestError(f"Unexpected broker id, expected {node_id} but received {name}")
    return [
        {
            "name": logger,
            "value": level,
            "read_only": False,
            "config_source": DYNAMIC_BROKER_LOGGER_CONFIG,
            "is_default": False,
            "is_sensitive": False,
            "synonyms": [],
            "config_type": 0,
            "documentation": None,
        }
        for logger, level in broker_loggers.loggers().items()
    ]


def _not_served(ctx: RequestContext, rtype: int, name: str) -> list[dict[str, Any]]:
    """CLIENT_METRICS and GROUP resources: Kafka's authorization (DESCRIBE_CONFIGS on the
    cluster, on the group), then INVALID_REQUEST: this broker keeps no such configs."""
    if rtype == GROUP:
        require(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.GROUP, name, GroupAuthError)
        raise InvalidRequestError("Config type groups is not supported by this broker")
    require_cluster(ctx, AclOperation.DESCRIBE_CONFIGS)
    raise InvalidRequestError("Config type client-metrics is not supported by this broker")


def _whole_request_refused(request: dict[str, Any]) -> dict[str, Any]:
    """Kafka's answer when a resource type is none it knows: KafkaApis throws before
    describing anything, and DescribeConfigsRequest.getErrorResponse answers every resource
    INVALID_REQUEST with the error's default message and no configs."""
    return {
        "throttle_time_ms": 0,
        "results": [
            {
                "error_code": InvalidRequestError.errno,
                "error_message": INVALID_REQUEST_MESSAGE,
                "resource_type": r["resource_type"],
                "resource_name": r["resource_name"],
                "configs": [],
            }
            for r in request["resources"]
        ],
    }


def _hide_if_sensitive(entry: dict[str, Any]) -> dict[str, Any]:
    """Kafka shows a password as null, in its synonyms too, typed PASSWORD."""
    if is_sensitive(entry["name"]):
        entry["value"], entry["is_sensitive"] = None, True
        entry["config_type"] = CONFIG_TYPES["PASSWORD"]
        entry["synonyms"] = [{**s, "value": None} for s in entry["synonyms"]]
    return entry


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    synonyms = bool(request.get("include_synonyms", False))
    docs = bool(request.get("include_documentation", False))
    if any(r["resource_type"] not in KNOWN_TYPES for r in request["resources"]):
        return _whole_request_refused(request)
    results = []
    for r in request["resources"]:
        rtype, rname = r["resource_type"], r["resource_name"]
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": rtype,
            "resource_name": rname,
            "configs": [],
        }
        try:
            if rtype == TOPIC:
                require_topic(ctx, AclOperation.DESCRIBE_CONFIGS, rname)
                configs = topic_configs(ctx, rname, synonyms)
            elif rtype == BROKER:
                require_cluster(ctx, AclOperation.DESCRIBE_CONFIGS)
                configs = broker_configs(ctx, rname, synonyms)
            elif rtype == BROKER_LOGGER:
                require_cluster(ctx, AclOperation.DESCRIBE_CONFIGS)
                configs = logger_configs(ctx, rname)
            else:
                configs = _not_served(ctx, rtype, rname)
            keys = r.get("configuration_keys")
            if keys:  # null or empty: every config
                wanted = set(keys)
                configs = [c for c in configs if c["name"] in wanted]
            if not docs:
                configs = [{**c, "documentation": None} for c in configs]
            result["configs"] = configs
        except Exception as e:
            result["error_code"] = error_code(e)
            result["error_message"] = api_error_message(e)
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}
