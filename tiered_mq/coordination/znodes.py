"""Every znode the ZooKeeper coordinator uses, with its data format: Kafka's ZooKeeper layout.

Paths are relative to the ``zookeeper.connect`` chroot. Data is UTF-8 JSON in the form Kafka
(2.8-3.x, ZooKeeper mode) writes, so ``zookeeper-shell`` users see what they know:

=========================================== ============================================ =========
path                                        data                                         kind
=========================================== ============================================ =========
``/cluster/id``                             ``{"version":"1","id":<22 chars>}``          persistent
``/controller``                             ``{"version":1,"brokerid":N,"timestamp":..}`` ephemeral
``/controller_epoch``                       ``N`` (a bare integer)                       persistent
``/brokers/ids/<id>``                       ``{"version":5,"host":..,"port":..,           ephemeral
                                            "endpoints":["PLAINTEXT://h:p"],..}``
``/brokers/topics/<t>``                     ``{"version":3,"topic_id":<22 chars>,         persistent
                                            "partitions":{"0":[replicas]},..}``
``/brokers/topics/<t>/partitions/<p>/state`` ``{"version":1,"leader":N,"leader_epoch":E,  persistent
                                            "isr":[..],"controller_epoch":C}``
``/config/topics/<t>``                      ``{"version":1,"config":{name: value}}``     persistent
``/config/users/<sanitized user>``          ``{"version":1,"config":{"SCRAM-SHA-256":    persistent
                                            "salt=..,stored_key=..,server_key=..,
                                            iterations=N"}}``
``/config/brokers/<default>``, ``/<id>``     ``{"version":1,"config":{name: value}}``     persistent
``/latest_producer_id_block``               ``{"version":1,"broker":N,                   persistent
                                            "block_start":"S","block_end":"E"}``
``/admin/delete_topics/<t>``                (empty: a request to delete topic ``t``)     persistent
=========================================== ============================================ =========

Topics written by other tools: a topic znode of Kafka before 2.8 (version 1 or 2, no
``topic_id``) or one without its partitions' ``state`` znodes (what Kafka's ``AdminZkClient``
writes, leaving the rest to the controller) is completed by the controller broker, as Kafka's
controller does: it writes a new topic id (version 3, conditional on the version read) and the
missing states (first replica leading, epoch 0, every replica in sync). Until then the topic is
unreadable (not gone; :meth:`~tiered_mq.coordination.base.Coordinator.unreadable_topics`). A
``/admin/delete_topics/<t>`` znode (Kafka's ``kafka-topics.sh --delete`` through ZooKeeper) is
removed with the topic's znodes, or alone when there is no such topic.

Topic ids and the cluster id are 16 random bytes in URL-safe base64 without padding (Kafka's
``Uuid.toString``); :class:`~tiered_mq.coordination.base.TopicMetadata` carries topic ids as 32
hex digits, converted here. ``block_end`` is inclusive, as in Kafka.

A user's znode name is the user name sanitized as Kafka's ``Sanitizer`` does: UTF-8,
percent-encoded except ASCII letters, digits and ``.-_`` (a space is ``%20``, ``*`` is ``%2A``).
Its config may hold other keys (Kafka keeps client quotas there); they are kept as they are.
The credential string is broker/scram_credentials.py's. ``/config/brokers/<default>`` holds the
cluster-wide dynamic broker configs, ``/config/brokers/<id>`` one broker's (by broker config
name, broker/dynamic_config.py); a znode whose last config is deleted is deleted. Kafka's change
notifications (``/config/changes``) are not written: brokers here watch the user and broker
config znodes themselves.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
import uuid
from typing import Any, Final

from tiered_mq.coordination.base import BrokerInfo, PartitionState

CLUSTER_ID: Final = "/cluster/id"
CONTROLLER: Final = "/controller"
CONTROLLER_EPOCH: Final = "/controller_epoch"
BROKER_IDS: Final = "/brokers/ids"
TOPICS: Final = "/brokers/topics"
TOPIC_CONFIGS: Final = "/config/topics"
USER_CONFIGS: Final = "/config/users"
BROKER_CONFIGS: Final = "/config/brokers"
PRODUCER_ID_BLOCK: Final = "/latest_producer_id_block"
DELETE_TOPICS: Final = "/admin/delete_topics"
# created at start (empty) so that watches and children lists never meet a missing parent
PERSISTENT_PARENTS: Final = (
    BROKER_IDS,
    TOPICS,
    TOPIC_CONFIGS,
    USER_CONFIGS,
    BROKER_CONFIGS,
    DELETE_TOPICS,
    "/cluster",
)


def broker(node_id: int) -> str:
    return f"{BROKER_IDS}/{node_id}"


def topic(name: str) -> str:
    return f"{TOPICS}/{name}"


def partitions(name: str) -> str:
    return f"{TOPICS}/{name}/partitions"


def partition(name: str, index: int) -> str:
    return f"{TOPICS}/{name}/partitions/{index}"


def partition_state(name: str, index: int) -> str:
    return f"{TOPICS}/{name}/partitions/{index}/state"


def delete_request(name: str) -> str:
    return f"{DELETE_TOPICS}/{name}"


def topic_config(name: str) -> str:
    return f"{TOPIC_CONFIGS}/{name}"


def user_config(user: str) -> str:
    return f"{USER_CONFIGS}/{sanitize(user)}"


def broker_config(entity: str) -> str:
    """``<default>`` or a broker id: Kafka writes both unsanitized."""
    return f"{BROKER_CONFIGS}/{entity}"


def sanitize(name: str) -> str:
    """A user name as a znode name (module docstring)."""
    return "".join(
        chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in ".-_") else f"%{b:02X}"
        for b in name.encode()
    )


def desanitize(text: str) -> str:
    return urllib.parse.unquote_plus(text)


# ids ----------------------------------------------------------------------------------------
def uuid_to_kafka(hex_id: str) -> str:
    return base64.urlsafe_b64encode(bytes.fromhex(hex_id)).decode().rstrip("=")


def uuid_from_kafka(text: str) -> str:
    return base64.urlsafe_b64decode(text + "==").hex()


def new_cluster_id() -> str:
    return uuid_to_kafka(uuid.uuid4().hex)


# data ---------------------------------------------------------------------------------------
def _dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _now_ms() -> str:
    return str(int(time.time() * 1000))


def encode_cluster_id(cluster_id: str) -> bytes:
    return _dump({"version": "1", "id": cluster_id})


def decode_cluster_id(data: bytes) -> str:
    return str(json.loads(data)["id"])


def encode_controller(node_id: int) -> bytes:
    return _dump({"version": 1, "brokerid": node_id, "timestamp": _now_ms()})


def decode_controller(data: bytes | None) -> int:
    """The controller's broker id; -1 when there is none."""
    return int(json.loads(data)["brokerid"]) if data else -1


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def encode_broker(info: BrokerInfo) -> bytes:
    """Kafka's version 5: ``endpoints`` lists every advertised listener
    (``NAME://host:port``) and ``listener_security_protocol_map`` their protocols; ``host`` and
    ``port`` are the first PLAINTEXT listener's (null and -1 without one: Kafka keeps them for
    old clients that know only PLAINTEXT)."""
    endpoints = info.endpoints or (("PLAINTEXT", "PLAINTEXT", info.host, info.port),)
    plaintext = next(((h, p) for _, proto, h, p in endpoints if proto == "PLAINTEXT"), None)
    obj: dict[str, Any] = {
        "version": 5,
        "host": plaintext[0] if plaintext else None,
        "port": plaintext[1] if plaintext else -1,
        "endpoints": [f"{name}://{_host_port(h, p)}" for name, _, h, p in endpoints],
        "listener_security_protocol_map": {name: proto for name, proto, _, _ in endpoints},
        "jmx_port": -1,
        "features": {},
        "timestamp": _now_ms(),
    }
    if info.rack is not None:
        obj["rack"] = info.rack
    return _dump(obj)


def decode_broker(node_id: int, data: bytes) -> BrokerInfo:
    """``host``/``port``, else (no PLAINTEXT listener) the first endpoint's address."""
    obj = json.loads(data)
    host, port = obj.get("host"), int(obj.get("port", -1))
    if host is None or port < 0:
        address = str(obj["endpoints"][0]).partition("://")[2]
        host, _, text = address.rpartition(":")
        host, port = host.strip("[]"), int(text)
    return BrokerInfo(node_id, str(host), port, obj.get("rack"))


def encode_topic(topic_id_hex: str, assignment: dict[int, list[int]]) -> bytes:
    return _dump(
        {
            "version": 3,
            "topic_id": uuid_to_kafka(topic_id_hex),
            "partitions": {str(p): list(r) for p, r in sorted(assignment.items())},
            "adding_replicas": {},
            "removing_replicas": {},
        }
    )


def decode_topic(data: bytes) -> tuple[str, dict[int, list[int]]]:
    """``(topic id as 32 hex digits, partition -> replicas)``."""
    obj = json.loads(data)
    assignment = {int(p): [int(r) for r in rs] for p, rs in obj["partitions"].items()}
    return uuid_from_kafka(obj["topic_id"]), assignment


def completed_topic(data: bytes) -> bytes | None:
    """The topic znode ``data`` with a new topic id (version 3) if it has none (Kafka before
    2.8 wrote versions 1 and 2 without); None when it has one."""
    obj = json.loads(data)
    if obj.get("topic_id"):
        return None
    assignment = {int(p): [int(r) for r in rs] for p, rs in obj["partitions"].items()}
    return encode_topic(uuid.uuid4().hex, assignment)


def encode_partition_state(state: PartitionState, controller_epoch: int) -> bytes:
    return _dump(
        {
            "version": 1,
            "leader": state.leader,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
            "controller_epoch": controller_epoch,
        }
    )


def decode_partition_state(data: bytes) -> PartitionState:
    """Leader, leader epoch and ISR; the replicas are the topic znode's (left empty here)."""
    obj = json.loads(data)
    return PartitionState(int(obj["leader"]), int(obj["leader_epoch"]), tuple(obj["isr"]), ())


def encode_entity_config(config: dict[str, str]) -> bytes:
    """A topic's, a user's or a broker's config znode (``/config/topics/<t>``,
    ``/config/users/<u>``, ``/config/brokers/<b>``): Kafka writes every entity type in one
    format."""
    return _dump({"version": 1, "config": dict(config)})


def decode_entity_config(data: bytes) -> dict[str, str]:
    return {str(k): str(v) for k, v in json.loads(data)["config"].items()}


def encode_producer_id_block(node_id: int, start: int, end_exclusive: int) -> bytes:
    return _dump(
        {
            "version": 1,
            "broker": node_id,
            "block_start": str(start),
            "block_end": str(end_exclusive - 1),
        }
    )


def decode_producer_id_block_end(data: bytes | None) -> int:
    """The first producer id after the last block handed out (0 when none was)."""
    return int(json.loads(data)["block_end"]) + 1 if data else 0
