"""``tiered-mq dev``: a single-node broker with embedded coordination, in the foreground.

Prints the data dir and the bootstrap address, then serves until Ctrl-C, SIGTERM or SIGHUP
(a closed terminal; the JVM stops Kafka cleanly on all three), which stop it cleanly:
connections closed, every log flushed, producer state snapshotted, logs closed; exit status 0.
A stop asked for while the broker starts (recovering logs, waiting for ZooKeeper) abandons the
start: the partitions being opened finish (a log's recovery is not interrupted), the ones not
reached are left for the next start, what started is closed, and the process exits 0 without
ever listening (Kafka's JVM exits during its start too).
``--config key=value`` (repeatable) sets broker configs (``num.partitions=3``) and default topic
configs (``segment.bytes=1048576`` or ``log.segment.bytes=...``). ``--metrics-port 0`` turns
the Prometheus endpoint off (default 9308; if that port is taken the broker runs without it).
Tiered storage goes to ``--cold-url`` (``s3://bucket/prefix`` with ``--s3-endpoint``,
``--s3-region``, ``--s3-path-style``; credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)
for topics with ``remote.storage.enable=true`` (``--config remote.storage.enable=true`` tiers
every topic); see broker/remote_tier.py for the ``remote.log.*`` settings. The banner's
``cold tier:`` line is that URL, or ``off (remote.log.storage.system.enable=false)`` when
tiering is off (no cold tier started).
``--config zookeeper.connect=host:port[/chroot]`` keeps cluster metadata in ZooKeeper instead of
the data dir's ``cluster.json`` (coordination/zookeeper.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import logging
import signal
import sys
from pathlib import Path

import click

from tiered_mq.broker.broker import Broker
from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.startup_heap import freeze_startup_heap
from tiered_mq.errors import KafkaError, StorageError

DEFAULT_DATA_DIR = "./.tiered-mq"
DEFAULT_METRICS_PORT = 9308


def _parse_configs(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected key=value, got {item!r}", param_hint="--config")
        out[key.strip()] = value.strip()
    return out


def _s3_configs(region: str | None, path_style: bool | None) -> dict[str, str]:
    out = {"remote.log.s3.region": region} if region else {}
    if path_style is not None:
        out["remote.log.s3.path.style"] = str(path_style).lower()
    return out


# the signals that stop the broker cleanly (the JVM runs Kafka's shutdown hook on each)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def _start_unless_stopped(broker: Broker, stop: asyncio.Event) -> bool:
    """Start ``broker``; False when ``stop`` was set first (the start abandoned: cancelled,
    what started closed). A failed start is a ClickException naming the cause."""
    starting = asyncio.ensure_future(broker.start())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if not starting.done():
        click.echo("stop requested while starting: start abandoned")
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await starting
        await broker.close()
        click.echo("stopped")
        return False
    try:
        starting.result()
    except (KafkaError, StorageError, RuntimeError, OSError, ValueError) as e:
        await broker.close()  # release whatever started
        raise click.ClickException(f"broker did not start: {e}") from None
    return True


def _cold_tier(broker: Broker) -> str:
    """The banner's cold tier: the URL the started broker tiers to, or that tiering is off
    (``remote.log.storage.system.enable=false``: no cold tier was started, the URL unused)."""
    if broker.remote_log_manager is not None:
        return str(broker.config.cold_url)
    return "off (remote.log.storage.system.enable=false)"


async def _run(broker: Broker) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    if not await _start_unless_stopped(broker, stop):
        return
    freeze_startup_heap()
    try:
        click.echo(f"tiered-mq broker {broker.config.node_id} ready")
        click.echo(f"  data dir:  {broker.config.data_dir.resolve()}")
        zookeeper = broker.config.get("zookeeper.connect")
        click.echo(f"  metadata:  {f'ZooKeeper {zookeeper}' if zookeeper else 'cluster.json'}")
        click.echo(f"  cold tier: {_cold_tier(broker)}")
        if broker.metrics_bound_port:
            click.echo(
                f"  metrics:   http://{broker.advertised_host}:{broker.metrics_bound_port}/metrics"
            )
        for listener in broker.listeners:
            host, port = listener.endpoint
            kind = f" ({listener.name})" if listener.name != "PLAINTEXT" else ""
            click.echo(f"  bootstrap: {host}:{port}{kind}")
        sys.stdout.flush()
        await stop.wait()
        click.echo("stopping...")
    finally:
        await broker.close()
        click.echo("stopped")


@click.command("dev")
@click.option(
    "--port",
    default=9092,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Kafka listener port (0 = any).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--data-dir",
    default=DEFAULT_DATA_DIR,
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the broker keeps its partition logs and metadata.",
)
@click.option(
    "--cold-url",
    default=None,
    show_default="file://<data-dir>/cold",
    help="Object store URL of the tiered storage (s3://bucket/prefix, file:///path).",
)
@click.option(
    "--s3-endpoint",
    default=None,
    envvar="TIERED_MQ_S3_ENDPOINT",
    help="S3 endpoint URL for s3:// cold URLs (as the tier commands).",
)
@click.option("--s3-region", default=None, help="S3 region (remote.log.s3.region).")
@click.option(
    "--s3-path-style/--no-s3-path-style",
    default=None,
    show_default="on with --s3-endpoint",
    help="Path-style S3 addressing.",
)
@click.option(
    "--metrics-port",
    default=DEFAULT_METRICS_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Prometheus endpoint port (0 = off).",
)
@click.option(
    "--config", "configs", multiple=True, metavar="KEY=VALUE", help="Broker/topic config."
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], case_sensitive=False),
    default="INFO",
    show_default=True,
    help="The broker's log level (its log goes to stderr).",
)
def command(
    port: int,
    host: str,
    data_dir: Path,
    cold_url: str | None,
    s3_endpoint: str | None,
    s3_region: str | None,
    s3_path_style: bool | None,
    metrics_port: int,
    configs: tuple[str, ...],
    log_level: str,
) -> None:
    """Start a single-node broker with embedded coordination."""
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    data_dir = data_dir.expanduser()
    cold = cold_url or f"file://{data_dir.resolve() / 'cold'}"
    config = BrokerConfig(
        data_dir,
        host=host,
        port=port,
        overrides=_parse_configs(configs) | _s3_configs(s3_region, s3_path_style),
        cold_url=cold,
        s3_endpoint=s3_endpoint,
    )
    try:
        broker = Broker(config, metrics_port=metrics_port)
    except ValueError as e:  # e.g. a listeners, ssl.* or sasl.* setting
        raise click.ClickException(f"broker did not start: {e}") from None
    with contextlib.suppress(KeyboardInterrupt):
        if importlib.util.find_spec("uvloop") is not None:
            importlib.import_module("uvloop").run(_run(broker))
        else:  # pragma: no cover - uvloop is a dependency on Linux
            asyncio.run(_run(broker))
