"""Blocking object stores without a server: ``memory://`` and ``file://``.

``MemoryStore``: a dict of key -> (bytes, etag) behind a lock; ``MemoryStore.named(name)`` returns
the one store of that name in this process, so every ``memory://name`` URL sees the same objects.

``FileStore``: one file per key under a root directory (``root/a/b/c`` for key ``a/b/c``).
A put writes ``.tmp-<uuid>`` (``uuid4().hex``) beside the target, fsyncs it and renames it over
the target, so a reader sees the old object or the new one, never a torn one; a failed put
(full disk) removes its temporary file. A put holds an exclusive ``flock`` on its temporary file
from its creation to the rename, so the lock tells a running put (of any process sharing the
directory) from the leftover of a crashed one: the kernel drops a dead process's locks.
A crash mid-put leaves its temporary file, which ``list`` ignores (like every name starting with
a dot) and which the next opening of the store removes (``remove_stale_temp_files``, run by
the constructor unless ``clean_temp=False``, as the read-only stores of tools and Spark
executors open it): every file of the temporary pattern, anywhere under the root, that no put
holds locked and that is older than ``STALE_TEMP_AGE_S`` (60 s: a put locks its file right
after creating it, so only a file younger than that can be a put not yet locked). Any other
file is never touched. A younger leftover waits for the next opening.
The ETag is the MD5 of the content (what S3 returns for single-part puts).
Conditional puts take a process-wide lock and an ``fcntl`` lock on ``root/.lock``, so two
processes sharing the directory cannot both win.
Keys may not contain empty, ``.`` or ``..`` segments.

Fault injection for tests: ``fail_next(op, exc)`` makes the next call of ``op`` raise ``exc``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import ClassVar, Final

from tiered_mq.cold.object_store import ObjectInfo
from tiered_mq.errors import ObjectNotFoundError, ObjectStoreError, PreconditionFailedError


def content_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"'


class _FaultInjection:
    def __init__(self) -> None:
        self._faults: dict[str, list[BaseException]] = {}
        self._fault_lock = threading.Lock()

    def fail_next(self, op: str, exc: BaseException, times: int = 1) -> None:
        """Make the next ``times`` calls of method ``op`` raise ``exc`` (tests)."""
        with self._fault_lock:
            self._faults.setdefault(op, []).extend([exc] * times)

    def _maybe_fail(self, op: str) -> None:
        with self._fault_lock:
            pending = self._faults.get(op)
            exc = pending.pop(0) if pending else None
        if exc is not None:
            raise exc


class MemoryStore(_FaultInjection):
    _registry: ClassVar[dict[str, MemoryStore]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        super().__init__()
        self._objects: dict[str, tuple[bytes, str]] = {}
        self._lock = threading.Lock()

    @classmethod
    def named(cls, name: str) -> MemoryStore:
        with cls._registry_lock:
            store = cls._registry.get(name)
            if store is None:
                store = cls._registry[name] = cls()
            return store

    def put(self, key: str, data: bytes) -> str:
        self._maybe_fail("put")
        etag = content_etag(data)
        with self._lock:
            self._objects[key] = (bytes(data), etag)
        return etag

    def put_if_match(self, key: str, data: bytes, etag: str) -> str:
        self._maybe_fail("put_if_match")
        with self._lock:
            current = self._objects.get(key)
            if current is None:
                raise ObjectNotFoundError(key, "conditional put on a missing object")
            if current[1] != etag:
                raise PreconditionFailedError(key, f"ETag is {current[1]}, expected {etag}")
            new = content_etag(data)
            self._objects[key] = (bytes(data), new)
            return new

    def put_if_absent(self, key: str, data: bytes) -> str:
        self._maybe_fail("put_if_absent")
        with self._lock:
            if key in self._objects:
                raise PreconditionFailedError(key, "object already exists")
            new = content_etag(data)
            self._objects[key] = (bytes(data), new)
            return new

    def get(self, key: str) -> tuple[bytes, str]:
        self._maybe_fail("get")
        with self._lock:
            found = self._objects.get(key)
        if found is None:
            raise ObjectNotFoundError(key, "no such object")
        return found

    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        self._maybe_fail("get_range")
        data, _ = self.get(key)
        return data[start : end_inclusive + 1]

    def head(self, key: str) -> ObjectInfo | None:
        self._maybe_fail("head")
        with self._lock:
            found = self._objects.get(key)
        return None if found is None else ObjectInfo(key, len(found[0]), found[1])

    def list(self, prefix: str) -> list[ObjectInfo]:
        self._maybe_fail("list")
        with self._lock:
            items = [
                ObjectInfo(k, len(v[0]), v[1])
                for k, v in self._objects.items()
                if k.startswith(prefix)
            ]
        return sorted(items)

    def delete(self, key: str) -> None:
        self._maybe_fail("delete")
        with self._lock:
            self._objects.pop(key, None)

    def delete_many(self, keys: Iterable[str]) -> None:
        self._maybe_fail("delete_many")
        with self._lock:
            for key in keys:
                self._objects.pop(key, None)

    def close(self) -> None:
        pass

    def corrupt(self, key: str, position: int) -> None:
        """Flip one byte of an object in place (tests of the read path's CRC check)."""
        with self._lock:
            data, etag = self._objects[key]
            buf = bytearray(data)
            buf[position] ^= 0xFF
            self._objects[key] = (bytes(buf), etag)


#: a put's temporary file: ``.tmp-`` and a ``uuid4().hex``
TEMP_NAME: Final = re.compile(r"\.tmp-[0-9a-f]{32}")
#: the age (mtime) below which a temporary file is kept even when no put holds it locked
STALE_TEMP_AGE_S: Final = 60.0


class FileStore(_FaultInjection):
    _process_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        clean_temp: bool = True,
        stale_temp_age_s: float = STALE_TEMP_AGE_S,
    ) -> None:
        super().__init__()
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        if clean_temp:
            self.remove_stale_temp_files(stale_temp_age_s)

    def remove_stale_temp_files(self, min_age_s: float = STALE_TEMP_AGE_S) -> list[Path]:
        """Remove the temporary files crashed puts left (module docstring): those of the
        temporary pattern that no put holds locked and older than ``min_age_s``; returns them.
        A file that cannot be read or removed is left and logged nowhere: the next opening
        tries again."""
        removed: list[Path] = []
        now = time.time()
        for dirpath, _, filenames in os.walk(self.root):
            for name in filenames:
                if TEMP_NAME.fullmatch(name):
                    path = Path(dirpath) / name
                    with contextlib.suppress(OSError):
                        if _remove_if_stale(path, now - min_age_s):
                            removed.append(path)
        return removed

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or any(p in ("", ".", "..") for p in parts):
            raise ObjectStoreError(key, "invalid key for a file store")
        return self.root.joinpath(*parts)

    @contextlib.contextmanager
    def _conditional(self) -> Iterator[None]:
        with self._process_lock, open(self.root / ".lock", "a+b") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)

    def _write(self, key: str, data: bytes) -> str:
        path = self._path(key)
        tmp = path.with_name(f".tmp-{uuid.uuid4().hex}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # "a put is running" until closed
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                tmp.replace(path)
        except OSError as e:
            tmp.unlink(missing_ok=True)  # a failed put (full disk) leaves nothing behind
            raise ObjectStoreError(key, f"write failed: {e}") from e
        return content_etag(data)

    def _read(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as e:
            raise ObjectNotFoundError(key, "no such object") from e
        except OSError as e:
            raise ObjectStoreError(key, f"read failed: {e}") from e

    def put(self, key: str, data: bytes) -> str:
        self._maybe_fail("put")
        return self._write(key, data)

    def put_if_match(self, key: str, data: bytes, etag: str) -> str:
        self._maybe_fail("put_if_match")
        with self._conditional():
            current = content_etag(self._read(key))
            if current != etag:
                raise PreconditionFailedError(key, f"ETag is {current}, expected {etag}")
            return self._write(key, data)

    def put_if_absent(self, key: str, data: bytes) -> str:
        self._maybe_fail("put_if_absent")
        with self._conditional():
            if self._path(key).is_file():
                raise PreconditionFailedError(key, "object already exists")
            return self._write(key, data)

    def get(self, key: str) -> tuple[bytes, str]:
        self._maybe_fail("get")
        data = self._read(key)
        return data, content_etag(data)

    def get_range(self, key: str, start: int, end_inclusive: int) -> bytes:
        self._maybe_fail("get_range")
        try:
            with open(self._path(key), "rb") as f:
                return os.pread(f.fileno(), max(0, end_inclusive + 1 - start), start)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as e:
            raise ObjectNotFoundError(key, "no such object") from e
        except OSError as e:
            raise ObjectStoreError(key, f"read failed: {e}") from e

    def head(self, key: str) -> ObjectInfo | None:
        self._maybe_fail("head")
        try:
            data = self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        return ObjectInfo(key, len(data), content_etag(data))

    def list(self, prefix: str) -> list[ObjectInfo]:
        self._maybe_fail("list")
        directory = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self.root.joinpath(*directory.split("/")) if directory else self.root
        out: list[ObjectInfo] = []
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            for name in filenames:
                if name.startswith("."):
                    continue
                key = name if rel_dir == "." else f"{rel_dir}/{name}"
                if key.startswith(prefix):
                    size = (Path(dirpath) / name).stat().st_size
                    # The ETag needs the content; listing callers use only key and size.
                    out.append(ObjectInfo(key, size, ""))
        return sorted(out)

    def delete(self, key: str) -> None:
        self._maybe_fail("delete")
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self._path(key).unlink()

    def delete_many(self, keys: Iterable[str]) -> None:
        self._maybe_fail("delete_many")
        for key in keys:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                self._path(key).unlink()

    def close(self) -> None:
        pass


def _remove_if_stale(path: Path, older_than: float) -> bool:
    """Unlink ``path`` if its mtime is before ``older_than`` and no put holds it locked."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if os.fstat(fd).st_mtime >= older_than:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a put (of this or another process) is writing it
        path.unlink()
        return True
    finally:
        os.close(fd)
