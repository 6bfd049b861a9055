"""Durable ACL bindings: one JSON file in the data directory.

Format (``acls.json``): ``{"version": 1, "acls": [{"resource_type": 2, "name": "orders",
"pattern_type": 3, "principal": "User:alice", "host": "*", "operation": 3,
"permission": 3}, ...]}`` with Kafka's wire codes.

Every change rewrites the whole file: written to ``acls.json.tmp``, fsynced, renamed over
``acls.json``, and the directory fsynced. A crash leaves either the old or the new set, never a
mix; a leftover ``.tmp`` is ignored. ACLs are few and change rarely, so the rewrite is cheap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from tiered_mq.broker.acl.binding import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tiered_mq.durable_file import replace_durably

FILE_NAME = "acls.json"


class AclStore(Protocol):
    """Where the authorizer keeps its bindings (a file here; ZooKeeper's znodes later)."""

    def load(self) -> list[AclBinding]: ...

    def save(self, acls: list[AclBinding]) -> None: ...


class FileAclStore:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME

    def load(self) -> list[AclBinding]:
        try:
            document = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        return [_decode(entry) for entry in document["acls"]]

    def save(self, acls: list[AclBinding]) -> None:
        data = json.dumps({"version": 1, "acls": [_encode(a) for a in acls]}, indent=1)
        replace_durably(self.path, data.encode())


def _encode(acl: AclBinding) -> dict[str, Any]:
    p = acl.pattern
    return {
        "resource_type": int(p.resource_type),
        "name": p.name,
        "pattern_type": int(p.pattern_type),
        "principal": acl.principal,
        "host": acl.host,
        "operation": int(acl.operation),
        "permission": int(acl.permission),
    }


def _decode(entry: dict[str, Any]) -> AclBinding:
    pattern = ResourcePattern(
        ResourceType(entry["resource_type"]), entry["name"], PatternType(entry["pattern_type"])
    )
    return AclBinding(
        pattern,
        entry["principal"],
        entry["host"],
        AclOperation(entry["operation"]),
        AclPermissionType(entry["permission"]),
    )
