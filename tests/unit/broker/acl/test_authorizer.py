"""The authorizer's rules (Kafka's StandardAuthorizer), its filters and its durable store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.broker.conftest import STANDARD_AUTHORIZER
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
from tiered_mq.broker.acl.store import FileAclStore
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.errors import InvalidRequestError

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED


def acl(
    name: str,
    op: AclOperation,
    permission: AclPermissionType = ALLOW,
    principal: str = "User:alice",
    host: str = "*",
    kind: ResourceType = TOPIC,
    pattern: PatternType = LITERAL,
) -> AclBinding:
    return AclBinding(ResourcePattern(kind, name, pattern), principal, host, op, permission)


async def authorizer(
    tmp_path: Path, *acls: AclBinding, supers: frozenset[str] = frozenset(), allow: bool = False
) -> Authorizer:
    a = Authorizer(FileAclStore(tmp_path), supers, allow)
    assert await a.create(list(acls)) == [None] * len(acls)
    return a


async def test_allow_is_per_principal_operation_and_resource(tmp_path: Path) -> None:
    a = await authorizer(tmp_path, acl("orders", Op.WRITE))
    assert a.authorize("User:alice", "10.0.0.1", Op.WRITE, TOPIC, "orders")
    assert not a.authorize("User:bob", "10.0.0.1", Op.WRITE, TOPIC, "orders")
    assert not a.authorize("User:alice", "10.0.0.1", Op.READ, TOPIC, "orders")
    assert not a.authorize("User:alice", "10.0.0.1", Op.WRITE, TOPIC, "orders2")
    assert not a.authorize("User:alice", "10.0.0.1", Op.WRITE, GROUP, "orders")


async def test_deny_wins_and_does_not_imply(tmp_path: Path) -> None:
    a = await authorizer(
        tmp_path,
        acl("*", Op.ALL, principal="User:*"),
        acl("secret", Op.READ, DENY),
    )
    assert a.authorize("User:alice", "h", Op.READ, TOPIC, "public")
    assert not a.authorize("User:alice", "h", Op.READ, TOPIC, "secret")
    assert a.authorize("User:alice", "h", Op.DESCRIBE, TOPIC, "secret")  # DENY READ only
    assert a.authorize("User:bob", "h", Op.READ, TOPIC, "secret")


async def test_implied_operations(tmp_path: Path) -> None:
    a = await authorizer(tmp_path, acl("t", Op.WRITE), acl("t", Op.ALTER_CONFIGS))
    assert a.authorize("User:alice", "h", Op.DESCRIBE, TOPIC, "t")  # WRITE implies DESCRIBE
    assert a.authorize("User:alice", "h", Op.DESCRIBE_CONFIGS, TOPIC, "t")
    assert not a.authorize("User:alice", "h", Op.DELETE, TOPIC, "t")


async def test_prefixed_patterns_and_hosts(tmp_path: Path) -> None:
    a = await authorizer(tmp_path, acl("logs-", Op.READ, pattern=PREFIXED, host="10.0.0.1"))
    assert a.authorize("User:alice", "10.0.0.1", Op.READ, TOPIC, "logs-app")
    assert not a.authorize("User:alice", "10.0.0.2", Op.READ, TOPIC, "logs-app")
    assert not a.authorize("User:alice", "10.0.0.1", Op.READ, TOPIC, "log")


async def test_no_acl_found_and_super_users(tmp_path: Path) -> None:
    closed = await authorizer(tmp_path, acl("t", Op.READ))
    assert not closed.authorize("User:bob", "h", Op.READ, TOPIC, "other")
    (tmp_path / "open").mkdir()
    opened = await authorizer(tmp_path / "open", acl("t", Op.READ), allow=True)
    assert opened.authorize("User:bob", "h", Op.READ, TOPIC, "other")  # no ACL on "other"
    assert not opened.authorize("User:bob", "h", Op.READ, TOPIC, "t")  # "t" has ACLs
    (tmp_path / "super").mkdir()
    supers = frozenset({"User:root"})
    root = await authorizer(tmp_path / "super", acl("t", Op.READ, DENY), supers=supers)
    assert root.authorize("User:root", "h", Op.READ, TOPIC, "t")


async def test_write_on_any_topic(tmp_path: Path) -> None:
    a = await authorizer(tmp_path, acl("orders-", Op.WRITE, pattern=PREFIXED))
    assert a.authorize_any("User:alice", "h", Op.WRITE, TOPIC)
    assert not a.authorize_any("User:bob", "h", Op.WRITE, TOPIC)
    await a.create([acl("*", Op.WRITE, DENY)])
    assert not a.authorize_any("User:alice", "h", Op.WRITE, TOPIC)


async def test_write_on_any_topic_follows_kafkas_authorize_by_resource_type(
    tmp_path: Path,
) -> None:
    # allow.everyone.if.no.acl.found: a name no ACL covers (Kafka asks about "hardcode") is
    # open, so anyone may write some topic, although other topics have ACLs
    opened = await authorizer(tmp_path, acl("orders", Op.WRITE), allow=True)
    assert opened.authorize_any("User:bob", "h", Op.WRITE, TOPIC)
    await opened.create([acl("*", Op.READ, principal="User:carol")])  # now every name has one
    assert not opened.authorize_any("User:bob", "h", Op.WRITE, TOPIC)
    # an ALLOW counts only if no DENY covers it: the same literal name, or a prefix of it
    (tmp_path / "closed").mkdir()
    a = await authorizer(
        tmp_path / "closed",
        acl("orders", Op.WRITE),
        acl("orders", Op.WRITE, DENY),
        acl("logs-app", Op.ALL),
        acl("logs-", Op.WRITE, DENY, pattern=PREFIXED),
        acl("logs-", Op.WRITE, pattern=PREFIXED),
    )
    assert not a.authorize_any("User:alice", "h", Op.WRITE, TOPIC)
    await a.create([acl("metrics-", Op.WRITE, pattern=PREFIXED)])
    assert a.authorize_any("User:alice", "h", Op.WRITE, TOPIC)
    await a.create([acl("m", Op.ALL, DENY, pattern=PREFIXED)])
    assert not a.authorize_any("User:alice", "h", Op.WRITE, TOPIC)


async def test_bindings_survive_a_restart_and_deletes_are_durable(tmp_path: Path) -> None:
    a = await authorizer(tmp_path, acl("t", Op.READ), acl("g", Op.READ, kind=GROUP))
    assert await a.create([acl("t", Op.READ)]) == [None]  # no duplicate
    reloaded = Authorizer(FileAclStore(tmp_path), frozenset(), False)
    assert sorted(map(str, reloaded.acls)) == sorted(map(str, a.acls))
    assert len(reloaded.acls) == 2
    groups = AclBindingFilter(
        GROUP, None, PatternType.ANY, None, None, Op.ANY, AclPermissionType.ANY
    )
    assert [x.pattern.name for x in (await reloaded.delete([groups]))[0]] == ["g"]
    again = Authorizer(FileAclStore(tmp_path), frozenset(), False)
    assert [x.pattern.name for x in again.acls] == ["t"]


async def test_invalid_bindings_are_refused_alone(tmp_path: Path) -> None:
    a = Authorizer(FileAclStore(tmp_path), frozenset(), False)
    results = await a.create(
        [
            acl("t", Op.ANY),
            acl("t", Op.READ, principal="alice"),
            acl("other", Op.ALTER, kind=CLUSTER),
            acl("t", Op.READ, pattern=PatternType.MATCH),
            acl("t", Op.READ),
        ]
    )
    assert [type(r) for r in results[:4]] == [InvalidRequestError] * 4
    assert results[4] is None
    assert len(a.acls) == 1


async def test_match_filter_finds_what_applies_to_a_name(tmp_path: Path) -> None:
    a = await authorizer(
        tmp_path,
        acl("orders", Op.READ),
        acl("ord", Op.READ, pattern=PREFIXED),
        acl("*", Op.READ),
        acl("other", Op.READ),
    )

    def names(pattern: PatternType, name: str | None) -> list[str]:
        f = AclBindingFilter(TOPIC, name, pattern, None, None, Op.ANY, AclPermissionType.ANY)
        return sorted(x.pattern.name for x in a.describe(f))

    assert names(PatternType.MATCH, "orders") == ["*", "ord", "orders"]
    assert names(LITERAL, "orders") == ["orders"]
    assert names(PatternType.ANY, None) == ["*", "ord", "orders", "other"]


def test_config_turns_it_on(tmp_path: Path) -> None:
    store = FileAclStore(tmp_path)
    assert Authorizer.from_config(BrokerConfig(data_dir=tmp_path), store) is None
    on = BrokerConfig(
        data_dir=tmp_path,
        overrides={
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": "User:admin; User:ops",
        },
    )
    a = Authorizer.from_config(on, store)
    assert a is not None and a.super_users == {"User:admin", "User:ops"}
    bad = BrokerConfig(data_dir=tmp_path, overrides={"authorizer.class.name": "com.example.X"})
    with pytest.raises(ValueError, match=r"authorizer\.class\.name"):
        Authorizer.from_config(bad, store)
