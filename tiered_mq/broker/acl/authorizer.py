"""The authorizer: Kafka's ACL rules over the bindings of an :class:`AclStore`.

``authorize(principal, host, operation, resource_type, name)`` decides as Kafka's
StandardAuthorizer does:

1. a principal listed in ``super.users`` may do everything;
2. the bindings that apply are those whose pattern covers the resource (literal name, literal
   ``*``, or a prefix) and whose principal (or ``User:*``) and host (or ``*``) match;
3. a DENY for the operation (or ALL) wins over any ALLOW;
4. an ALLOW for the operation, for ALL, or for an operation that implies it allows: READ,
   WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS;
5. with no binding at all on the resource, ``allow.everyone.if.no.acl.found`` decides
   (default false: denied).

Principals: ``User:<name>`` after SASL, ``User:<subject DN>`` for a TLS client certificate,
``User:ANONYMOUS`` otherwise. Bindings change only through :meth:`create` and :meth:`delete`,
which save the whole set before they return (see store.py for crash behaviour); decisions read
the in-memory copy, so a check costs one scan of the bindings of one resource type.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

from tiered_mq.broker.acl.binding import (
    WILDCARD,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from tiered_mq.broker.acl.store import AclStore
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.errors import KafkaError

log = logging.getLogger(__name__)

ANONYMOUS = "User:ANONYMOUS"
_UNUSED_NAME = "hardcode"  # what Kafka's authorizeByResourceType checks first
KAFKA_AUTHORIZERS = frozenset(
    {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
    }
)
_IMPLIED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset(
        {
            AclOperation.DESCRIBE,
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.DELETE,
            AclOperation.ALTER,
        }
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset(
        {AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}
    ),
}


class Authorizer:
    def __init__(self, store: AclStore, super_users: frozenset[str], allow_if_no_acl: bool) -> None:
        self._store = store
        self.super_users = super_users
        self.allow_if_no_acl = allow_if_no_acl
        self._acls: list[AclBinding] = store.load()
        self._by_type = _index(self._acls)
        self._changing = asyncio.Lock()  # one change at a time, each saved before the next

    @classmethod
    def from_config(cls, config: BrokerConfig, store: AclStore) -> Authorizer | None:
        """The configured authorizer, None when ``authorizer.class.name`` is empty; a class
        name other than Kafka's two raises ValueError."""
        name = (config.get("authorizer.class.name") or "").strip()
        if not name:
            return None
        if name not in KAFKA_AUTHORIZERS:
            raise ValueError(
                f"authorizer.class.name={name}: only {' or '.join(sorted(KAFKA_AUTHORIZERS))}"
            )
        supers = frozenset(
            p.strip() for p in (config.get("super.users") or "").split(";") if p.strip()
        )
        allow = config.get_bool("allow.everyone.if.no.acl.found")
        return cls(store, supers, allow)

    @property
    def acls(self) -> list[AclBinding]:
        return list(self._acls)

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        if principal in self.super_users:
            return True
        applying = [a for a in self._by_type.get(resource_type, ()) if a.pattern.covers(name)]
        if not applying:
            return self.allow_if_no_acl
        mine = [a for a in applying if a.applies_to(principal, host)]
        if any(
            a.permission == AclPermissionType.DENY and a.operation in (operation, AclOperation.ALL)
            for a in mine
        ):
            return False
        allowed_by = _IMPLIED_BY.get(operation, frozenset({operation}))
        return any(
            a.permission == AclPermissionType.ALLOW
            and (a.operation == AclOperation.ALL or a.operation in allowed_by)
            for a in mine
        )

    def authorize_any(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether the principal may do ``operation`` on some resource of the type (Kafka's
        ``Authorizer.authorizeByResourceType``: an idempotent producer needs WRITE on any topic).

        As Kafka's: first :meth:`authorize` on a name no one uses (``hardcode``), so super users
        pass, and so does everyone when no ACL covers that name and
        ``allow.everyone.if.no.acl.found`` is true. Else the principal's own bindings (or
        ``User:*``'s) for the operation or ALL decide: a DENY on every name (literal ``*``)
        refuses; an ALLOW on every name grants; else some other ALLOW must survive the DENYs,
        a literal one unless the same literal name or a prefix of it is denied, a prefixed one
        unless a prefix of its prefix is denied."""
        if self.authorize(principal, host, operation, resource_type, _UNUSED_NAME):
            return True
        ops = (operation, AclOperation.ALL)
        mine = [
            a
            for a in self._by_type.get(resource_type, ())
            if a.operation in ops and a.applies_to(principal, host)
        ]
        denied = _resource_patterns(mine, AclPermissionType.DENY)
        if (PatternType.LITERAL, WILDCARD) in denied:
            return False
        denied_prefixes = [name for kind, name in denied if kind == PatternType.PREFIXED]
        allowed = _resource_patterns(mine, AclPermissionType.ALLOW)
        if (PatternType.LITERAL, WILDCARD) in allowed:
            return True
        return any(
            not (kind == PatternType.LITERAL and (kind, name) in denied)
            and not any(name.startswith(prefix) for prefix in denied_prefixes)
            for kind, name in allowed
        )

    async def create(self, bindings: list[AclBinding]) -> list[KafkaError | None]:
        """Add the valid bindings (an existing one is not duplicated); one result each."""
        async with self._changing:
            results: list[KafkaError | None] = []
            added = list(self._acls)
            for binding in bindings:
                try:
                    binding.validate()
                except KafkaError as e:
                    results.append(e)
                    continue
                if binding not in added:
                    added.append(binding)
                results.append(None)
            if len(added) != len(self._acls):
                await self._replace(added)
            return results

    async def delete(self, filters: list[AclBindingFilter]) -> list[list[AclBinding]]:
        """Remove the bindings each filter matches; the removed ones, per filter."""
        async with self._changing:
            removed = [[a for a in self._acls if f.matches(a)] for f in filters]
            gone = {a for group in removed for a in group}
            if gone:
                await self._replace([a for a in self._acls if a not in gone])
            return removed

    def describe(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        return [a for a in self._acls if acl_filter.matches(a)]

    async def _replace(self, acls: list[AclBinding]) -> None:
        # durable first (off the loop): an answer never promises more than the file holds
        await asyncio.to_thread(self._store.save, acls)
        self._acls = acls
        self._by_type = _index(acls)
        log.info("ACLs changed: %d bindings", len(acls))


def _resource_patterns(
    acls: list[AclBinding], permission: AclPermissionType
) -> set[tuple[PatternType, str]]:
    """The (pattern type, name) of the resource patterns of ``acls`` with ``permission``
    (Kafka's ``authorizeByResourceType`` gathers its deny and allow patterns so)."""
    return {(a.pattern.pattern_type, a.pattern.name) for a in acls if a.permission == permission}


def _index(acls: list[AclBinding]) -> dict[ResourceType, list[AclBinding]]:
    by_type: dict[ResourceType, list[AclBinding]] = defaultdict(list)
    for a in acls:
        by_type[a.pattern.resource_type].append(a)
    return dict(by_type)
