"""ACL bindings and filters, with Kafka's wire codes and matching rules.

An :class:`AclBinding` says: ``principal`` (``User:alice``, ``User:*`` for everyone) connecting
from ``host`` (an address, ``*`` for any) is allowed or denied ``operation`` on the resources
its :class:`ResourcePattern` covers. A pattern is LITERAL (that name; ``*`` is every name) or
PREFIXED (every name starting with it).

An :class:`AclBindingFilter` (DescribeAcls, DeleteAcls) selects bindings: ANY / null fields
match everything; pattern type MATCH selects the bindings that would apply to the named
resource (literal equal, literal ``*``, or a prefix of it). Codes are Kafka's (ResourceType,
PatternType, AclOperation, AclPermissionType).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from tiered_mq.errors import InvalidRequestError

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def covers(self, name: str) -> bool:
        """Whether an ACL on this pattern applies to the resource ``name`` of its type."""
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.name)
        return self.name in (name, WILDCARD)


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    def applies_to(self, principal: str, host: str) -> bool:
        """Whether the binding names this principal (or ``User:*``) and host (or ``*``)."""
        return self.principal in (principal, WILDCARD_PRINCIPAL) and self.host in (host, WILDCARD)

    def validate(self) -> None:
        """Raise InvalidRequestError for a binding Kafka would refuse to create."""
        p = self.pattern
        if p.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
            raise InvalidRequestError(f"invalid resource type {p.resource_type}")
        if p.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise InvalidRequestError(f"invalid resource pattern type {p.pattern_type}")
        if not p.name:
            raise InvalidRequestError("empty resource name")
        if p.resource_type == ResourceType.CLUSTER and p.name != CLUSTER_NAME:
            raise InvalidRequestError(f"the cluster resource is named {CLUSTER_NAME}")
        if self.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
            raise InvalidRequestError(f"invalid operation {self.operation}")
        if self.permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
            raise InvalidRequestError(f"invalid permission type {self.permission}")
        kind, sep, name = self.principal.partition(":")
        if not (kind and sep and name):
            raise InvalidRequestError(f"principal {self.principal!r} is not TYPE:NAME")


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: AclPermissionType

    def matches(self, acl: AclBinding) -> bool:
        p = acl.pattern
        if self.resource_type != ResourceType.ANY and p.resource_type != self.resource_type:
            return False
        if not self._matches_pattern(p):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation != AclOperation.ANY and acl.operation != self.operation:
            return False
        return self.permission == AclPermissionType.ANY or acl.permission == self.permission

    def _matches_pattern(self, p: ResourcePattern) -> bool:
        if self.pattern_type == PatternType.MATCH:
            return self.name is None or p.covers(self.name)
        if self.pattern_type != PatternType.ANY and p.pattern_type != self.pattern_type:
            return False
        return self.name is None or p.name == self.name
