# SPDX-License-Identifier: GPL-2.0-or-later
"""NVIDIA's driver cache of compiled code in the program cache (:func:`share_driver_cache`), and
what looks at or empties the whole cache directory (:func:`cache_info`, :func:`clear_disk_cache`),
which holds both daskcl's entries (:mod:`daskcl.runtime.diskcache`) and the driver's code.

Nothing in the cache directory is deleted that daskcl did not write there: ``daskcl cache clear``
(:func:`clear_disk_cache`) deletes files of the names of its entries, build locks and unfinished
writes, and the NVIDIA driver's compiled code in the directory that daskcl makes for it
(:data:`DRIVER_CACHE`, :func:`share_driver_cache`), which it uses and empties only while that
holds the marker file daskcl wrote into it when making it.  Anything else stays, so the cache
directory may be one that other programs use too (``~/.cache``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import device as _device
from .diskcache import (
    _DIR_FLAGS,
    _SUBDIR,
    _checked_fd,
    _DiskCache,
    _distrust,
    _kept_fd,
    _own_files,
    _shared,
    _Untrusted,
    _warn_once,
    cache_dir,
)

_logger = logging.getLogger(__name__)

__all__ = ["DRIVER_CACHE", "cache_info", "clear_disk_cache", "share_driver_cache"]

#: the directory of the program cache that daskcl makes for the NVIDIA driver's own cache of
#: compiled code (``CUDA_CACHE_PATH``: see :func:`share_driver_cache`).  daskcl uses, counts and
#: empties a directory of this name only while it carries daskcl's marker (``_DRIVER_MARKER``).
#: Earlier, daskcl used ``<cache>/nvidia``, without a marker: it leaves that alone now, as it
#: cannot tell it from another program's (NVIDIA's OpenGL keeps ``~/.cache/nvidia``)
DRIVER_CACHE = "daskcl-nvidia"
#: the file daskcl writes into :data:`DRIVER_CACHE` as it makes it, before the directory takes
#: its name: it vouches that the directory and what is in it are daskcl's (the driver writes
#: only its ``index`` and directories beside it, and leaves other files alone)
_DRIVER_MARKER = ".daskcl-driver-cache"
_MARKER_MAGIC = b"daskcl-driver-cache 1\n"
_MARKER_TEXT = _MARKER_MAGIC + (
    b"daskcl made this directory for the NVIDIA driver's compiled code (CUDA_CACHE_PATH).\n"
    b"`daskcl cache clear` deletes everything in it but this file: keep nothing else here.\n")
#: a driver cache directory being made (:func:`_make_driver_dir`), or left by a process that
#: died making it
_DRIVER_TMP = re.compile(re.escape(DRIVER_CACHE) + r"\.[0-9a-f]{16}\.tmp")
#: the name of the driver's cache directory in daskcl before it made its own, with a marker
_OLD_DRIVER_CACHE = "nvidia"


def share_driver_cache() -> Path | None:
    """Point the NVIDIA driver's own cache of compiled code into the program cache.

    On NVIDIA a program's binary, the one daskcl caches, is PTX; loading it compiles the PTX
    for the GPU (most of a cold build: benchmarks/results/build-split-gpu-h200.json), and the
    driver keeps the result in its compute cache (``~/.nv/ComputeCache``), which a fresh node
    or container does not have.  With ``CUDA_CACHE_PATH`` at ``<cache>/daskcl-nvidia``
    (:data:`DRIVER_CACHE`) that compiled code lives beside daskcl's entries: processes and nodes
    that share the program cache share it too, so a program is compiled once per cluster, and
    ``daskcl cache warm`` prepares both.

    daskcl makes that directory itself, with a marker file of its own in it
    (``.daskcl-driver-cache``) written before the directory takes its name
    (:func:`_make_driver_dir`), and uses it only while the marker is there and passes the
    cache's trust rules (the user's, in a private cache): a directory of that name that daskcl
    did not make is never taken over (one :class:`~daskcl.errors.CacheWarning`, and the driver
    keeps its own cache), so that :func:`clear_disk_cache`, which empties the directory,
    deletes only what the driver wrote there at daskcl's direction.

    Called before this process's first OpenCL call (the driver reads its environment when it
    initialises); nothing is changed where the disk cache is off or not trusted, where the
    user set ``CUDA_CACHE_PATH`` or ``CUDA_CACHE_DISABLE``, or where the directory is not
    daskcl's.  Returns the directory it set, or ``None``.
    """
    if "CUDA_CACHE_PATH" in os.environ or os.environ.get("CUDA_CACHE_DISABLE", "0") != "0":
        return None
    if not _nvidia_opencl():
        return None
    with _DiskCache.open() as disk:
        if disk is None:
            return None
        path = disk.path / DRIVER_CACHE
        try:
            _make_driver_dir(disk)
            fd = _open_driver_dir(disk, DRIVER_CACHE)
        except _Untrusted as exc:
            _warn_once((str(path), "driver"),
                       f"daskcl does not keep the NVIDIA driver's compiled code in {path}: {exc}; "
                       "it uses only a directory it made itself (marked by its "
                       f"{_DRIVER_MARKER} file), so the driver keeps its own cache. Move that "
                       "directory away to let daskcl make its own")
            return None
        except OSError as exc:
            _logger.debug("daskcl: no driver cache in %s (%s)", path, exc)
            return None
        if fd is None:                          # gone meanwhile (a clear elsewhere)
            return None
        os.close(fd)
    os.environ["CUDA_CACHE_PATH"] = str(path)
    os.environ.setdefault("CUDA_CACHE_MAXSIZE", str(4 << 30))   # the driver's largest
    return path


def _nvidia_opencl() -> bool:
    """Whether NVIDIA's OpenCL driver may be on this machine, judged without loading any
    driver (this runs before the first OpenCL call): on Linux, the NVIDIA kernel driver
    (``/proc/driver/nvidia``) or an ICD registration that names NVIDIA's library
    (``OCL_ICD_FILENAMES``, the ``.icd`` files of ``OCL_ICD_VENDORS`` or
    ``/etc/OpenCL/vendors``).  Elsewhere it cannot be told so cheaply: true.  Where it is
    false, :func:`share_driver_cache` makes no ``daskcl-nvidia`` directory."""
    if not sys.platform.startswith("linux") or os.path.exists("/proc/driver/nvidia"):
        return True
    if "nvidia" in os.environ.get("OCL_ICD_FILENAMES", "").lower():
        return True
    vendors = os.environ.get("OCL_ICD_VENDORS") or "/etc/OpenCL/vendors"
    try:
        files = ([os.path.join(vendors, f) for f in os.listdir(vendors) if f.endswith(".icd")]
                 if os.path.isdir(vendors) else [vendors])
    except OSError:
        return False
    for f in files:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(f, encoding="utf-8") as fh:
                if "nvidia" in fh.read(4096).lower():
                    return True
    return False


_device.before_drivers.append(share_driver_cache)


def _make_driver_dir(disk: _DiskCache) -> None:
    """Make daskcl's :data:`DRIVER_CACHE` in ``disk``, unless something has that name.

    The directory is made under a name of its own (``daskcl-nvidia.<random>.tmp``), the marker
    written into it, and then renamed to :data:`DRIVER_CACHE`, so that the name never stands
    for a directory of daskcl's without its marker (no process sees it half made).  Where
    another process's came first, this one's is removed (its marker and itself: nothing else).
    """
    with contextlib.suppress(FileNotFoundError):
        os.stat(DRIVER_CACHE, dir_fd=disk.fd, follow_symlinks=False)
        return
    mode = 0o2770 if disk.shared else 0o700
    tmp = f"{DRIVER_CACHE}.{secrets.token_hex(8)}.tmp"
    os.mkdir(tmp, mode, dir_fd=disk.fd)
    try:
        fd = os.open(tmp, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=disk.fd)
        try:
            os.fchmod(fd, mode)           # the group's members write there too (no umask)
            mfd = os.open(_DRIVER_MARKER,
                          os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                          0o600, dir_fd=fd)
            with os.fdopen(mfd, "wb") as f:
                if disk.shared:
                    os.fchmod(f.fileno(), 0o640)
                f.write(_MARKER_TEXT)
        finally:
            os.close(fd)
        os.rename(tmp, DRIVER_CACHE, src_dir_fd=disk.fd, dst_dir_fd=disk.fd)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(f"{tmp}/{_DRIVER_MARKER}", dir_fd=disk.fd)
        with contextlib.suppress(OSError):
            os.rmdir(tmp, dir_fd=disk.fd)
        if isinstance(exc, OSError) and exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
            return                        # another process made it first
        raise


def _open_driver_dir(disk: _DiskCache, name: str) -> int | None:
    """A descriptor of the driver cache directory ``name`` of ``disk`` (:data:`DRIVER_CACHE`, or
    one being made), where it is daskcl's; ``None`` where there is none.

    Raises ``_Untrusted``, saying why, where ``name`` is not a directory, fails the cache's
    trust rules, or does not carry daskcl's marker: a regular file of the cache's owners (the
    user, in a private cache) that begins as daskcl writes it.
    """
    try:
        fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=disk.fd)
    except FileNotFoundError:
        return None
    except OSError as exc:                 # a symbolic link or a file of that name
        raise _Untrusted(f"it is not a directory ({exc.strerror})") from None
    fd = _checked_fd(fd, "the directory", disk.shared, disk.gid)
    return _kept_fd(fd, lambda f: _marker_problem(f, disk))


def _marker_problem(fd: int, disk: _DiskCache) -> str | None:
    """Why the directory open as ``fd`` lacks daskcl's marker, or ``None`` where it has it."""
    try:
        mfd = os.open(_DRIVER_MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                      dir_fd=fd)
    except FileNotFoundError:
        return f"it has no {_DRIVER_MARKER} file, so daskcl did not make it"
    except OSError as exc:
        return f"its {_DRIVER_MARKER} cannot be read ({exc.strerror})"
    with os.fdopen(mfd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return f"its {_DRIVER_MARKER} is not a regular file"
        why = _distrust(st, f"its {_DRIVER_MARKER}", disk.shared, disk.gid)
        if why is not None:
            return why
        if f.read(len(_MARKER_MAGIC)) != _MARKER_MAGIC:
            return f"its {_DRIVER_MARKER} is not daskcl's"
    return None


def _driver_files(fd: int) -> Iterator[tuple[int, str, os.stat_result]]:
    """What is in daskcl's driver cache directory open as ``fd`` but its marker, deepest first
    (a directory after what is in it): ``(descriptor of the directory it is in, name, status)``,
    each while that descriptor is open."""
    for root, dirs, files, dfd in os.fwalk(dir_fd=fd, topdown=False):
        for name in [*files, *dirs]:
            if root == "." and name == _DRIVER_MARKER:
                continue
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            yield dfd, name, st


def _driver_cache_state() -> tuple[int, str | None]:
    """The bytes of the driver's compiled code in :data:`DRIVER_CACHE`, and why a directory of
    that name is left alone (``None`` where it is daskcl's, or there is none)."""
    with _DiskCache.open(create=False) as disk:
        if disk is None:
            return 0, None
        try:
            fd = _open_driver_dir(disk, DRIVER_CACHE)
        except _Untrusted as exc:
            return 0, str(exc)
        except OSError as exc:
            return 0, f"it cannot be read ({exc.strerror})"
        if fd is None:
            return 0, None
        try:
            return sum(st.st_size for _, _, st in _driver_files(fd)
                       if stat.S_ISREG(st.st_mode)), None
        finally:
            os.close(fd)


def cache_info() -> dict[str, Any]:
    """What the disk cache holds: its directory (``None`` without one), the number and bytes of
    its program entries, the build locks and unfinished writes beside them, the bytes of the
    driver's compiled code in daskcl's :data:`DRIVER_CACHE`, why a directory of that name is
    not daskcl's (``driver_refused``, else ``None``), and whether the directory has a
    ``nvidia`` directory (``old_driver``: what daskcl before its marker used, which it leaves
    alone now, being unable to tell it from another program's)."""
    d = cache_dir()
    files = list(_own_files())
    entries = [f for f in files if f[1].endswith(".bin")]
    driver_bytes, driver_refused = _driver_cache_state()
    return {
        "directory": None if d is None else str(d),
        "shared": _shared(),
        "entries": len(entries),
        "bytes": sum(f[2] for f in entries),
        "locks": sum(f[1].endswith(".lock") for f in files),
        "driver_bytes": driver_bytes,
        "driver_refused": driver_refused,
        "old_driver": d is not None and (d / _OLD_DRIVER_CACHE).is_dir(),
        "unfinished": sum(f[1].endswith(".tmp") for f in files),
    }


def clear_disk_cache() -> int:
    """Delete what daskcl wrote in the disk cache; return the number of files deleted.

    That is the program entries, build locks and unfinished writes (files of the names daskcl
    writes, in the subdirectories it makes) and the subdirectories they leave empty; and what
    the NVIDIA driver wrote in :data:`DRIVER_CACHE` (everything in it but daskcl's marker),
    only while that directory carries the marker (:func:`share_driver_cache`), and a driver
    cache directory a process left half made.  Anything else in the cache directory stays: a
    directory of that name without daskcl's marker, and the ``nvidia`` directory of earlier
    versions, are not daskcl's to empty."""
    n = 0
    for sub, name, _ in list(_own_files()):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sub / name)
            n += 1
    with _DiskCache.open(create=False) as disk:
        if disk is None:
            return n
        for name in sorted(os.listdir(disk.fd)):
            if _SUBDIR.fullmatch(name):
                with contextlib.suppress(OSError):   # not empty: something else is there
                    os.rmdir(name, dir_fd=disk.fd)
            elif name == DRIVER_CACHE or _DRIVER_TMP.fullmatch(name):
                try:
                    fd = _open_driver_dir(disk, name)
                except (OSError, _Untrusted):
                    continue                         # not daskcl's: left alone
                if fd is None:
                    continue
                try:
                    for dfd, f, st in _driver_files(fd):
                        if stat.S_ISDIR(st.st_mode):
                            with contextlib.suppress(OSError):   # not empty: left
                                os.rmdir(f, dir_fd=dfd)
                        else:
                            with contextlib.suppress(FileNotFoundError):
                                os.unlink(f, dir_fd=dfd)
                                n += 1
                    if name != DRIVER_CACHE:         # half made: its marker and itself too
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(_DRIVER_MARKER, dir_fd=fd)
                            n += 1
                        with contextlib.suppress(OSError):
                            os.rmdir(name, dir_fd=disk.fd)
                finally:
                    os.close(fd)
    return n
