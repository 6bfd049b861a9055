"""The broker: a Kafka-protocol server over the local log and the cold tier.

broker.py           Broker: wires and runs the services below (start/close order)
config.py           BrokerConfig: broker configs and topic defaults by Kafka name
server.py           asyncio TCP front end: framing, ordering, sendfile
handlers/           one module per Kafka API (``API_KEY`` + ``async handle(ctx, request)``)
context.py          RequestContext handed to every handler
replica_manager.py  the hosted partitions; appends, reads, log maintenance, internal topics
partition.py        one partition: LocalLog + producer state + high watermark + lock
producer_state.py   idempotent-producer state and its snapshots
delayed_fetch.py    purgatory of long-polling fetches, woken by appends
topic_registry.py   topic administration (create/delete/partitions/configs) with checks
topic_names.py      Kafka's topic name rules
producer_ids.py     producer id allocation from durable blocks
recompress.py       topic-level compression.type
metrics.py          Prometheus metrics
group/              group coordinator (consumer groups, ``__consumer_offsets``)
remote_tier.py      wiring of the cold tier's RemoteLogManager
"""
