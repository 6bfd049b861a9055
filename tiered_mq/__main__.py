"""``python -m tiered_mq``: the same as the ``tiered-mq`` command; a Ctrl-C while the command
line interface is imported exits 130 without a traceback."""

import sys

try:
    from tiered_mq.cli import main
except KeyboardInterrupt:
    sys.exit(130)

main()
