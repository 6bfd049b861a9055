"""Record batch v2: the unit that travels producer -> log -> consumer -> bucket -> Spark.

Pure Python (no asyncio), importable by Spark executors.
"""
