"""stdout whose reader went away (``tiered-mq ... | head``, ``| grep -q``): how a command
notices it without writing, and how it ends quietly once it has.

Python's documentation on SIGPIPE advises pointing stdout at /dev/null once EPIPE was seen:
the interpreter flushes stdout at exit, and a second EPIPE there prints "Exception ignored
... BrokenPipeError" and turns the exit status into 120.
"""

from __future__ import annotations

import io
import os
import select
import sys
from typing import IO, Any


def discard_stdout() -> None:
    """Points stdout at /dev/null once its reader has gone, so that nothing written later
    (Python flushes stdout at exit) fails again with EPIPE."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return  # not a file (a test's captured output): nothing will flush into a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def reader_gone(stream: IO[Any]) -> bool:
    """Whether the reading end of ``stream`` (stdout) has gone, without writing to it: a pipe
    whose reader exited polls POLLERR, a socket whose peer closed POLLHUP. A file, a terminal
    or a stream without a descriptor never reports it. Lets an idle run end as ``tail -f``
    does once ``| head`` has what it wanted, instead of waiting for a record to write."""
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return False
    poller = select.poll()
    poller.register(fd, 0)  # POLLERR and POLLHUP are reported whatever is asked
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
