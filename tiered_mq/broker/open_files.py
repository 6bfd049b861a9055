"""The open files limit of the broker process, raised to its hard limit at start.

A broker holds files open for every partition it hosts: the active segment's ``.log`` always,
its ``.index`` and ``.timeindex`` once written, and the ``.log`` of every older segment; plus
one descriptor per client connection. A shell's usual soft limit (1024) is reached at about
a thousand partitions, and then creating a partition fails with KAFKA_STORAGE_ERROR (EMFILE)
and the next start stops at the first log it cannot open. Kafka's JVM raises the soft limit to
the hard one at start (HotSpot's ``-XX:+MaxFDLimit``, on by default), so a Kafka broker only
meets the hard limit; :func:`raise_open_files_limit` does the same. The hard limit is the
operator's (``ulimit -Hn``, systemd's ``LimitNOFILE``, docker's ``--ulimit nofile``).
"""

from __future__ import annotations

import logging
import resource
from pathlib import Path

log = logging.getLogger(__name__)

NR_OPEN = Path("/proc/sys/fs/nr_open")  # Linux's ceiling for an unlimited hard limit


def raise_open_files_limit() -> int:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (for an unlimited hard limit, to
    Linux's ``fs.nr_open``); returns the soft limit in force. A refusal leaves the limit as it
    was, with a warning: the broker runs, and may meet EMFILE with many partitions."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return soft
    target = hard
    if hard == resource.RLIM_INFINITY:
        try:
            target = int(NR_OPEN.read_text())
        except (OSError, ValueError):
            return soft
    if soft >= target:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (OSError, ValueError) as exc:
        log.warning("open files limit stays %d (raising it to %d failed: %s)", soft, target, exc)
        return soft
    log.info("open files limit raised from %d to %d", soft, target)
    return target
