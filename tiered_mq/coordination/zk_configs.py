"""Entity config writes of the ZooKeeper coordinator: users' SCRAM credentials
(``/config/users/<user>``) and dynamic broker configs (``/config/brokers/<default>`` and
``/<id>``), Kafka's znodes. Blocking, run through ``ZooKeeperSession.call``; the caller updates
the session's view with what they return.

SCRAM credentials of several users change in one multi-op transaction that checks each user
znode's version (read-modify-write of its config, retried on a concurrent change); other keys
of a user's config (client quotas) are kept, and a config left empty deletes its znode. Dynamic
broker configs replace their entity's znode in one write (none left: the znode is deleted).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from tiered_mq.coordination import znodes
from tiered_mq.coordination.base import apply_scram_changes
from tiered_mq.coordination.zk_ops import CONCURRENT, first_failure, set_or_create
from tiered_mq.errors import RequestTimedOutError

log = logging.getLogger(__name__)
ALTER_ATTEMPTS = 20


def alter_scram_credentials(
    client: KazooClient, changes: dict[str, dict[str, str | None]]
) -> dict[str, dict[str, str]]:
    """One multi-op over the users' znodes, each conditional on the version read; a concurrent
    change makes it read again and retry (REQUEST_TIMED_OUT after ``ALTER_ATTEMPTS``). Returns
    each user's config as written."""
    for _ in range(ALTER_ATTEMPTS):
        txn = client.transaction()
        written: dict[str, dict[str, str]] = {}
        for user, mechanisms in changes.items():
            written[user] = _stage_user_config(client, txn, user, mechanisms)
        if not txn.operations:  # nothing to change (e.g. deleting what is not there)
            return written
        failure = first_failure(txn.commit())
        if failure is None:
            return written
        if not isinstance(failure, CONCURRENT):
            raise failure
        log.info("user configs changed concurrently; trying again")
    raise RequestTimedOutError("user configs keep changing concurrently; try again")


def _stage_user_config(
    client: KazooClient, txn: Any, user: str, mechanisms: dict[str, str | None]
) -> dict[str, str]:
    """Add to ``txn`` the change of ``user``'s znode (conditional on the version read now);
    returns the config it writes."""
    path = znodes.user_config(user)
    try:
        data, stat = client.get(path)
        config, version = znodes.decode_entity_config(data), stat.version
    except NoNodeError:
        config, version = {}, -1
    apply_scram_changes(config, mechanisms)
    if version >= 0 and config:
        txn.set_data(path, znodes.encode_entity_config(config), version)
    elif version >= 0:
        txn.delete(path, version)
    elif config:
        txn.create(path, znodes.encode_entity_config(config))
    return config


def set_broker_configs(client: KazooClient, entity: str, configs: dict[str, str]) -> None:
    """Replace the dynamic configs of ``entity`` (``<default>`` or a broker id)."""
    path = znodes.broker_config(entity)
    if configs:
        set_or_create(client, path, znodes.encode_entity_config(configs))
    else:
        with contextlib.suppress(NoNodeError):
            client.delete(path)
