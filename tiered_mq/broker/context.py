"""RequestContext: what a handler gets besides its decoded request.

``header`` is the decoded request header (api_key, api_version, correlation_id, client_id);
``broker`` offers the services: ``config``, ``replica_manager``, ``topic_registry``,
``coordinator``, ``group_coordinator`` (None until the group package exists),
``producer_id_manager``, ``remote_log_manager`` (None until the cold tier is wired), ``metrics``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tiered_mq.protocol.header import RequestHeader

if TYPE_CHECKING:
    from tiered_mq.broker.broker import Broker


@dataclass(slots=True)
class RequestContext:
    header: RequestHeader
    broker: Broker
    client_host: str = ""

    @property
    def api_version(self) -> int:
        return self.header.api_version
