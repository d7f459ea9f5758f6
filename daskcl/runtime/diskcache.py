# SPDX-License-Identifier: GPL-2.0-or-later
"""The on-disk program cache: its directory, the rules by which it is trusted, and its entries.

Device binaries are stored under ``DASKCL_CACHE_DIR`` (default ``$XDG_CACHE_HOME/daskcl`` or
``~/.cache/daskcl``), keyed by the program's key (device identity, source and build options:
:mod:`daskcl.runtime.program`) plus the daskcl version; ``DASKCL_NO_CACHE=1`` turns the disk
cache off.

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
rebuilt from source and replaced, with one :class:`CacheWarning` (:func:`_cached`).  An OS
error on the cache path warns once and the program is built from source.  What daskcl writes
here is listed by :func:`_own_files`, and only that is deleted
(:func:`daskcl.runtime.drivercache.clear_disk_cache`).
"""

from __future__ import annotations

import contextlib
import errno
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import config
from .._version import __version__
from ..errors import CacheWarning, ConfigError, outside_stacklevel
from . import device as _device

__all__ = ["BUILD_WAIT_S", "cache_dir", "cache_refused", "probe_entry", "probe_load",
           "stats"]

_MAGIC = b"DASKCL-BINARY-2\n"


#: counters of how programs were obtained in this process (for tests and benchmarks):
#: ``source`` counts every program built from source, ``linked`` those of them linked from
#: objects; ``object_*`` count the objects of linked builds by where they came from;
#: ``helper`` counts the programs built by helper processes
#: (:func:`daskcl.runtime.program.build_later`) and loaded here;
#: ``unstored`` (``object_unstored``) those built that could not be written to the disk cache
stats: dict[str, int] = {"memory": 0, "disk": 0, "source": 0, "rebuilt_corrupt": 0, "waited": 0,
                         "linked": 0, "object_memory": 0, "object_disk": 0, "object_source": 0,
                         "helper": 0, "unstored": 0, "object_unstored": 0}

_stats_lock = threading.Lock()


def _count(name: str) -> None:
    """Add one to ``stats[name]`` (objects are built on several threads at once)."""
    with _stats_lock:
        stats[name] += 1


#: how long a process waits for another's build of the same program before building it too
BUILD_WAIT_S = 900.0
_BUILD_POLL_S = 0.05
#: how often an entry's directory is made again where ``cache clear`` removes it meanwhile
_MAKE_TRIES = 5


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


def _disk_path(key: str, bound: _device.BoundDevice) -> Path | None:
    """Where the entry of ``key`` lies under :func:`cache_dir` (``None`` without a disk cache)."""
    d = cache_dir()
    if d is None:
        return None
    sub, name = _entry_name(key, bound.info.identity)
    return d / sub / name


def _entry_name(key: str, identity: str, suffix: str = ".bin") -> tuple[str, str]:
    full = hashlib.sha256(
        f"{key}\x00{identity}\x00{__version__}\x00".encode() + _MAGIC
    ).hexdigest()
    return full[:2], f"{full}{suffix}"


def _record(key: str, identity: str) -> bytes:
    """What an entry records of its key: it is used only for a program whose record is equal."""
    return json.dumps({"daskcl": __version__, "device": identity, "key": key},
                      sort_keys=True).encode()


#: a warning to give in the caller's thread: (what, to warn once per process; or None) and text
_Note = tuple[tuple[str, str] | None, str]


def _cached(
    bound: _device.BoundDevice, disk: _DiskCache | None, key: str,
    load: Callable[[memoryview], Any], make: Callable[[_DiskCache | None], tuple[Any, bytes]],
    kind: str, read: bool = True,
) -> tuple[Any, str, list[_Note]]:
    """What ``key``'s disk entry holds, loaded by ``load``; else what ``make`` builds (which
    is stored in the entry): ``(built, "disk" or "source", warnings to give)``.

    Processes that share the cache build each entry once: the first takes the entry's lock and
    builds, the others wait for it and load what it stored.  An entry that cannot be used (not
    ours, corrupt, another key's, refused by the driver; or not to be ``read``) is rebuilt and
    replaced, with a warning.  ``kind`` prefixes the names of the :data:`stats` counted.
    """
    import pyopencl as cl

    problem = None if read else "ignored a cached object that the OpenCL linker did not take"
    notes: list[_Note] = []
    with contextlib.ExitStack() as held:
        entry = disk.entry(key, bound.info.identity) if disk else None
        for attempt in ("before", "after waiting"):
            if entry is None or not read:
                break
            try:
                blob = entry.read()
                if blob is not None:
                    built = load(_unpack(blob, entry.record))
                    _count(f"{kind}disk")
                    return built, "disk", notes
            # unreadable, untrusted, corrupt or another program's, refused by the driver
            except (OSError, _Untrusted, ValueError, cl.Error) as exc:
                problem = _unusable(exc)
                _count("rebuilt_corrupt")
                break
            if attempt == "before":
                # Processes that share the cache build each program once: the first takes
                # the entry's lock and builds, the others wait for it and load its binary.
                if not held.enter_context(entry.building()):
                    break
        built, binary = make(disk)
        _count(f"{kind}source")
        stored = None
        if entry is not None:
            try:
                stored = entry.write(binary)
                if not stored:      # cleared while it was built: not stored, nothing wrong
                    _count(f"{kind}unstored")
            except (OSError, _Untrusted) as exc:
                stored = False
                _count(f"{kind}unstored")    # daskcl cache warm says it failed, not "built"
                if problem is None:
                    notes.append((
                        (str(entry.dirname), "write"),
                        f"daskcl could not write its program cache at {entry.dirname} ({exc}); "
                        "set DASKCL_CACHE_DIR to a writable directory or DASKCL_NO_CACHE=1",
                    ))
        if problem is not None and entry is not None:
            what = ("built it from source and replaced the entry" if stored
                    else "built it from source (the entry could not be replaced)")
            notes.append((None, f"daskcl {problem[:300]}: {entry.path}; {what}"))
    return built, "source", notes


def _unusable(exc: BaseException) -> str:
    """What daskcl did with a disk entry that raised ``exc`` when read or loaded, in words (the
    start of a :class:`CacheWarning`'s message)."""
    import pyopencl as cl

    if isinstance(exc, _Untrusted):
        return f"ignored a program cache entry that it cannot trust ({exc})"
    if isinstance(exc, ValueError):
        return f"ignored a program cache entry that does not hold this program ({exc})"
    if isinstance(exc, cl.Error):
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"ignored a program cache entry that the OpenCL driver refused ({said})"
    if isinstance(exc, OSError):
        return f"could not read a program cache entry ({exc.strerror or exc})"
    return f"could not use a program cache entry ({exc})"


def _warn(notes: Sequence[_Note]) -> None:
    """Give the warnings of ``notes``, each pointing at the caller's code outside daskcl."""
    for once, message in notes:
        if once is None:
            warnings.warn(message, CacheWarning, stacklevel=outside_stacklevel())
        else:
            _warn_once(once, message)


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
_refused_lock = threading.Lock()


def _warn_once(what: tuple[str, str], message: str,
               category: type[Warning] = CacheWarning) -> None:
    """Warn with ``message`` the first time ``what`` happens in this process."""
    with _refused_lock:
        if what in _refused:
            return
        _refused.add(what)
    warnings.warn(message, category, stacklevel=outside_stacklevel())


class _DiskCache:
    """The open cache directory (a file descriptor), checked to be trusted.

    Every name below it is opened relative to that descriptor without following symbolic links,
    so what was checked is what is read and written.
    """

    def __init__(self, path: Path, fd: int, shared: bool, gid: int):
        self.path, self.fd, self.shared, self.gid = path, fd, shared, gid

    @classmethod
    @contextlib.contextmanager
    def open(cls, create: bool = True) -> Iterator[_DiskCache | None]:
        """The cache directory, created private when missing (``None`` where it is missing
        and ``create`` is false: what only looks, ``cache info`` and ``cache clear``, makes
        nothing); ``None`` without a usable one.

        A directory that is not trusted (see :func:`_distrust`) or cannot be opened warns once
        per process and is not used.
        """
        d = cache_dir()
        if d is None or (str(d), "open") in _refused or not (create or os.path.lexists(d)):
            yield None
            return
        shared = _shared()
        try:
            fd = cls._open_dir(d, shared)
        except (OSError, _Untrusted) as exc:
            why = _refusal(exc)
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

    def entry(self, key: str, identity: str, suffix: str = ".bin") -> _Entry:
        """The entry of ``key`` on the device ``identity``: a program's (``.bin``, what ``cache
        info`` counts), or the device probe's (``.probe``, :func:`daskcl.runtime.device.probe_fp64`)."""
        sub, name = _entry_name(key, identity, suffix)
        return _Entry(self, sub, name, _record(key, identity))


def cache_refused(create: bool = False) -> str | None:
    """Why the disk cache directory is not used, in the words of the :class:`CacheWarning`
    that :class:`_DiskCache` gives (another user's, writable by others, not a directory, ...);
    ``None`` where it is used, where the disk cache is off, or where it is missing and
    ``create`` is false (``daskcl cache info`` and ``clear`` make nothing; ``warm`` makes it,
    as a build would).  Warns of nothing: the command line says it in its own line."""
    d = cache_dir()
    if d is None or not (create or os.path.lexists(d)):
        return None
    try:
        os.close(_DiskCache._open_dir(d, _shared()))
    except (OSError, _Untrusted) as exc:
        return _refusal(exc)
    return None


def _refusal(exc: BaseException) -> str:
    """Why the cache directory that raised ``exc`` as it was opened is not used, in words."""
    return str(exc) if isinstance(exc, _Untrusted) else f"{type(exc).__name__}: {exc}"


def _checked_fd(fd: int, what: str, shared: bool, gid: int | None) -> int:
    """``fd`` if what it opens is trusted (:func:`_distrust`); else it is closed and
    :class:`_Untrusted` raised."""
    return _kept_fd(fd, lambda f: _distrust(os.fstat(f), what, shared, gid))


def _kept_fd(fd: int, problem: Callable[[int], str | None]) -> int:
    """``fd`` where ``problem(fd)`` finds none; else (or where it raises) ``fd`` is closed, and
    :class:`_Untrusted` raised with the problem."""
    try:
        why = problem(fd)
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
        """The entry's directory, open (made first where ``create``; one that ``cache clear``
        removes between making and opening it is made again); ``None`` where there is none."""
        c = self.cache
        for attempt in range(_MAKE_TRIES if create else 1):
            if create:
                try:
                    os.mkdir(self.sub, 0o2770 if c.shared else 0o700, dir_fd=c.fd)
                    made = True
                except FileExistsError:
                    made = False
            try:
                fd = os.open(self.sub, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=c.fd)
                break
            except FileNotFoundError:
                if not create or attempt == _MAKE_TRIES - 1:
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
            try:
                fd = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                             | os.O_CLOEXEC, dir_fd=sfd)
            except FileNotFoundError:   # deleted since (cache clear): none
                return None
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
            if sfd is None:
                raise FileNotFoundError(self.sub)
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
                    _count("waited")
                    time.sleep(_BUILD_POLL_S)
            yield True
        finally:
            os.close(fd)  # releases the lock

    def write(self, binary: bytes) -> bool:
        """Write the entry atomically: a new file renamed over whatever was there.  Where
        ``cache clear`` deletes the directory or the new file meanwhile, it is written again;
        returns ``False`` where every try was deleted so (the program is not stored: the
        cache was cleared while it was built)."""
        for _ in range(_MAKE_TRIES):
            try:
                self._write(binary)
                return True
            except FileNotFoundError:
                continue
        return False

    def _write(self, binary: bytes) -> None:
        sfd = self._subdir(create=True)
        if sfd is None:
            raise FileNotFoundError(errno.ENOENT, "removed while it was made", str(self.sub))
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


_ENTRY_FILE = re.compile(r"[0-9a-f]{64}\.(?:bin|probe)(\.lock|\.[0-9a-f]{16}\.tmp)?")
_SUBDIR = re.compile(r"[0-9a-f]{2}")


def _own_files() -> Iterator[tuple[Path, str, int]]:
    """The files of the disk cache that daskcl writes (entries, their build locks, unfinished
    writes): ``(subdirectory, name, bytes)``; nothing else under the directory is listed."""
    with _DiskCache.open(create=False) as disk:
        if disk is None:
            return
        # a file or directory deleted while this looks (another cache clear, a build's
        # write renamed over its temporary file) is passed over as gone
        for sub in sorted(os.listdir(disk.fd)):
            if not _SUBDIR.fullmatch(sub):
                continue
            try:
                st = os.stat(sub, dir_fd=disk.fd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    continue
                names = sorted(os.listdir(disk.path / sub))
            except FileNotFoundError:
                continue
            for name in names:
                try:
                    fst = os.stat(disk.path / sub / name, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if _ENTRY_FILE.fullmatch(name) and stat.S_ISREG(fst.st_mode):
                    yield disk.path / sub, name, fst.st_size


def _pack(binary: bytes, record: bytes) -> bytes:
    digest = hashlib.sha256(record + binary).digest()
    return (_MAGIC + len(record).to_bytes(4, "little") + record + digest
            + len(binary).to_bytes(8, "little") + binary)


def _unpack(blob: bytes, record: bytes) -> memoryview:
    """The binary of an entry that records ``record`` (a view of ``blob``: a binary of
    megabytes is not copied); ``ValueError`` says what is wrong."""
    n = len(_MAGIC)
    if blob[:n] != _MAGIC:
        raise ValueError("not a daskcl cache entry (bad header)")
    view = memoryview(blob)
    r = int.from_bytes(view[n:n + 4], "little")
    got, rest = view[n + 4:n + 4 + r], view[n + 4 + r:]
    digest, size, binary = rest[:32], int.from_bytes(rest[32:40], "little"), rest[40:]
    if len(rest) < 40:      # cut inside its header: no size to compare with
        raise ValueError(f"truncated: {len(blob)} bytes, shorter than its header")
    if size != len(binary):
        raise ValueError(f"truncated: {len(binary)} of {size} bytes")
    h = hashlib.sha256(got)
    h.update(binary)
    if h.digest() != digest:
        raise ValueError("checksum mismatch")
    if got != record:
        raise ValueError("the entry was written for another program or device (key mismatch)")
    return binary


# -- the device probe's binary (daskcl.runtime.device) ---------------------------------------

def probe_entry(device: Any, held: contextlib.ExitStack, key: str) -> Any:
    """The disk cache entry of the probe's binary on ``device``, its directory open while
    ``held`` is, where :func:`~daskcl.runtime.device.bind` probes (listing devices writes
    nothing); ``None`` without a disk cache that is used and trusted (nothing is warned: a
    program's build says why, where it comes to one)."""
    try:
        if cache_dir() is None or cache_refused(create=True) is not None:
            return None
        p = device.platform
        identity = " | ".join(str(v).strip() for v in (
            p.name, p.vendor, p.version, device.name, device.vendor, device.version,
            device.driver_version))
        disk = held.enter_context(_DiskCache.open())
        return None if disk is None else disk.entry(key, identity, ".probe")
    except Exception:       # any trouble with the cache: the probe is built from source
        return None


def probe_load(entry: Any, cl: Any, ctx: Any, device: Any) -> Any:
    """The probe's program from its cached binary, built; ``None`` where there is none or it
    cannot be used."""
    try:
        blob = entry.read()
        if blob is None:
            return None
        binary = _unpack(blob, entry.record)
        return _device.build_program(cl.Program(ctx, [device], [binary]))
    except Exception:       # unreadable, untrusted, corrupt, refused by the driver
        return None


_device.probe_store = (probe_entry, probe_load)
