"""FileRegion: a byte range of an open segment file, sent to a socket with sendfile.

The holder keeps ``file`` open for as long as the region may be sent; on Linux an open file
stays readable even after its segment is deleted, so a fetch in flight never sees a hole.
"""

from __future__ import annotations

import os
from typing import BinaryIO, NamedTuple


class FileRegion(NamedTuple):
    file: BinaryIO
    position: int
    length: int

    def read(self) -> bytes:
        """The region's bytes (for tests and for paths that cannot sendfile)."""
        return os.pread(self.file.fileno(), self.length, self.position)
