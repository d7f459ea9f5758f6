# SPDX-License-Identifier: GPL-2.0-or-later
"""Building programs for the bound device, with an in-memory and an on-disk cache.

A program is keyed by the device identity (platform and device names, versions and driver),
the SHA-256 of its source and its build options.  In memory, each process keeps built programs
(and their kernel objects) per context.  On disk, device binaries are stored under
``DASKCL_CACHE_DIR`` (default ``$XDG_CACHE_HOME/daskcl`` or ``~/.cache/daskcl``), keyed by the
same plus the daskcl version; ``DASKCL_NO_CACHE=1`` turns the disk cache off.

Entries are written to a temporary file and renamed into place, so readers never see a partial
file and two processes building the same program at once both succeed (the last rename wins;
both binaries are valid).  Each entry carries a checksum; a corrupt or truncated entry, or one
the driver refuses, is rebuilt from source with a :class:`CacheWarning`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import device as _device
from ._version import __version__
from .errors import BuildError
from .library import ProgramSource

__all__ = [
    "BuiltProgram",
    "CacheWarning",
    "build",
    "cache_dir",
    "clear_memory_cache",
    "default_options",
    "stats",
]

_MAGIC = b"DASKCL-BINARY-1\n"


class CacheWarning(UserWarning):
    """The disk cache could not be used for one program (it was built from source instead)."""


@dataclass
class BuiltProgram:
    """A built program, its source and its kernels (one kernel object per name, with a lock)."""

    program: Any
    source: ProgramSource
    options: tuple[str, ...]
    origin: str  # "source", "disk" or "memory" (how it was obtained the first time)
    _kernels: dict[str, tuple[Any, threading.Lock]] = field(default_factory=dict)

    def kernel(self, name: str) -> tuple[Any, threading.Lock]:
        """The kernel ``name`` and the lock to hold while setting its arguments and enqueuing."""
        k = self._kernels.get(name)
        if k is None:
            import pyopencl as cl

            k = self._kernels.setdefault(name, (cl.Kernel(self.program, name), threading.Lock()))
        return k


#: counters of how programs were obtained in this process (for tests and benchmarks)
stats: dict[str, int] = {"memory": 0, "disk": 0, "source": 0, "rebuilt_corrupt": 0}

_memory: dict[tuple[int, str], BuiltProgram] = {}
_locks: dict[tuple[int, str], threading.Lock] = {}
_locks_guard = threading.Lock()


def cache_dir() -> Path | None:
    """The disk cache directory, or ``None`` when ``DASKCL_NO_CACHE`` is set."""
    if os.environ.get("DASKCL_NO_CACHE", "").strip() not in ("", "0"):
        return None
    env = os.environ.get("DASKCL_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "daskcl"


def default_options() -> tuple[str, ...]:
    """Build options every program gets.

    ``DASKCL_FP_CONTRACT=1`` lets the compiler fuse ``a*b+c`` into ``fma`` (see ``OPENCL.cl``);
    it is off by default, so that expressions round as in R's C code on x86-64.
    """
    if os.environ.get("DASKCL_FP_CONTRACT", "").strip() not in ("", "0"):
        return ("-DDASKCL_FP_CONTRACT",)
    return ()


def clear_memory_cache() -> None:
    """Forget the programs built in this process (the disk cache is kept)."""
    _memory.clear()


@functools.lru_cache(maxsize=1024)  # the same assembled text comes back on every call
def _key(identity: str, text: str, options: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in (identity, text, "\x00".join(options)):
        h.update(part.encode())
        h.update(b"\x00\x01")
    return h.hexdigest()


def build(source: ProgramSource, options: Sequence[str] = ()) -> BuiltProgram:
    """The program for ``source`` on the bound device, from memory, disk, or a fresh build.

    Raises
    ------
    BuildError
        The compiler rejected the program; ``.log`` holds the build log and ``.units`` the
        library files in the program.
    """
    bound = _device.current()
    options = tuple(options) + default_options()
    key = _key(bound.info.identity, source.text, options)
    mkey = (id(bound.context), key)
    hit = _memory.get(mkey)
    if hit is not None:
        stats["memory"] += 1
        return hit
    with _locks_guard:
        lock = _locks.setdefault(mkey, threading.Lock())
    with lock:
        hit = _memory.get(mkey)
        if hit is not None:
            stats["memory"] += 1
            return hit
        built = _load_or_build(bound, source, options, key)
        _memory[mkey] = built
        return built


def _disk_path(key: str, bound: _device.BoundDevice) -> Path | None:
    d = cache_dir()
    if d is None:
        return None
    full = hashlib.sha256(f"{key}\x00{bound.info.identity}\x00{__version__}".encode()).hexdigest()
    return d / full[:2] / f"{full}.bin"


def _load_or_build(
    bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...], key: str
) -> BuiltProgram:
    import pyopencl as cl

    path = _disk_path(key, bound)
    if path is not None and path.exists():
        problem = None
        try:
            blob = path.read_bytes()
            binary = _unpack(blob)
            prg = _device.build_program(cl.Program(bound.context, [bound.device], [binary]), options)
        except Exception as exc:  # unreadable, corrupt, or refused by the driver
            problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            stats["disk"] += 1
            return BuiltProgram(prg, source, options, "disk")
        stats["rebuilt_corrupt"] += 1
        warnings.warn(
            f"daskcl cache entry {path} could not be used ({problem[:200]}); rebuilding it",
            CacheWarning,
            stacklevel=4,
        )
    try:
        prg = _device.build_program(cl.Program(bound.context, source.text), options)
    except cl.Error as exc:
        raise _build_error(exc, source, bound) from None
    stats["source"] += 1
    if path is not None:
        _store(path, prg.get_info(cl.program_info.BINARIES)[0])
    return BuiltProgram(prg, source, options, "source")


def _pack(binary: bytes) -> bytes:
    return _MAGIC + hashlib.sha256(binary).digest() + len(binary).to_bytes(8, "little") + binary


def _unpack(blob: bytes) -> bytes:
    n = len(_MAGIC)
    if blob[:n] != _MAGIC:
        raise ValueError("not a daskcl cache entry (bad header)")
    digest, size, binary = blob[n:n + 32], int.from_bytes(blob[n + 32:n + 40], "little"), blob[n + 40:]
    if size != len(binary):
        raise ValueError(f"truncated: {len(binary)} of {size} bytes")
    if hashlib.sha256(binary).digest() != digest:
        raise ValueError("checksum mismatch")
    return binary


def _store(path: Path, binary: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_pack(binary))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        warnings.warn(
            f"daskcl could not write its program cache at {path} ({exc}); set DASKCL_CACHE_DIR "
            "to a writable directory or DASKCL_NO_CACHE=1",
            CacheWarning,
            stacklevel=5,
        )


_LOG_LINE = re.compile(r"(<source>|input\.cl|<kernel>|\bsource):(\d+):(\d+)")


def _build_error(exc: Exception, source: ProgramSource, bound: _device.BoundDevice) -> BuildError:
    log = str(exc)

    def where(m: re.Match[str]) -> str:
        name, line = source.locate(int(m.group(2)))
        return f"{name}:{line}:{m.group(3)}"

    located = _LOG_LINE.sub(where, log)
    files = ", ".join(source.files)
    return BuildError(
        f"OpenCL build failed on {bound.info.describe()}.\nProgram files: {files}\n"
        f"Build log (locations mapped to library files):\n{located}",
        log=log,
        units=source.files,
    )
