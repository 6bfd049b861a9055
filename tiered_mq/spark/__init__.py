"""Spark replay straight from the bucket: the ``tiered-mq`` Python Data Source.

``datasource.py`` (the Spark seam), ``options.py``, ``planner.py`` (driver: manifests -> splits),
``segment_reader.py`` and ``columnar.py`` (executors: .log bytes -> Arrow), ``transactions.py``
(read_committed), ``bucket.py`` (blocking boto3 / file reads). Importing this package does not
import pyspark; :func:`register` does.
"""

from __future__ import annotations

from typing import Any


def register(spark: Any) -> None:
    """Register ``tiered-mq`` on ``spark`` with Python filter pushdown enabled."""
    from tiered_mq.spark.datasource import register as _register

    _register(spark)
