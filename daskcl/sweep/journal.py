# SPDX-License-Identifier: GPL-2.0-or-later
"""A store's journal: each finished chunk's done mark and checksums, as one appended record.

A writer (a process writing chunks of one store) appends one record a chunk, once the chunk's
values are written, to a file of its own under ``_daskcl/done/journal/`` (inside the done array,
where zarr never lists; ``_done/journal/`` in a store of the first format): the chunk's flat index on the grid of chunks, a checksum per output
and a CRC-32 of the record.  One ``write`` of a file kept open costs no file creation, where a
mark and a checksum file a chunk cost two.  A store where appending is unknown (fsspec) gets
one small file a record instead.

The run folds the records into the ``_daskcl/done`` and ``_daskcl/checksum`` arrays at its
end and when it takes up a store, then removes the files it folded (:meth:`Journal.fold`):
between, the arrays and the records together are the marks.  A record that does not check (a
torn last record of a killed writer) is ignored, as is every file that is not a regular file
owned by this user (its records would mark chunks done): the chunk is computed again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import re
import stat
import struct
import threading
import uuid
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DIR", "NAME", "Book", "Journal", "parse", "record"]

_log = logging.getLogger("daskcl.sweep")

#: the journal's directory in the store's done array, and its files' names
DIR = "journal"
NAME = re.compile(r"w-[0-9a-f]{16}(-[0-9]+)?")
_MAGIC = b"dkj1"
#: the most bytes of journal read from one file (2^20 records of 8 outputs)
_MAX_FILE = 1 << 26


@dataclass
class Book:
    """The marks and checksums of a store's chunks: ``done`` (bool, on the grid of chunks) and
    ``sums`` (uint32, the grid and one per output), of the checksum algorithm ``algo``."""

    done: np.ndarray
    sums: np.ndarray
    algo: str


def _record_size(nout: int) -> int:
    return len(_MAGIC) + 8 + 4 * nout + 4


def record(flat: int, sums: list[int]) -> bytes:
    """One chunk's record: its flat index, its checksums, the record's CRC-32."""
    body = _MAGIC + struct.pack(f"<Q{len(sums)}I", flat, *sums)
    return body + struct.pack("<I", zlib.crc32(body))


def parse(data: bytes, nout: int, nchunks: int) -> list[tuple[int, tuple[int, ...]]]:
    """The records of a journal file that check (a torn or foreign one is left out)."""
    size = _record_size(nout)
    out = []
    for at in range(0, len(data) - size + 1, size):
        rec = data[at:at + size]
        body, (crc,) = rec[:-4], struct.unpack("<I", rec[-4:])
        if body[:4] != _MAGIC or zlib.crc32(body) != crc:
            continue
        flat, *sums = struct.unpack(f"<Q{nout}I", body[4:])
        if flat < nchunks:
            out.append((flat, tuple(sums)))
    return out


class Journal:
    """The journal of the store at ``url`` (a local path or an fsspec URL) whose done array is
    at ``done``."""

    def __init__(self, url: str, options: dict[str, Any] | None, done: str) -> None:
        self.url, self.local = url, "://" not in url
        if self.local:
            self.root: str = os.path.join(os.path.abspath(url), *done.split("/"), DIR)
            self.fs: Any = None
        else:
            import fsspec

            self.fs, base = fsspec.core.url_to_fs(url, **(options or {}))
            self.root = posixpath.join(str(base), done, DIR)
        self._name = f"w-{uuid.uuid4().hex[:16]}"
        self._fd: int | None = None
        self._seq = 0
        self._lock = threading.Lock()

    def append(self, flat: int, sums: list[int]) -> None:
        """Record chunk ``flat`` done with checksums ``sums``: one ``write`` to this writer's
        file (made on the first record), one file a record on an fsspec store."""
        data = record(flat, sums)
        with self._lock:
            if not self.local:
                self._seq += 1
                self.fs.pipe_file(posixpath.join(self.root, f"{self._name}-{self._seq}"), data)
                return
            if self._fd is None:
                os.makedirs(self.root, exist_ok=True)
                self._fd = os.open(os.path.join(self.root, self._name),
                                   os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
                                   | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            if os.write(self._fd, data) != len(data):
                raise OSError(f"{self.url}: a short write to its journal")

    def close(self) -> None:
        """Close this writer's file; a later record goes to a new one."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._name = f"w-{uuid.uuid4().hex[:16]}"

    def __del__(self) -> None:
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            os.close(fd)

    def files(self) -> list[str]:
        """The journal's files, by name."""
        try:
            if self.local:
                names = os.listdir(self.root)
            else:
                names = [posixpath.basename(str(p).rstrip("/"))
                         for p in self.fs.ls(self.root, detail=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n for n in names if NAME.fullmatch(n))

    def _read(self, name: str) -> bytes | None:
        """A journal file's bytes; ``None`` (said in the log) where it is not a regular file
        of this user's."""
        if not self.local:
            return bytes(self.fs.cat_file(posixpath.join(self.root, name)))[:_MAX_FILE]
        path = os.path.join(self.root, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            _log.warning("daskcl: %s is not read (%s): its chunks are computed again", path, exc)
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
                _log.warning("daskcl: %s is not a file of this user's: its records are not "
                             "trusted, its chunks are computed again", path)
                return None
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read(_MAX_FILE)
        finally:
            os.close(fd)

    def apply(self, book: Book, nout: int) -> list[str]:
        """Mark in ``book`` every chunk the journal records (a later record of a chunk wins);
        returns the files read."""
        read = []
        flat_done, flat_sums = book.done.reshape(-1), book.sums.reshape(-1, nout)
        for name in self.files():
            data = self._read(name)
            if data is None:
                continue
            read.append(name)
            for flat, sums in parse(data, nout, flat_done.size):
                flat_done[flat] = True
                flat_sums[flat] = sums
        return read

    def remove(self, names: list[str]) -> None:
        """Delete the journal files ``names`` (folded into the arrays), and the directory
        where it is left empty."""
        for n in names:
            if self.local:
                os.unlink(os.path.join(self.root, n))
            else:
                self.fs.rm_file(posixpath.join(self.root, n))
        if self.local:
            with contextlib.suppress(OSError):
                os.rmdir(self.root)
