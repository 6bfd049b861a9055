"""RequestContext: what a handler gets besides its decoded request.

``header`` is the decoded request header (api_key, api_version, correlation_id, client_id);
``broker`` offers the services: ``config``, ``replica_manager``, ``topic_registry``,
``coordinator``, ``group_coordinator`` (None until the group package exists),
``producer_id_manager``, ``remote_log_manager`` (None until the cold tier is wired), ``metrics``;
``sasl`` is the connection's SASL session (None on a listener without SASL), ``listener`` the
listener it came in on (its advertised address is the one to answer with), ``tls_principal``
the ``User:<subject DN>`` of a TLS client certificate. ``client_closed`` is done once the client
has shut its side of the connection (a FIN on plain TCP; None outside a connection): a handler
that would wait (a Fetch long poll) answers at once then, as Kafka closes such a connection at
once and keeps nothing of it for the wait.

``principal`` is who sent the request, as ACLs name it; ``authorize(operation, resource_type,
name)`` asks the broker's authorizer (always true when none is configured).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tiered_mq.broker.acl.authorizer import ANONYMOUS
from tiered_mq.broker.acl.binding import AclOperation, ResourceType
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
    tls_principal: str | None = None
    client_closed: asyncio.Future[None] | None = None

    @property
    def principal(self) -> str:
        if self.sasl is not None and self.sasl.principal is not None:
            return self.sasl.principal
        return self.tls_principal or ANONYMOUS

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize(self.principal, self.host, operation, resource_type, name)

    def authorize_any(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Whether the principal may do ``operation`` on some resource of the type."""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize_any(self.principal, self.host, operation, resource_type)

    @property
    def host(self) -> str:
        """The client's address without its port."""
        return self.client_host.rsplit(":", 1)[0] if self.client_host else ""

    @property
    def endpoint(self) -> tuple[str, int]:
        """(host, port) to give this client for this broker: its listener's advertised one."""
        listener = self.listener or self.broker.server.listener
        return listener.endpoint

    @property
    def api_version(self) -> int:
        return self.header.api_version
