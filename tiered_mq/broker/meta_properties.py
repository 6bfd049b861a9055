"""``<data_dir>/meta.properties``: the cluster a data dir belongs to (Kafka's
BrokerMetadataCheckpoint, ZooKeeper-mode version 0).

Format (Java properties: ``key=value`` lines, ``#`` comments ignored)::

    version=0
    broker.id=<this broker's id>
    cluster.id=<the cluster id, 22 characters>
    remote.log.storage.url=<the cold tier of its tiered data>   (cold_tier_record.py)

Why: at start the broker deletes the partition directories that the cluster metadata does not
own (stray_partitions.py). Pointed at the wrong metadata (a mistyped ``zookeeper.connect``
chroot, an empty ZooKeeper, a lost ``cluster.json``) every directory would look like a stray.
As Kafka does (InconsistentClusterIdException), a broker whose coordinator reports another
cluster id than the one recorded here refuses to start before any partition is looked at, and
the data stays. So does a broker configured with another ``broker.id`` than the one recorded
(Kafka's InconsistentBrokerIdException): the data dir is another broker's.

A data dir without the file (a new one, or one from before the file existed) has no identity to
check: a stray directory in it stops that start, before anything is changed (a lost
``cluster.json`` must not cost the data: replica_manager.py, stray_partitions.py); with none,
the start records the coordinator's cluster id (broker.py).

Crash behaviour: written whole and durably (durable_file.py): after a crash the file is absent
(written again at the next start) or complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from tiered_mq.durable_file import replace_durably

FILE_NAME: Final = "meta.properties"
VERSION: Final = "0"
_OWN_KEYS: Final = ("version", "broker.id", "cluster.id")


class InconsistentClusterIdError(RuntimeError):
    """The data dir belongs to another cluster than the coordinator's (the broker stops)."""


class InconsistentBrokerIdError(RuntimeError):
    """The data dir belongs to another broker than the configured ``broker.id`` (the broker
    stops)."""


def read(data_dir: Path) -> dict[str, str] | None:
    """The properties in ``data_dir``'s file, None when there is none; ValueError naming the
    file when it is not UTF-8 text (the broker does not start, as Kafka's)."""
    path = data_dir / FILE_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    props = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def write(
    data_dir: Path, broker_id: int, cluster_id: str, extra: Mapping[str, str] | None = None
) -> None:
    """Write the file: ``version``, ``broker.id``, ``cluster.id``, then the other keys the file
    already holds, updated by ``extra`` (``remote.log.storage.url``: cold_tier_record.py)."""
    kept = {k: v for k, v in (read(data_dir) or {}).items() if k not in _OWN_KEYS}
    kept.update(extra or {})
    data = f"version={VERSION}\nbroker.id={broker_id}\ncluster.id={cluster_id}\n"
    data += "".join(f"{key}={value}\n" for key, value in kept.items())
    replace_durably(data_dir / FILE_NAME, data.encode())


def check_cluster_id(data_dir: Path, cluster_id: str, metadata: str, broker_id: int) -> bool:
    """True when ``data_dir``'s file records ``cluster_id`` and ``broker_id``; False when there
    is no file (nothing to check: the caller writes one once the data dir holds no stray);
    raises InconsistentClusterIdError when it records another cluster id, and
    InconsistentBrokerIdError another broker id. ``metadata`` names where the cluster id came
    from (``zookeeper.connect=...`` or the embedded ``cluster.json``), for the message."""
    props = read(data_dir)
    stored = props.get("cluster.id") if props is not None else None
    if props is None or stored is None:
        return False
    if stored != cluster_id:
        raise InconsistentClusterIdError(
            f"The Cluster ID {cluster_id} doesn't match stored clusterId {stored} in "
            f"{data_dir / FILE_NAME}. The broker is trying to join the wrong cluster: "
            f"{metadata} may be wrong. Nothing in {data_dir} was changed."
        )
    stored_id = props.get("broker.id")
    if stored_id is not None and stored_id != str(broker_id):
        raise InconsistentBrokerIdError(
            f"Configured broker.id {broker_id} doesn't match stored broker.id {stored_id} in "
            f"{data_dir / FILE_NAME}. If you moved your data, make sure your configured "
            "broker.id matches. If you intend to create a new broker, give it an empty data "
            f"dir. Nothing in {data_dir} was changed."
        )
    return True
