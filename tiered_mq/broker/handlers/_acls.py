"""Wire dicts <-> ACL bindings and filters, and who may call the ACL APIs (:func:`authorizer_for`),
shared by the three ACL handlers.

Codes the enums do not know (a newer client's) decode as UNKNOWN, which ``validate`` refuses
and no filter matches, as in Kafka.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, TypeVar

from tiered_mq.broker.acl.authorizer import Authorizer
from tiered_mq.broker.acl.binding import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.broker.context import RequestContext
from tiered_mq.broker.handlers._common import require_cluster
from tiered_mq.errors import SecurityDisabledError

E = TypeVar("E", bound=IntEnum)


def _enum(kind: type[E], code: int) -> E:
    try:
        return kind(code)
    except ValueError:
        return kind(0)  # UNKNOWN


def binding(creation: dict[str, Any]) -> AclBinding:
    pattern = ResourcePattern(
        _enum(ResourceType, creation["resource_type"]),
        creation["resource_name"],
        _enum(PatternType, creation.get("resource_pattern_type", 3)),
    )
    return AclBinding(
        pattern,
        creation["principal"],
        creation["host"],
        _enum(AclOperation, creation["operation"]),
        _enum(AclPermissionType, creation["permission_type"]),
    )


def binding_filter(wire: dict[str, Any]) -> AclBindingFilter:
    return AclBindingFilter(
        _enum(ResourceType, wire["resource_type_filter"]),
        wire["resource_name_filter"],
        _enum(PatternType, wire.get("pattern_type_filter", 3)),
        wire["principal_filter"],
        wire["host_filter"],
        _enum(AclOperation, wire["operation"]),
        _enum(AclPermissionType, wire["permission_type"]),
    )


def pattern_fields(pattern: ResourcePattern) -> dict[str, Any]:
    """The resource type/name/pattern type of a binding on the wire."""
    return {
        "resource_type": int(pattern.resource_type),
        "resource_name": pattern.name,
        "pattern_type": int(pattern.pattern_type),
    }


def acl_fields(acl: AclBinding) -> dict[str, Any]:
    """The principal/host/operation/permission part of a binding on the wire."""
    return {
        "principal": acl.principal,
        "host": acl.host,
        "operation": int(acl.operation),
        "permission_type": int(acl.permission),
    }


def authorizer_for(ctx: RequestContext, operation: AclOperation) -> Authorizer:
    """The broker's authorizer, if this request may use the ACL APIs: SECURITY_DISABLED without
    one, CLUSTER_AUTHORIZATION_FAILED without ``operation`` on the cluster (DescribeAcls needs
    DESCRIBE, changes need ALTER)."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        raise SecurityDisabledError("No Authorizer is configured")
    require_cluster(ctx, operation)
    return authorizer
