"""The tiered-mq Python SDK: producer, consumer and admin over confluent-kafka.

    from tiered_mq.client import Producer, Consumer, ConsumerConfig

    with Producer(bootstrap_servers="localhost:9092") as p:        # at-least-once
        p.send("orders", b"{...}", key=b"o-1")
    with Consumer(ConsumerConfig(group_id="billing")) as c:
        c.subscribe(["orders"])
        c.process(handle, idle_timeout=5)                          # ack after each handle()

``semantics=`` (``"at-most-once"``, ``"at-least-once"``, ``"exactly-once"``) is the one
setting for delivery guarantees; see ``config.py`` for what each implies.
``RetryingProcessor`` adds retry and dead-letter topics around a handler.

Every type a public method of these classes takes or returns is importable from here
(``TopicPartition`` for ``Admin.list_offsets`` and ``Consumer.assign``, for instance).
"""

from tiered_mq.client.admin import (
    Admin,
    ConfigSynonym,
    ConfigValue,
    GroupDescription,
    GroupListing,
    MemberDescription,
    PartitionDescription,
    PartitionLag,
    ScramCredential,
    TopicDescription,
)
from tiered_mq.client.config import (
    AdminConfig,
    ConsumerConfig,
    DeliverySemantics,
    ProducerConfig,
    default_bootstrap,
)
from tiered_mq.client.consumer import OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED, Consumer
from tiered_mq.client.errors import (
    ClientError,
    DeliveryError,
    StalledError,
    TransactionsUnsupportedError,
)
from tiered_mq.client.producer import Producer
from tiered_mq.client.record import ConsumedRecord
from tiered_mq.client.retry import Outcome, RetryingProcessor, RetryPolicy, RetryStats
from tiered_mq.topic_partition import TopicPartition

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_STORED",
    "Admin",
    "AdminConfig",
    "ClientError",
    "ConfigSynonym",
    "ConfigValue",
    "ConsumedRecord",
    "Consumer",
    "ConsumerConfig",
    "DeliveryError",
    "DeliverySemantics",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "Outcome",
    "PartitionDescription",
    "PartitionLag",
    "Producer",
    "ProducerConfig",
    "RetryPolicy",
    "RetryStats",
    "RetryingProcessor",
    "ScramCredential",
    "StalledError",
    "TopicDescription",
    "TopicPartition",
    "TransactionsUnsupportedError",
    "default_bootstrap",
]
