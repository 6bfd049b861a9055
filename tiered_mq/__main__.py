"""``python -m tiered_mq``: the same as the ``tiered-mq`` command."""

from tiered_mq.cli import main

main()
