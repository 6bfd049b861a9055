"""tiered-mq: a Kafka-compatible streaming platform with tiered storage on S3-compatible buckets."""

__version__ = "0.1.0"
