"""What every client sub-command shares: the bootstrap, ``-X`` and ``--timeout`` options,
the admin client they configure, ``k=v`` parsing, error reporting, the GROUP arguments, and
plain-text tables (``format_table``, from ``_table.py``).

Broker and client errors reach the user as ``Error: NAME: message`` on stderr with exit
status 1 (``ClientError`` -> ``click.ClickException``); nothing prints a traceback. When the
broker could not be reached (``_TRANSPORT``, ``_ALL_BROKERS_DOWN``, ``_TIMED_OUT``), a hint line
follows: the usual cause is a listener that needs TLS or SASL settings given with ``-X``, and
``-v`` (``verbose_option``) shows librdkafka's log lines, which say more. A failure of the
CLI's own connection (``ConnectionFailure``: ``configs --broker``/``--broker-default``,
``--synonyms``, which librdkafka cannot send) gets the hint without ``-v``, naming the address
it tried (a broker's advertised one for ``--broker N``): librdkafka logged nothing about it.
Records that waited too long for a broker which does answer (a ``StalledError`` whose
``broker_reached``: it refuses them, as ``NOT_ENOUGH_REPLICAS``) get no such hint: the error
names the last delivery error instead, or, when none came yet, the hint is that ``-v -X
debug=msg`` shows the broker's answers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

import click
from confluent_kafka import KafkaException

from tiered_mq.cli._client_log import show_client_log
from tiered_mq.cli._table import format_table as format_table  # re-exported
from tiered_mq.client.admin import Admin
from tiered_mq.client.config import BOOTSTRAP_ENV, DEFAULT_BOOTSTRAP, AdminConfig
from tiered_mq.client.errors import ClientError, ConnectionFailure, StalledError

P = ParamSpec("P")
R = TypeVar("R")

bootstrap_option = click.option(
    "-b",
    "--bootstrap-server",
    "bootstrap",
    envvar=BOOTSTRAP_ENV,
    default=DEFAULT_BOOTSTRAP,
    show_default=True,
    show_envvar=True,
    metavar="HOST:PORT[,...]",
    help="Broker(s) to bootstrap from.",
)


def client_property_option(
    tool: str = "", names: Collection[str] = (), aliases: Sequence[str] = ()
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``-X``/``--property KEY=VALUE`` (parameter ``properties``, repeatable): a librdkafka
    client property, or, when ``names`` are given, one of ``tool``'s properties of those names
    (kafka-console-*.sh's ``--property``), which the command takes out first
    (``_line_format.split_properties``). ``aliases``: more names of the option, as Kafka's
    tool names its client and reader/formatter properties' options (``--producer-property``,
    and since Kafka 4.0 ``--command-property``, ``--reader-property``, ...): one option takes
    both kinds here."""
    help_text = "Extra librdkafka client property (repeatable)."
    if names:
        help_text = (
            f"librdkafka client property, or {tool} property ({', '.join(sorted(names))})."
            " Repeatable."
        )
    return click.option(
        "-X",
        "--property",
        *aliases,
        "properties",
        multiple=True,
        metavar="KEY=VALUE",
        help=help_text,
    )


property_option = client_property_option()
"""``-X`` of the admin commands: librdkafka properties only."""

timeout_option = click.option(
    "--timeout",
    default=15.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for the broker.",
)


def _verbose(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        show_client_log(ctx)


verbose_option = click.option(
    "-v",
    "--verbose",
    is_flag=True,
    expose_value=False,
    callback=_verbose,
    help="Show the client library's (librdkafka's) log lines on stderr (-X debug=... for more).",
)
"""``-v``: librdkafka's log lines on stderr (``_client_log.py``); no parameter."""


def admin_options(func: Callable[P, R]) -> Callable[P, R]:
    """``-b``, ``-X``, ``--timeout`` (parameters ``bootstrap``, ``properties``, ``timeout``)
    and ``-v`` of the commands that talk to the broker through ``admin_client``."""
    return bootstrap_option(property_option(timeout_option(verbose_option(func))))


def admin_client(bootstrap: str, timeout: float, properties: Iterable[str]) -> Admin:
    """The SDK's admin client for ``admin_options``' values (``-X`` as librdkafka properties)."""
    extra = parse_kv(properties, "--property")
    return Admin(AdminConfig(bootstrap_servers=bootstrap, request_timeout_s=timeout, extra=extra))


def parse_pairs(values: Iterable[str], what: str) -> list[tuple[str, str]]:
    """``["a=1", "a=x=y"]`` -> ``[("a", "1"), ("a", "x=y")]``, in order and repeats kept (record
    headers may repeat a key); no ``=`` or no key: usage error."""
    result: list[tuple[str, str]] = []
    for item in values:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=what)
        result.append((key, value))
    return result


def parse_kv(values: Iterable[str], what: str = "config") -> dict[str, str]:
    """``["a=1", "b=x=y"]`` -> ``{"a": "1", "b": "x=y"}`` (a repeated key: the last value); no
    ``=`` or no key: usage error."""
    return dict(parse_pairs(values, what))


UNREACHABLE_ERRORS: Mapping[str, str] = {
    "_TRANSPORT": "could not talk to",
    "_ALL_BROKERS_DOWN": "could not talk to",
    "_TIMED_OUT": "no answer from",  # what admin requests get from a TLS or SASL listener
}
"""librdkafka errors that mean "no conversation with the broker", with the hint's wording."""


def error_message(err: ClientError, bootstrap: str | None) -> str:
    """``NAME: message``, plus a hint line when the broker could not be reached."""
    if isinstance(err, StalledError) and err.broker_reached:
        if err.last_error is not None:
            return str(err)
        return f"{err}\nhint: -v -X debug=msg shows the produce requests and the broker's answers"
    lead = UNREACHABLE_ERRORS.get(err.name)
    if lead is None or not bootstrap:
        return str(err)
    question = "is it running, and does its listener need TLS or SASL (-X security.protocol=...)?"
    if isinstance(err, ConnectionFailure):  # the CLI's own connection: librdkafka logged nothing
        return f"{err}\nhint: {lead} the broker at {err.address}: {question}"
    return f"{err}\nhint: {lead} the broker at {bootstrap}: {question} -v shows librdkafka's log"


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turns ``ClientError`` (and librdkafka's config errors) into a clean exit status 1; the
    command's ``bootstrap`` parameter, if any, names the broker in the unreachable hint."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        bootstrap = kwargs.get("bootstrap")
        address = bootstrap if isinstance(bootstrap, str) else None
        try:
            return func(*args, **kwargs)
        except ClientError as err:
            raise click.ClickException(error_message(err, address)) from err
        except KafkaException as err:  # e.g. an unknown librdkafka property
            raise click.ClickException(error_message(ClientError.wrap(err), address)) from err
        except ValueError as err:  # a config value the SDK's dataclasses refuse
            raise click.ClickException(str(err)) from err

    return wrapper


def name_argument(
    param: str, option: str, *, many: bool = False
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """The command's NAME argument ``param`` (a topic, a group), which may also be given as
    Kafka's tools take it, ``--option NAME``. Single (``many`` False): one of the two, or both
    naming the same; the function gets it as ``param``. ``many``: the arguments, then the
    options, repeats dropped, as a tuple (empty if none: the command says whether that is
    allowed). Put it right below ``@click.command``: NAME stays the first argument."""
    metavar = param.rstrip("s").upper()
    flag = f"--{option}"

    def decorate(func: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> R:
            given, extra = kwargs.pop(param), kwargs.pop(f"{param}_option")
            if many:
                kwargs[param] = tuple(dict.fromkeys((*given, *extra)))
                return func(*args, **kwargs)
            if given is not None and extra is not None and given != extra:
                raise click.UsageError(f"two {option}s given: {given} and {flag} {extra}")
            chosen = given if given is not None else extra
            if chosen is None:
                raise click.UsageError(f"Missing argument '{metavar}' (or {flag} {metavar}).")
            kwargs[param] = chosen
            return func(*args, **kwargs)

        with_option = click.option(
            flag,
            f"{param}_option",
            metavar=metavar,
            multiple=many,
            help=f"As Kafka's tools take it (instead of, or with, the {metavar} argument"
            f"{'s' if many else ''}){'; repeatable' if many else ''}.",
        )(wrapper)
        if many:
            return click.argument(param, nargs=-1, metavar=f"[{metavar}]...")(with_option)
        return click.argument(param, required=False, metavar=metavar)(with_option)

    return decorate


topic_argument = name_argument("topic", "topic")
"""TOPIC, or ``--topic TOPIC`` as kafka-console-*.sh take it (parameter ``topic``)."""


all_groups_option = click.option(
    "--all-groups", is_flag=True, help="Every consumer group (instead of GROUP...)."
)
"""``--all-groups`` (parameter ``all_groups``) of the commands that take GROUP arguments
(``name_argument("groups", "group", many=True)``), as kafka-consumer-groups.sh takes it."""


def check_groups(groups: Sequence[str], all_groups: bool) -> None:
    """Usage error unless the GROUP arguments or ``--all-groups`` are given (not both)."""
    if bool(groups) == all_groups:
        raise click.UsageError("give GROUP (one or more) or --all-groups")


def group_ids(admin: Admin, groups: Sequence[str]) -> list[str]:
    """The GROUP arguments (``name_argument`` has dropped repeats), or, with none (``--all-groups``,
    checked by ``check_groups``), every group the broker lists."""
    return list(groups) or [g.group_id for g in admin.list_groups()]
