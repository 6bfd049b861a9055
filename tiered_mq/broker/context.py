"""RequestContext: what a handler gets besides its decoded request.

``header`` is the decoded request header (api_key, api_version, correlation_id, client_id);
``broker`` offers the services: ``config``, ``replica_manager``, ``topic_registry``,
``coordinator``, ``group_coordinator`` (None until the group package exists),
``producer_id_manager``, ``remote_log_manager`` (None until the cold tier is wired), ``metrics``;
``sasl`` is the connection's SASL session (None on a listener without SASL), ``listener`` the
listener it came in on (its advertised address is the one to answer with).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tiered_mq.protocol.header import RequestHeader

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker
    from tiered_mq.broker.listener import Listener
    from tiered_mq.broker.sasl import SaslSession


@dataclass(slots=True)
class RequestContext:
    header: RequestHeader
    broker: Broker
    client_host: str = ""
    sasl: SaslSession | None = None
    listener: Listener | None = None

    @property
    def endpoint(self) -> tuple[str, int]:
        """(host, port) to give this client for this broker: its listener's advertised one."""
        listener = self.listener or self.broker.server.listener
        return listener.endpoint

    @property
    def api_version(self) -> int:
        return self.header.api_version
