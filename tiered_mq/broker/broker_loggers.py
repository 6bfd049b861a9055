"""BROKER_LOGGER config resources (type 8, KIP-412): the broker's log levels, read with
DescribeConfigs and changed with IncrementalAlterConfigs, as Kafka's Log4jController and
RuntimeLoggerManager do (``kafka-configs.sh --entity-type broker-loggers``).

The loggers are Python's ``logging`` loggers of the ``tiered_mq`` package (one per module,
created at import, and the packages above them) and the root logger, named ``root`` as in
Kafka. Levels use Kafka's names, mapped onto Python's levels:

    TRACE 5 (a level below DEBUG, registered as "TRACE")   DEBUG 10   INFO 20
    WARN 30   ERROR 40   FATAL 50 (CRITICAL)   OFF 60 (above every record's level)

A logger's value is its effective level (its own, else the nearest ancestor's), a level between
two names reading as the lower one. Kafka's operations:

- SET: the logger takes the level. An unknown logger or a level not in the list above (names
  are case-sensitive, as Kafka's) is INVALID_CONFIG;
- DELETE: the logger's own level goes (Python's NOTSET), so it follows its ancestors again,
  ending at root's level (log4j's ``setLevel(null)``); the root logger's cannot be removed:
  INVALID_REQUEST;
- APPEND and SUBTRACT: INVALID_REQUEST.

Every operation of a resource is checked before any is applied; ``validate_only`` applies none.
Levels live in memory only: a restart brings back the ones the command line set (Kafka does not
persist KIP-412 levels either). Each change is logged at WARNING, as Kafka logs it.
"""

from __future__ import annotations

import logging
from typing import Any

from tiered_mq.errors import InvalidConfigError, InvalidRequestError

log = logging.getLogger(__name__)

ROOT_LOGGER = "root"
PACKAGE = "tiered_mq"
TRACE = 5
OFF = logging.CRITICAL + 10
LEVELS: dict[str, int] = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": OFF,
}
VALID_LEVELS = ", ".join(sorted(LEVELS))
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

logging.addLevelName(TRACE, "TRACE")


def level_name(level: int) -> str:
    """Kafka's name of a Python level: the greatest named level not above it."""
    name = "TRACE"
    for candidate, value in LEVELS.items():
        if value <= level:
            name = candidate
    return name


def logger_names() -> list[str]:
    """``root``, then every logger of the package, sorted."""
    known = logging.Logger.manager.loggerDict
    names = {n for n in known if n == PACKAGE or n.startswith(PACKAGE + ".")}
    return [ROOT_LOGGER, *sorted(names)]


def _logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT_LOGGER else logging.getLogger(name)


def loggers() -> dict[str, str]:
    """Every logger (see :func:`logger_names`) with its effective level's Kafka name."""
    return {name: level_name(_logger(name).getEffectiveLevel()) for name in logger_names()}


def _exists(name: str) -> bool:
    return name == ROOT_LOGGER or (
        (name == PACKAGE or name.startswith(PACKAGE + "."))
        and name in logging.Logger.manager.loggerDict
    )


def check_node(resource_name: str, node_id: int) -> None:
    """INVALID_REQUEST unless ``resource_name`` is this broker's id (RuntimeLoggerManager's
    messages; an empty name is not an integer)."""
    try:
        requested = int(resource_name)
    except ValueError:
        raise InvalidRequestError(
            f"Node id must be an integer, but it is: {resource_name}"
        ) from None
    if requested != node_id:
        raise InvalidRequestError(
            f"Unexpected node id. Expected {node_id}, but received {requested}"
        )


def check(ops: list[dict[str, Any]]) -> None:
    """Raise for the first operation of ``ops`` Kafka refuses (see the module docstring).
    Each op has ``name``, ``config_operation`` and ``value``."""
    for op in ops:
        name, kind = op["name"], op["config_operation"]
        if kind == SET:
            if not _exists(name):
                raise InvalidConfigError(f"Logger {name} does not exist!")
            if op["value"] not in LEVELS:
                raise InvalidConfigError(
                    f"Cannot set the log level of {name} to {op['value']} as it is not a "
                    f"supported log level. Valid log levels are {VALID_LEVELS}"
                )
        elif kind == DELETE:
            if not _exists(name):
                raise InvalidConfigError(f"Logger {name} does not exist!")
            if name == ROOT_LOGGER:
                raise InvalidRequestError(
                    f"Removing the log level of the {ROOT_LOGGER} logger is not allowed"
                )
        elif kind in (APPEND, SUBTRACT):
            what = "APPEND" if kind == APPEND else "SUBTRACT"
            raise InvalidRequestError(
                f"{what} operation is not allowed for the BROKER_LOGGER resource"
            )
        else:
            raise InvalidRequestError(
                f"Unknown operation type {kind} is not allowed for the BROKER_LOGGER resource"
            )


def apply(ops: list[dict[str, Any]]) -> None:
    """Apply ``ops``, which :func:`check` accepted."""
    for op in ops:
        name = op["name"]
        if op["config_operation"] == SET:
            _logger(name).setLevel(LEVELS[op["value"]])
            log.warning("Updated the log level of %s to %s", name, op["value"])
        else:
            _logger(name).setLevel(logging.NOTSET)
            log.warning("Unset the log level of %s", name)
