# SPDX-License-Identifier: GPL-2.0-or-later
"""Building programs for the bound device, with an in-memory and an on-disk cache.

A program is keyed by the device identity (platform and device names, versions and driver),
the SHA-256 of its source and its build options.  In memory, each process keeps built programs
(and their kernel objects) per context.  On disk, device binaries are stored under
``DASKCL_CACHE_DIR`` (default ``$XDG_CACHE_HOME/daskcl`` or ``~/.cache/daskcl``), keyed by the
same plus the daskcl version; ``DASKCL_NO_CACHE=1`` turns the disk cache off.

Entries are native code, so the cache trusts only its owner.  The directory is created private
(mode 0700) and used only while it, its subdirectories and its entries belong to the user and
neither their group nor others may write them; otherwise the process warns once
(:class:`CacheWarning`) and builds from source without a disk cache.  ``DASKCL_CACHE_SHARED=group``
opts into a cache shared by a group (one build per cluster): then a directory prepared for it,
setgid and of one of the user's groups, is accepted too, written by members of that group and
never by others (daskcl does not make such a directory).
Entries are opened below the checked directory without following symbolic links, and only
regular files are read (never waiting on a FIFO).

Entries are written to a temporary file and renamed into place, so readers never see a partial
file and two processes building the same program at once both succeed (the last rename wins;
both binaries are valid).  Each entry records its full key (program key, device identity and
daskcl version) under a checksum of the record and the binary; an entry that is corrupt,
truncated, recorded for another program, not a regular file, or refused by the driver is
rebuilt from source and replaced, with one :class:`CacheWarning`.  An OS error on the cache path
warns once and the program is built from source.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import secrets
import stat
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import config
from .._version import __version__
from ..errors import BuildError, CacheWarning, ConfigError
from . import device as _device
from .library import ProgramSource

__all__ = [
    "BUILD_WAIT_S",
    "BuiltProgram",
    "CacheWarning",
    "build",
    "cache_dir",
    "cache_info",
    "clear_disk_cache",
    "clear_memory_cache",
    "default_options",
    "stats",
]

_MAGIC = b"DASKCL-BINARY-2\n"


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
stats: dict[str, int] = {"memory": 0, "disk": 0, "source": 0, "rebuilt_corrupt": 0, "waited": 0}

#: how long a process waits for another's build of the same program before building it too
BUILD_WAIT_S = 900.0
_BUILD_POLL_S = 0.05

_memory: dict[tuple[int, str], BuiltProgram] = {}
_locks: dict[tuple[int, str], threading.Lock] = {}
_locks_guard = threading.Lock()


def cache_dir() -> Path | None:
    """The disk cache directory (config key ``cache.dir``), or ``None`` when ``cache.enabled``
    is false (``DASKCL_NO_CACHE=1``)."""
    if not config.get("cache.enabled"):
        return None
    chosen: Path | None = config.get("cache.dir")
    if chosen is not None:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "daskcl"


def default_options(device_type: str = "CPU") -> tuple[str, ...]:
    """Build options every program gets on a device of ``device_type``.

    ``fp_contract`` (``DASKCL_FP_CONTRACT=1``) lets the compiler fuse ``a*b+c`` into ``fma`` (see ``OPENCL.cl``);
    it is off by default, so that expressions round as in R's C code on x86-64.

    ``noinline`` (``DASKCL_NOINLINE``) keeps the heavy library routines out of line (``OPENCL.cl``): on by
    default for GPUs, where it cuts cold builds 5.8x over every function (the slowest, qnf,
    from 267 s to 22 s on an H100) with the same bits; off for CPUs, where PoCL's kernels run
    slower with calls (pbeta 18%) and builds are cheap (benchmarks/README.md).  ``0`` or ``1``
    (false or true) overrides the choice.
    """
    opts: tuple[str, ...] = ()
    if config.get("fp_contract"):
        opts += ("-DDASKCL_FP_CONTRACT",)
    noinline = config.get("noinline")
    if noinline is True or (noinline == "auto" and device_type == "GPU"):
        opts += ("-DDASKCL_NOINLINE",)
    return opts


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
    options = tuple(options) + default_options(bound.info.type)
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
    """Where the entry of ``key`` lies under :func:`cache_dir` (``None`` without a disk cache)."""
    d = cache_dir()
    if d is None:
        return None
    sub, name = _entry_name(key, bound.info.identity)
    return d / sub / name


def _entry_name(key: str, identity: str) -> tuple[str, str]:
    full = hashlib.sha256(
        f"{key}\x00{identity}\x00{__version__}\x00".encode() + _MAGIC
    ).hexdigest()
    return full[:2], f"{full}.bin"


def _record(key: str, identity: str) -> bytes:
    """What an entry records of its key: it is used only for a program whose record is equal."""
    return json.dumps({"daskcl": __version__, "device": identity, "key": key},
                      sort_keys=True).encode()


def _load_or_build(
    bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...], key: str
) -> BuiltProgram:
    import pyopencl as cl

    problem = None
    with _DiskCache.open() as disk, contextlib.ExitStack() as held:
        entry = disk.entry(key, bound.info.identity) if disk else None
        for attempt in ("before", "after waiting"):
            if entry is None:
                break
            try:
                blob = entry.read()
                if blob is not None:
                    binary = _unpack(blob, entry.record)
                    prg = _device.build_program(
                        cl.Program(bound.context, [bound.device], [binary]), options)
                    stats["disk"] += 1
                    return BuiltProgram(prg, source, options, "disk")
            # unreadable, untrusted, corrupt or another program's, refused by the driver
            except (OSError, _Untrusted, ValueError, cl.Error) as exc:
                problem = f"{type(exc).__name__}: {exc}"
                stats["rebuilt_corrupt"] += 1
                break
            if attempt == "before":
                # Processes that share the cache build each program once: the first takes
                # the entry's lock and builds, the others wait for it and load its binary.
                if not held.enter_context(entry.building()):
                    break
        try:
            prg = _device.build_program(cl.Program(bound.context, source.text), options)
        except cl.Error as exc:
            raise _build_error(exc, source, bound) from None
        stats["source"] += 1
        stored = None
        if entry is not None:
            try:
                entry.write(prg.get_info(cl.program_info.BINARIES)[0])
                stored = True
            except (OSError, _Untrusted) as exc:
                stored = False
                if problem is None:
                    _warn_once(
                        (str(entry.dirname), "write"),
                        f"daskcl could not write its program cache at {entry.dirname} ({exc}); "
                        "set DASKCL_CACHE_DIR to a writable directory or DASKCL_NO_CACHE=1",
                    )
        if problem is not None:
            assert entry is not None
            what = "rebuilt and replaced it" if stored else "rebuilt it (not replaced)"
            warnings.warn(
                f"daskcl cache entry {entry.path} could not be used ({problem[:200]}); {what}",
                CacheWarning,
                stacklevel=4,
            )
    return BuiltProgram(prg, source, options, "source")


class _Untrusted(Exception):
    """A cache directory or entry that someone other than the cache's owners could have written."""


def _shared() -> bool:
    """Whether ``cache.shared`` (``DASKCL_CACHE_SHARED=group``) opts into a cache shared by the
    user's group.  A value not understood warns once and keeps the cache private."""
    try:
        return bool(config.get("cache.shared") == "group")
    except ConfigError as exc:
        _warn_once(("cache.shared", str(exc)),
                   f"{exc}; the program cache is used only if it is private")
        return False


@functools.lru_cache(maxsize=64)
def _in_group(uid: int, gid: int) -> bool:
    """Whether the user ``uid`` belongs to the group ``gid`` (primary or listed member)."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(uid)
        return user.pw_gid == gid or user.pw_name in grp.getgrgid(gid).gr_mem
    except KeyError:
        return False


def _distrust(st: os.stat_result, what: str, shared: bool, gid: int | None) -> str | None:
    """Why the cache directory or entry with status ``st`` is not to be trusted, or ``None``.

    Private (the default): it belongs to this user and neither its group nor others may write it.
    Shared by a group (``shared``): also accepted when its group is ``gid`` (the cache
    directory's group; for the directory itself one of the user's groups, and the directory
    setgid), its owner is the user, root or a member of that group, and others may not write it.
    """
    euid = os.geteuid()
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid == euid and not mode & 0o022:
        return None
    if not shared:
        if st.st_uid != euid:
            return f"{what} belongs to uid {st.st_uid}, not to you (uid {euid})"
        return f"{what} is writable by {'others' if mode & 0o002 else 'its group'} (mode {mode:o})"
    if mode & 0o002:
        return f"{what} is writable by others (mode {mode:o})"
    if gid is None:
        if st.st_gid != os.getegid() and st.st_gid not in os.getgroups():
            return f"{what} belongs to group {st.st_gid}, which is not one of yours"
        if stat.S_ISDIR(st.st_mode) and not mode & stat.S_ISGID:
            return f"{what} is not setgid (mode {mode:o}), as a cache shared by a group must be"
    elif st.st_gid != gid:
        return f"{what} belongs to group {st.st_gid}, not to the cache's group {gid}"
    if st.st_uid not in (euid, 0) and not _in_group(st.st_uid, st.st_gid):
        return f"{what} belongs to uid {st.st_uid}, who is not in its group {st.st_gid}"
    return None


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_refused: set[tuple[str, str]] = set()


def _warn_once(what: tuple[str, str], message: str) -> None:
    """Warn with ``message`` the first time ``what`` happens in this process."""
    with _locks_guard:
        if what in _refused:
            return
        _refused.add(what)
    warnings.warn(message, CacheWarning, stacklevel=5)


class _DiskCache:
    """The open cache directory (a file descriptor), checked to be trusted.

    Every name below it is opened relative to that descriptor without following symbolic links,
    so what was checked is what is read and written.
    """

    def __init__(self, path: Path, fd: int, shared: bool, gid: int):
        self.path, self.fd, self.shared, self.gid = path, fd, shared, gid

    @classmethod
    @contextlib.contextmanager
    def open(cls) -> Iterator[_DiskCache | None]:
        """The cache directory, created private when missing; ``None`` without a usable one.

        A directory that is not trusted (see :func:`_distrust`) or cannot be opened warns once
        per process and is not used.
        """
        d = cache_dir()
        if d is None or (str(d), "open") in _refused:
            yield None
            return
        shared = _shared()
        try:
            fd = cls._open_dir(d, shared)
        except (OSError, _Untrusted) as exc:
            why = str(exc) if isinstance(exc, _Untrusted) else f"{type(exc).__name__}: {exc}"
            _warn_once(
                (str(d), "open"),
                f"daskcl does not use the program cache at {d}: {why}. Programs are built from "
                "source in this process. Point DASKCL_CACHE_DIR at a directory of yours that "
                "others cannot write (or see DASKCL_CACHE_SHARED for a group's cache), or set "
                "DASKCL_NO_CACHE=1",
            )
            yield None
            return
        try:
            yield cls(d, fd, shared, os.fstat(fd).st_gid)
        finally:
            os.close(fd)

    @staticmethod
    def _open_dir(d: Path, shared: bool) -> int:
        try:
            link = os.lstat(d)
        except FileNotFoundError:
            if shared:
                raise _Untrusted(
                    "it does not exist; a cache shared by a group is prepared for the group: "
                    f"mkdir {d} && chgrp GROUP {d} && chmod 2770 {d}") from None
            os.makedirs(d.parent, mode=0o700, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # another process made it meanwhile
                os.mkdir(d, 0o700)
            link = os.lstat(d)
        if stat.S_ISLNK(link.st_mode) and link.st_uid not in (os.geteuid(), 0):
            raise _Untrusted(f"it is a symbolic link of uid {link.st_uid}")
        return _checked_fd(os.open(d, _DIR_FLAGS), "the directory", shared, None)

    def entry(self, key: str, identity: str) -> _Entry:
        sub, name = _entry_name(key, identity)
        return _Entry(self, sub, name, _record(key, identity))


def _checked_fd(fd: int, what: str, shared: bool, gid: int | None) -> int:
    """``fd`` if what it opens is trusted (:func:`_distrust`); else it is closed and
    :class:`_Untrusted` raised."""
    try:
        why = _distrust(os.fstat(fd), what, shared, gid)
    except BaseException:
        os.close(fd)
        raise
    if why is not None:
        os.close(fd)
        raise _Untrusted(why)
    return fd


@dataclass
class _Entry:
    """One program's entry: ``<cache>/<sub>/<name>``, and the record of its key."""

    cache: _DiskCache
    sub: str
    name: str
    record: bytes

    @property
    def dirname(self) -> Path:
        return self.cache.path

    @property
    def path(self) -> Path:
        return self.cache.path / self.sub / self.name

    def _subdir(self, create: bool) -> int | None:
        c = self.cache
        if create:
            try:
                os.mkdir(self.sub, 0o2770 if c.shared else 0o700, dir_fd=c.fd)
                made = True
            except FileExistsError:
                made = False
        try:
            fd = os.open(self.sub, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=c.fd)
        except FileNotFoundError:
            return None
        if create and made and c.shared:
            try:
                os.fchmod(fd, 0o2770)
            except BaseException:
                os.close(fd)
                raise
        return _checked_fd(fd, f"the directory {self.sub}", c.shared, c.gid)

    def read(self) -> bytes | None:
        """The entry's bytes, ``None`` when there is none.

        Raises ``_Untrusted`` for an entry that is not a regular file of the cache's owners, and
        ``OSError`` when it cannot be read; never waits (a FIFO is refused before it is opened).
        """
        sfd = self._subdir(create=False)
        if sfd is None:
            return None
        try:
            try:
                st = os.stat(self.name, dir_fd=sfd, follow_symlinks=False)
            except FileNotFoundError:
                return None
            if not stat.S_ISREG(st.st_mode):
                raise _Untrusted("not a regular file")
            fd = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=sfd)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    raise _Untrusted("not a regular file")
                why = _distrust(st, "the entry", self.cache.shared, self.cache.gid)
                if why is not None:
                    raise _Untrusted(why)
                return f.read()
        finally:
            os.close(sfd)

    @contextlib.contextmanager
    def building(self) -> Iterator[bool]:
        """Hold the entry's build lock (``<name>.lock`` beside it) while the body builds it.

        Yields whether the lock is held.  Waiting for another process's build polls, so a
        builder that dies releases its lock to the next (the kernel drops a dead process's
        locks, also over NFS); a builder still holding it after :data:`BUILD_WAIT_S` is not
        waited for any longer, nor is a lock that cannot be taken (an OS error): the body then
        builds without it.
        """
        import fcntl

        try:
            sfd = self._subdir(create=True)
            assert sfd is not None
            try:
                fd = os.open(f"{self.name}.lock",
                             os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o660 if self.cache.shared else 0o600, dir_fd=sfd)
            finally:
                os.close(sfd)
        except (OSError, _Untrusted):
            yield False
            return
        try:
            deadline = time.monotonic() + BUILD_WAIT_S
            while True:
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        yield False
                        return
                    stats["waited"] += 1
                    time.sleep(_BUILD_POLL_S)
            yield True
        finally:
            os.close(fd)  # releases the lock

    def write(self, binary: bytes) -> None:
        """Write the entry atomically: a new file renamed over whatever was there."""
        sfd = self._subdir(create=True)
        assert sfd is not None
        try:
            tmp = f"{self.name}.{secrets.token_hex(8)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600, dir_fd=sfd)
            try:
                with os.fdopen(fd, "wb") as f:
                    if self.cache.shared:
                        os.fchmod(f.fileno(), 0o640)
                    f.write(_pack(binary, self.record))
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.name, src_dir_fd=sfd, dst_dir_fd=sfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=sfd)
                raise
        finally:
            os.close(sfd)


_ENTRY_FILE = re.compile(r"[0-9a-f]{64}\.bin(\.lock|\.[0-9a-f]{16}\.tmp)?")
_SUBDIR = re.compile(r"[0-9a-f]{2}")


def _own_files() -> Iterator[tuple[Path, str, int]]:
    """The files of the disk cache that daskcl writes (entries, their build locks, unfinished
    writes): ``(subdirectory, name, bytes)``; nothing else under the directory is listed."""
    with _DiskCache.open() as disk:
        if disk is None:
            return
        for sub in sorted(os.listdir(disk.fd)):
            if not _SUBDIR.fullmatch(sub):
                continue
            st = os.stat(sub, dir_fd=disk.fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                continue
            for name in sorted(os.listdir(disk.path / sub)):
                fst = os.stat(disk.path / sub / name, follow_symlinks=False)
                if _ENTRY_FILE.fullmatch(name) and stat.S_ISREG(fst.st_mode):
                    yield disk.path / sub, name, fst.st_size


def cache_info() -> dict[str, Any]:
    """What the disk cache holds: its directory (``None`` without one), the number and bytes of
    its program entries, and the build locks and unfinished writes beside them."""
    d = cache_dir()
    files = list(_own_files())
    entries = [f for f in files if f[1].endswith(".bin")]
    return {
        "directory": None if d is None else str(d),
        "shared": _shared(),
        "entries": len(entries),
        "bytes": sum(f[2] for f in entries),
        "locks": sum(f[1].endswith(".lock") for f in files),
        "unfinished": sum(f[1].endswith(".tmp") for f in files),
    }


def clear_disk_cache() -> int:
    """Delete the disk cache's program entries, build locks and unfinished writes, and the
    subdirectories they leave empty; return the number of files deleted.  Only files of the
    names daskcl writes are touched: anything else in the directory stays."""
    n = 0
    for sub, name, _ in list(_own_files()):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sub / name)
            n += 1
    with _DiskCache.open() as disk:
        if disk is not None:
            for name in os.listdir(disk.fd):
                if _SUBDIR.fullmatch(name):
                    with contextlib.suppress(OSError):   # not empty: something else is there
                        os.rmdir(name, dir_fd=disk.fd)
    return n


def _pack(binary: bytes, record: bytes) -> bytes:
    digest = hashlib.sha256(record + binary).digest()
    return (_MAGIC + len(record).to_bytes(4, "little") + record + digest
            + len(binary).to_bytes(8, "little") + binary)


def _unpack(blob: bytes, record: bytes) -> bytes:
    """The binary of an entry that records ``record``; ``ValueError`` says what is wrong."""
    n = len(_MAGIC)
    if blob[:n] != _MAGIC:
        raise ValueError("not a daskcl cache entry (bad header)")
    r = int.from_bytes(blob[n:n + 4], "little")
    got, rest = blob[n + 4:n + 4 + r], blob[n + 4 + r:]
    digest, size, binary = rest[:32], int.from_bytes(rest[32:40], "little"), rest[40:]
    if len(rest) < 40 or size != len(binary):
        raise ValueError(f"truncated: {len(binary)} of {size} bytes")
    if hashlib.sha256(got + binary).digest() != digest:
        raise ValueError("checksum mismatch")
    if got != record:
        raise ValueError("the entry was written for another program or device (key mismatch)")
    return binary


#: a location in a build log: NVIDIA's <kernel>, PoCL's temporary file in its kernel cache, ...
_LOG_LINE = re.compile(r"(<source>|input\.cl|<kernel>|\bsource|(?:/\S*/)?tempfile_\w+\.cl)"
                       r":(\d+):(\d+)")


def _build_error(exc: Exception, source: ProgramSource, bound: _device.BoundDevice) -> BuildError:
    log = str(exc)

    def where(m: re.Match[str]) -> str:
        name, line = source.locate(int(m.group(2)))
        return f"{name}:{line}:{m.group(3)}"

    located = _LOG_LINE.sub(where, log)
    files = ", ".join(source.files)
    # lines of a kernel's own parts (a user's operation, preamble or kernel: named "<...>"),
    # quoted with their text
    lines = source.text.splitlines()
    quoted: list[str] = []
    for m in _LOG_LINE.finditer(log):
        line = int(m.group(2))
        name, at = source.locate(line)
        q = f"{name}, line {at}: {lines[line - 1].strip()}" if 0 < line <= len(lines) else ""
        if name.startswith("<") and q and q not in quoted:
            quoted.append(q)
    yours = ("\nIn your code:\n  " + "\n  ".join(quoted)) if quoted else ""
    return BuildError(
        f"OpenCL build failed on {bound.info.describe()}.\nProgram files: {files}\n"
        f"Build log (locations mapped to library files):\n{located}{yours}",
        log=log,
        units=source.files,
    )
