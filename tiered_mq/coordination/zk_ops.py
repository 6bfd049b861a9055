"""Blocking kazoo write primitives shared by the ZooKeeper coordinator's modules.

Each function takes a connected ``KazooClient`` and blocks on ZooKeeper: call them in a worker
thread (``ZooKeeperSession.call``), never on the event loop.

- ``compare_and_set``: read-modify-write of one znode, conditional on the version read; a
  concurrent writer makes it read again (``/controller_epoch``, ``/latest_producer_id_block``).
- ``set_or_create``: unconditional write of a znode that may be missing (parents created).
- ``subtree``: a znode and everything below it, in the order a multi-op deletes them
  (``subtrees``: of many znodes, one round trip a level).
- ``first_failure``: the operation that failed a committed multi-op; ``CONCURRENT`` are the
  failures that mean it lost a race (and may be retried after reading again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, RolledBackError

T = TypeVar("T")
CONCURRENT = (BadVersionError, NodeExistsError, NoNodeError)  # a multi-op lost a race


def compare_and_set(
    client: KazooClient, path: str, update: Callable[[bytes | None], tuple[bytes, T]]
) -> T:
    """Replace ``path``'s data (None: the znode is missing) with ``update``'s, conditional on
    the version read; a concurrent writer makes it read again. Returns ``update``'s second
    value for the data that was written."""
    while True:
        try:
            data, stat = client.get(path)
        except NoNodeError:
            new, result = update(None)
            try:
                client.create(path, new)
                return result
            except NodeExistsError:
                continue
        new, result = update(data)
        try:
            client.set(path, new, stat.version)
            return result
        except BadVersionError:
            continue


def set_or_create(client: KazooClient, path: str, data: bytes) -> None:
    try:
        client.set(path, data)
    except NoNodeError:
        client.create(path, data, makepath=True)


def subtrees(client: KazooClient, paths: list[str]) -> dict[str, list[str] | None]:
    """Each of ``paths`` and every znode below it, children before their parents (None: the
    znode is missing), asking for the children of a whole level at once (one round trip a
    level, not one a znode)."""
    below: dict[str, list[str]] = {}
    level = list(paths)
    missing: set[str] = set()
    while level:
        asked = [(path, client.get_children_async(path)) for path in level]
        level = []
        for path, answer in asked:
            try:
                children = [f"{path}/{child}" for child in answer.get()]
            except NoNodeError:
                missing.add(path)
                continue
            below[path] = children
            level.extend(children)

    def ordered(path: str) -> list[str]:
        out: list[str] = []
        for child in below.get(path, []):
            out.extend(ordered(child))
        out.append(path)
        return out

    return {path: None if path in missing else ordered(path) for path in paths}


def first_failure(results: list[Any]) -> Exception | None:
    """The operation that failed a committed multi-op (the others answer RolledBackError);
    None when it was applied."""
    failures = [r for r in results if isinstance(r, Exception)]
    if not failures:
        return None
    return next((r for r in failures if not isinstance(r, RolledBackError)), failures[0])
