"""The consumer protocol's subscription, as much of it as the coordinator reads.

A member of a group with protocol type ``consumer`` puts a ConsumerProtocolSubscription in the
metadata of each protocol (assignor) it offers on JoinGroup; big-endian::

    version           int16 (0-3 today)
    topics            [int32 count] of string (int16 length + UTF-8)
    user_data         nullable bytes (int32 length, -1 = null)
    owned_partitions  v1+;  generation_id v2+;  rack_id v3+

Every version starts with version 0's layout, so the topics are read as v0 whatever the
version (Kafka does the same, so that a newer client does not need a newer broker) and the
rest is ignored.

OffsetDelete uses this: while a consumer group has members, the offsets of a topic one of them
subscribes to cannot be deleted (GROUP_SUBSCRIBED_TO_TOPIC). Kafka computes the subscribed
topics when a generation starts, from the chosen protocol's metadata; here they are computed
on demand from every current member (the chosen protocol's metadata, or all of a member's
protocols before one is chosen or when it does not offer it), which also covers a member that
joined during a rebalance. As in Kafka, if one member's subscription does not decode, the
coordinator knows of no subscription at all (:func:`subscribed_topics` returns None).
"""

from __future__ import annotations

import logging
from typing import Final

from tiered_mq.broker.group.group import GroupMetadata
from tiered_mq.broker.schema_codec import SchemaReader

log = logging.getLogger(__name__)

PROTOCOL_TYPE: Final = "consumer"


def subscription_topics(metadata: bytes) -> list[str]:
    """The topics of a ConsumerProtocolSubscription; ValueError when it does not decode."""
    r = SchemaReader(metadata)
    r.i16()  # the version: every version starts with v0's fields
    count = r.i32()
    if count < 0:
        raise ValueError(f"negative topic count {count}")
    return [r.str() for _ in range(count)]


def subscribed_topics(group: GroupMetadata) -> set[str] | None:
    """Topics the members of a ``consumer`` group subscribe to (see the module docstring);
    None when the group is not a consumer group or a subscription does not decode."""
    if group.protocol_type != PROTOCOL_TYPE:
        return None
    topics: set[str] = set()
    for member in group.members.values():
        chosen = [m for name, m in member.protocols if name == group.protocol_name]
        for metadata in chosen or [m for _, m in member.protocols]:
            try:
                topics.update(subscription_topics(metadata))
            except ValueError as exc:  # UnicodeDecodeError included
                log.warning(
                    "group %s: member %s has an undecodable consumer subscription (%s); "
                    "its subscribed topics are unknown",
                    group.group_id,
                    member.member_id,
                    exc,
                )
                return None
    return topics
