"""Cluster coordination: the :class:`Coordinator` seam and its implementations.

``embedded`` (a JSON file, for ``tiered-mq dev``) and ``zookeeper`` (kazoo, Kafka's znode layout;
its parts in the ``zk_*`` modules, the znodes declared in ``znodes``).
"""

from tiered_mq.coordination.base import BrokerInfo, Coordinator, PartitionState, TopicMetadata

__all__ = ["BrokerInfo", "Coordinator", "PartitionState", "TopicMetadata"]
