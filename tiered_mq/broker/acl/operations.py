"""Authorized operations as Kafka reports them (KIP-430): a bit field, bit ``n`` set for each
:class:`AclOperation` ``n`` the principal may do on a resource.

Metadata (cluster and topics), DescribeCluster and DescribeGroups answer it when the request
asks (``include_*_authorized_operations``); otherwise the field keeps Kafka's "not asked"
value, -2147483648. Only the operations an ACL can grant on that resource type count
(Kafka's ``AclEntry.supportedOperations``). Without an authorizer every one of them is set.
"""

from __future__ import annotations

from collections.abc import Callable

from tiered_mq.broker.acl.binding import CLUSTER_NAME, AclOperation, ResourceType

NOT_REQUESTED = -(2**31)

_O = AclOperation
SUPPORTED: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        _O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER,
        _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE),
    ResourceType.CLUSTER: (
        _O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
        _O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE),
}  # fmt: skip


def authorized_operations(
    may: Callable[[AclOperation, ResourceType, str], bool], resource_type: ResourceType, name: str
) -> int:
    """The bit field for ``name``; ``may`` is the request's ``ctx.authorize``."""
    bits = 0
    for op in SUPPORTED[resource_type]:
        if may(op, resource_type, name):
            bits |= 1 << op
    return bits


def cluster_operations(may: Callable[[AclOperation, ResourceType, str], bool]) -> int:
    """The cluster's bit field: 0 without DESCRIBE on the cluster (Kafka answers nothing)."""
    if not may(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return 0
    return authorized_operations(may, ResourceType.CLUSTER, CLUSTER_NAME)
