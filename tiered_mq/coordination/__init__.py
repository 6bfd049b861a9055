"""Cluster coordination: the :class:`Coordinator` seam and its implementations.

``embedded`` (a JSON file, for ``tiered-mq dev``) exists now; a ZooKeeper implementation through
kazoo plugs in behind the same protocol.
"""

from tiered_mq.coordination.base import BrokerInfo, Coordinator, PartitionState, TopicMetadata

__all__ = ["BrokerInfo", "Coordinator", "PartitionState", "TopicMetadata"]
