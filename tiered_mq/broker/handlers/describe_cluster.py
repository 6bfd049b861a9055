"""DescribeCluster (60), v0-2: the cluster id, the controller and the live brokers (KIP-700).

Brokers are listed as Metadata lists them: from the coordinator's registry, this broker at the
advertised address of the listener the client came in on; no broker here is ever fenced, so
v2's ``include_fenced_brokers`` changes nothing and ``is_fenced`` is false. A controller id
that is not among the listed brokers is answered as -1 (Kafka's rule).
``cluster_authorized_operations`` stays -2147483648 unless asked for; then it is the bit field
of the cluster operations the principal may do (every one without an authorizer), or 0
without DESCRIBE on the cluster.

A broker serves only the broker endpoint type (v1+ ``endpoint_type`` 1): asking it for the
controllers (2) answers MISMATCHED_ENDPOINT_TYPE, any other type UNSUPPORTED_ENDPOINT_TYPE,
each with a message and no brokers, as Kafka's brokers do.
"""

from __future__ import annotations

from typing import Any

from tiered_mq import errors
from tiered_mq.broker.acl.operations import NOT_REQUESTED, cluster_operations
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import live_brokers
from tiered_mq.protocol.api_versions import ApiKey

API_KEY = ApiKey.DESCRIBE_CLUSTER

# Kafka's EndpointType ids (KIP-919)
BROKER, CONTROLLER = 1, 2
_ENDPOINT_NAMES = {BROKER: "BROKER", CONTROLLER: "CONTROLLER"}


def _endpoint_error(endpoint_type: int) -> dict[str, Any] | None:
    if endpoint_type == BROKER:
        return None
    if endpoint_type == CONTROLLER:
        return {
            "error_code": errors.MismatchedEndpointTypeError.errno,
            "error_message": "The request was sent to an endpoint of type BROKER, "
            "but we wanted an endpoint of type CONTROLLER",
        }
    return {
        "error_code": errors.UnsupportedEndpointTypeError.errno,
        "error_message": f"Unsupported endpoint type {endpoint_type}",
    }


async def handle(ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
    error = _endpoint_error(request.get("endpoint_type", BROKER))
    if error is not None:
        return {"throttle_time_ms": 0, **error}
    broker = ctx.broker
    brokers = [
        {"broker_id": node_id, "host": host, "port": port, "rack": rack, "is_fenced": False}
        for node_id, host, port, rack in live_brokers(ctx)
    ]
    controller = broker.coordinator.controller_id()
    if controller not in {b["broker_id"] for b in brokers}:
        controller = -1
    operations = NOT_REQUESTED
    if request.get("include_cluster_authorized_operations"):
        operations = cluster_operations(ctx.authorize)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "endpoint_type": BROKER,
        "cluster_id": broker.cluster_id,
        "controller_id": controller,
        "brokers": brokers,
        "cluster_authorized_operations": operations,
    }
