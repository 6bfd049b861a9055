"""Answers for the transactional APIs while transactions are not supported.

No transactional producer id is ever issued (InitProducerId refuses transactional ids with
UNSUPPORTED_VERSION), so these requests come only from a misbehaving client; each is answered
with UNSUPPORTED_VERSION in every error slot of its response, never by closing the connection.
"""

from __future__ import annotations

from typing import Final

from tiered_mq.errors import UnsupportedVersionError

UNSUPPORTED: Final = UnsupportedVersionError.errno
