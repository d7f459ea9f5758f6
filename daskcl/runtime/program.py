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

Nothing in the cache directory is deleted that daskcl did not write there: ``daskcl cache clear``
(:func:`clear_disk_cache`) deletes files of the names of its entries, build locks and unfinished
writes, and the NVIDIA driver's compiled code in the directory that daskcl makes for it
(:data:`DRIVER_CACHE`, :func:`share_driver_cache`), which it uses and empties only while that
holds the marker file daskcl wrote into it when making it.  Anything else stays, so the cache
directory may be one that other programs use too (``~/.cache``).

Entries are written to a temporary file and renamed into place, so readers never see a partial
file and two processes building the same program at once both succeed (the last rename wins;
both binaries are valid).  Each entry records its full key (program key, device identity and
daskcl version) under a checksum of the record and the binary; an entry that is corrupt,
truncated, recorded for another program, not a regular file, or refused by the driver is
rebuilt from source and replaced, with one :class:`CacheWarning`.  An OS error on the cache path
warns once and the program is built from source.

A program is built from source whole (the assembled program), or, where the config key
``build.link`` (``DASKCL_LINK``) says so (:func:`link_mode`), linked from separately compiled
objects (:mod:`daskcl.runtime.link`): one per library unit, compiled once per device and build
options and shared by every kernel that uses the unit, and the kernel's own.  Objects are kept
in memory and on disk exactly as programs are (the same trust checks, records, atomic writes,
build locks and warnings; their key is the object's text, its options, the device identity and
the daskcl version), and so is the linked program.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import hashlib
import json
import logging
import os
import re
import secrets
import stat
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import config
from .._version import __version__
from ..errors import BuildError, CacheWarning, ConfigError, DaskclWarning, outside_stacklevel
from . import device as _device
from . import link as _link
from .library import ProgramSource

_logger = logging.getLogger(__name__)

__all__ = [
    "BUILD_WAIT_S",
    "COMPILE_THREADS",
    "DRIVER_CACHE",
    "LINK_WINS",
    "BuiltProgram",
    "CacheWarning",
    "build",
    "build_later",
    "cache_dir",
    "cache_info",
    "cache_refused",
    "clear_disk_cache",
    "clear_memory_cache",
    "context_key",
    "default_options",
    "in_memory",
    "link_mode",
    "long_lived",
    "noinline_mode",
    "set_args",
    "share_driver_cache",
    "stats",
    "wait_background",
]

_MAGIC = b"DASKCL-BINARY-2\n"


@dataclass
class BuiltProgram:
    """A built program, its source and its kernels (one kernel object per name, with a lock)."""

    program: Any
    source: ProgramSource
    options: tuple[str, ...]
    origin: str  # "source", "linked", "disk" or "memory" (how it was obtained the first time)
    #: whether it was (or, loaded from disk, had been) linked from separately compiled objects
    linked: bool = False
    #: how a linked build went: the granularity (``"unit"`` or ``"closure"``), the objects, how
    #: many were compiled, loaded from disk or reused from memory, seconds compiling (summed over
    #: threads), seconds until every object was there, seconds linking
    detail: dict[str, Any] = field(default_factory=dict)
    _kernels: dict[str, tuple[Any, threading.Lock]] = field(default_factory=dict)

    def kernel(self, name: str) -> tuple[Any, threading.Lock]:
        """The kernel ``name`` and the lock to hold while setting its arguments and enqueuing."""
        k = self._kernels.get(name)
        if k is None:
            import pyopencl as cl

            k = self._kernels.setdefault(name, (cl.Kernel(self.program, name), threading.Lock()))
        return k


def set_args(kernel: Any, *args: Any) -> None:
    """``kernel.set_args(*args)`` where the scalar arguments are NumPy scalars.

    The argument types are declared to pyopencl once per kernel (and again only if they
    change), so that it packs the scalars with one compiled ``struct`` format: undeclared, it
    inspects each argument on every call, about 10 us an argument (0.35 ms for an elementwise
    kernel's 37, on every launch).
    """
    sig = tuple(type(a) if isinstance(a, np.generic) else None for a in args)
    if getattr(kernel, "_daskcl_sig", None) != sig:
        kernel.set_scalar_arg_dtypes([None if t is None else np.dtype(t) for t in sig])
        kernel._daskcl_sig = sig
    kernel.set_args(*args)


#: counters of how programs were obtained in this process (for tests and benchmarks):
#: ``source`` counts every program built from source, ``linked`` those of them linked from
#: objects; ``object_*`` count the objects of linked builds by where they came from;
#: ``helper`` counts the programs built by helper processes (:func:`build_later`) and loaded here;
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

_memory: dict[tuple[int, str], BuiltProgram] = {}
_objects: dict[tuple[int, str], Any] = {}
_locks: dict[tuple[int, str], threading.Lock] = {}
_locks_guard = threading.Lock()

#: the most objects compiled at once in one process (each compile is one compiler thread)
COMPILE_THREADS = 8

#: devices on which a linked build gives the first result sooner than the assembled one, by
#: measurement (benchmarks/README.md, "Separate compilation"): (platform name substring, device
#: type) pairs; ``build.link = auto`` links there and builds the assembled program elsewhere
LINK_WINS: tuple[tuple[str, str], ...] = ()


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


def default_options(device_type: str = "CPU", inlined: bool = False) -> tuple[str, ...]:
    """Build options every program gets on a device of ``device_type``.

    ``fp_contract`` (``DASKCL_FP_CONTRACT=1``) lets the compiler fuse ``a*b+c`` into ``fma`` (see ``OPENCL.cl``);
    it is off by default, so that expressions round as in R's C code on x86-64.

    ``accuracy`` (``DASKCL_ACCURACY=best``) defines ``DASKCL_ACCURACY_BEST``: the units whose R
    algorithm loses digits somewhere take another (docs/accuracy.rst); the default ``r`` adds
    nothing, so ``r`` and ``best`` never share a cached program.

    ``noinline`` (``DASKCL_NOINLINE``) keeps the heavy library routines out of line (``OPENCL.cl``): on by
    default for GPUs, where it cuts cold builds 5.8x over every function (the slowest, qnf,
    from 267 s to 22 s on an H100) with the same bits; off for CPUs, where PoCL's kernels run
    slower with calls (pbeta 18%) and builds are cheap (benchmarks/README.md).  ``0`` or ``1``
    (false or true) overrides the choice; ``tiered`` (the default of daskcl's dask workers on
    GPUs, :func:`noinline_mode`) builds out of line first and, for kernels measured faster
    inlined, the inlined program later.  ``inlined``: the options of that later program (the
    routines inlined whatever the mode).
    """
    opts: tuple[str, ...] = ()
    if config.get("accuracy") == "best":     # units choose their algorithm by it (cl/README.md)
        opts += ("-DDASKCL_ACCURACY_BEST",)
    if config.get("fp_contract"):
        opts += ("-DDASKCL_FP_CONTRACT",)
    if not inlined and noinline_mode(device_type) != "off":
        opts += ("-DDASKCL_NOINLINE",)
    return opts


#: whether this process serves calls for long (a dask worker of daskcl's: :func:`long_lived`)
_LONG_LIVED = False


def long_lived(serving: bool = True) -> bool:
    """Say whether this process serves many calls for long (daskcl's dask worker plugin says so
    at its setup, and takes it back at its teardown, for a worker in a process of the user's):
    there ``noinline`` ``auto`` tiers up on GPUs (:func:`noinline_mode`).  Returns what was
    said before."""
    global _LONG_LIVED
    before, _LONG_LIVED = _LONG_LIVED, serving
    return before


def noinline_mode(device_type: str = "CPU") -> str:
    """How the heavy library routines are built on a device of ``device_type``: ``"off"``
    (inlined), ``"on"`` (out of line), or ``"tiered"``: out of line, and for a kernel measured
    faster inlined (:attr:`~daskcl.kernels.ElementwiseKernel.tier_up`) the inlined program is
    built in the background and used once it is there (:func:`build_later`): the first result
    as soon as out of line, the kernel at full speed a little later, the same bits.
    The config key ``noinline``: ``auto`` is ``tiered`` on GPUs where there is a disk cache
    (the inlined program is then built by a helper process, :func:`build_later`) and in daskcl's
    dask workers (:func:`long_lived`), ``on`` in other processes on GPUs, and ``off``
    elsewhere."""
    chosen = config.get("noinline")
    if chosen is True:
        return "on"
    if chosen is False:
        return "off"
    if chosen == "tiered":
        return "tiered"
    if device_type != "GPU":
        return "off"
    return "tiered" if _LONG_LIVED or config.get("cache.enabled") else "on"


_linker: dict[int, bool] = {}


def _handle(obj: Any) -> int:
    """The key of a pyopencl object (a device, a context) in this process's tables: its OpenCL
    handle, which the driver cannot give to another object while this one is retained (the
    Python object's ``id`` can pass to a new object once it is released)."""
    return int(getattr(obj, "int_ptr", None) or id(obj))


def link_mode(bound: _device.BoundDevice) -> str:
    """How programs for ``bound``'s device are built: ``"assembled"`` (compiled whole),
    ``"unit"`` (each library unit compiled separately into an object, the objects linked) or
    ``"closure"`` (the kernel's library units compiled into one object, linked with the
    kernel's).

    The config key ``build.link`` (``DASKCL_LINK``) decides: ``1`` (true) links an object per
    unit and ``closure`` one object for the units wherever the device has a linker (OpenCL
    1.2), ``0`` (false) builds the assembled program, ``auto`` links an object per unit on the
    devices of :data:`LINK_WINS`.  Every way gives the same bits.  A device without a linker
    builds the assembled program, with one warning where linking was asked for.
    """
    mode = config.get("build.link")
    if mode is False:
        return "assembled"
    key = _handle(bound.device)
    if key not in _linker:
        import pyopencl as cl

        try:
            _linker[key] = bool(bound.device.get_info(cl.device_info.LINKER_AVAILABLE))
        except (cl.Error, AttributeError):      # an OpenCL 1.1 device or platform
            _linker[key] = False
    if not _linker[key]:
        if mode != "auto":
            _warn_once((bound.info.identity, "linker"),
                       f"{bound.info.describe()} has no OpenCL linker; DASKCL_LINK={mode} is "
                       "ignored and programs are built whole", DaskclWarning)
        return "assembled"
    if mode is True:
        return "unit"
    if mode == "closure":
        return "closure"
    wins = any(p.lower() in bound.info.platform.lower() and t == bound.info.type
               for p, t in LINK_WINS)
    return "unit" if wins else "assembled"


def clear_memory_cache() -> None:
    """Forget the programs and objects built in this process (the disk cache is kept), and
    the background builds that have ended (:func:`build_later` may start them again)."""
    _memory.clear()
    _objects.clear()
    with _locks_guard:
        for mkey in [k for k, t in _later.items() if not t.is_alive()]:
            ended = _later.pop(mkey)
            if isinstance(ended, _Helper):
                ended.close()


def context_key(bound: _device.BoundDevice) -> int:
    """The key of ``bound``'s context in this process's memory caches (:func:`_handle`): the
    programs and buffers cached hold the context, so its handle is not reused while they live
    (a process that binds again makes a new context)."""
    return _handle(bound.context)


@functools.lru_cache(maxsize=1024)  # the same assembled text comes back on every call
def _key(identity: str, text: str, options: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in (identity, text, "\x00".join(options)):
        h.update(part.encode())
        h.update(b"\x00\x01")
    return h.hexdigest()


# what keys of linked programs and of objects add to their options: no option is equal to these,
# so they never share a key with an assembled program
_LINKED = "\x00linked"
_OBJECT = "\x00object"


def build(source: ProgramSource, options: Sequence[str] = (), *,
          inlined: bool = False) -> BuiltProgram:
    """The program for ``source`` on the bound device, from memory, disk, or a fresh build.

    The fresh build compiles ``source`` whole, or (config key ``build.link``, :func:`links`)
    compiles each library unit of it into an object, cached like programs and shared by every
    kernel that uses the unit, and links those objects with the kernel's
    (:mod:`daskcl.runtime.link`).  ``inlined``: with the library routines inlined whatever
    the config key ``noinline`` says (:func:`default_options`).

    Raises
    ------
    BuildError
        The compiler or the linker rejected the program; ``.log`` holds the log and ``.units``
        the library files in the program.  The message names the file and line of each error.
    """
    bound = _device.current()
    return _build(bound, source, *_resolve(bound, source, options, inlined))


def _resolve(bound: _device.BoundDevice, source: ProgramSource, options: Sequence[str],
             inlined: bool) -> tuple[tuple[str, ...], str, str]:
    """The full options of ``source``'s program on ``bound``, how it is built, and its key."""
    opts = tuple(options) + default_options(bound.info.type, inlined)
    mode = link_mode(bound)
    key = _key(bound.info.identity, source.text,
               opts if mode == "assembled" else (_LINKED + mode, *opts))
    return opts, mode, key


def _build(bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...],
           mode: str, key: str) -> BuiltProgram:
    mkey = (context_key(bound), key)
    hit = _memory.get(mkey)
    if hit is not None:
        _count("memory")
        return hit
    with _locks_guard:
        lock = _locks.setdefault(mkey, threading.Lock())
    with lock:
        hit = _memory.get(mkey)
        if hit is not None:
            _count("memory")
            return hit
        built = _load_or_build(bound, source, options, key, mode)
        _memory[mkey] = built
        return built


def in_memory(source: ProgramSource, options: Sequence[str] = (), *,
              inlined: bool = False) -> BuiltProgram | None:
    """The program :func:`build` would return, if this process already has it (no disk read,
    no build)."""
    bound = _device.current()
    _, _, key = _resolve(bound, source, options, inlined)
    mkey = (context_key(bound), key)
    hit = _memory.get(mkey)
    if hit is None:
        later = _later.get(mkey)
        if isinstance(later, _Helper) and not later.is_alive():
            hit = later.collect()
    return hit


class _Helper:
    """A program built by a helper process (``python -m daskcl.runtime.builder``) into the disk
    cache: :func:`in_memory` loads it from there once the helper has ended (a few milliseconds
    on NVIDIA, whose compiled code the helper left in the shared driver cache).

    NVIDIA's OpenCL builds one program of a process at a time, so an inlined build on a thread
    of the process held back the process's next build (pf's inlined program takes 44 s on an
    H200); another process builds beside it."""

    def __init__(self, bound: _device.BoundDevice, source: ProgramSource,
                 options: tuple[str, ...], key: str) -> None:
        import subprocess
        import tempfile

        self.bound, self.source, self.options, self.key = bound, source, options, key
        self.done = False
        payload = {"device": bound.info.spec, "identity": bound.info.identity, "key": key,
                   "text": source.text, "files": list(source.files),
                   "line_map": [list(m) for m in source.line_map], "options": list(options)}
        # files, not pipes: the caller does not wait for the helper to read, nor the helper
        # for anyone to read what it says
        stdin = tempfile.TemporaryFile()
        stdin.write(json.dumps(payload).encode())
        stdin.seek(0)
        self.log = tempfile.TemporaryFile()
        env = {**os.environ, **config.environ(config.explicit()),
               "DASKCL_DEVICE": bound.info.spec}
        try:
            self.proc = subprocess.Popen(_helper_command(), stdin=stdin, stdout=self.log,
                                         stderr=subprocess.STDOUT, env=env, close_fds=True)
        finally:
            stdin.close()
        self.lock = threading.Lock()

    def is_alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Forget what the helper said (its log file)."""
        self.log.close()

    def detach(self) -> None:
        """At this process's exit: a helper still building goes on and writes its program for
        the next process; its log is closed, and the ``Popen`` no longer answers for it (else,
        collected at exit, it warns that the process still runs).  The system reaps it."""
        self.close()
        if self.proc.poll() is None:
            self.proc.returncode = 0     # not waited for by this process, which is ending

    def join(self, timeout: float | None = None) -> None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)

    def collect(self) -> BuiltProgram | None:
        """The helper's program, loaded from the disk cache into memory (once); ``None``, with
        a warning in the log, where the helper failed."""
        mkey = (context_key(self.bound), self.key)
        with self.lock:
            if self.done:
                return _memory.get(mkey)
            self.done = True
            built = None
            if self.proc.returncode == 0:
                built = _load_stored(self.bound, self.source, self.options, self.key)
            if built is not None:
                _count("helper")
                _memory.setdefault(mkey, built)
            else:
                _helpers_failed()
                self.log.seek(0)
                said = self.log.read()[-600:].decode(errors="replace").strip()
                _logger.warning("daskcl: a program built in the background failed (helper "
                                "process exit %s: %s); the one already in use stays, and this "
                                "process starts no more helpers", self.proc.returncode,
                                said or "no program in the cache")
            self.close()
            return _memory.get(mkey)


def _helper_command() -> list[str]:
    """The command line of a helper process (:class:`_Helper`)."""
    import sys

    return [sys.executable, "-m", "daskcl.runtime.builder"]


def _load_stored(bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...],
                 key: str) -> BuiltProgram | None:
    """``key``'s program from the disk cache (never built here); ``None`` where it is missing
    or cannot be used."""
    import pyopencl as cl

    with _DiskCache.open() as disk:
        if disk is None:
            return None
        entry = disk.entry(key, bound.info.identity)
        try:
            blob = entry.read()
            if blob is None:
                return None
            prg = _device.build_program(
                cl.Program(bound.context, [bound.device], [_unpack(blob, entry.record)]), options)
        except (OSError, _Untrusted, ValueError, cl.Error):
            return None
    return BuiltProgram(prg, source, options, "disk")


#: whether a helper process of this one failed (a device it cannot open, as in NVIDIA's
#: exclusive-process mode): then no more are started (:func:`build_later`)
_HELPERS_FAILED = False


def _helpers_failed() -> None:
    global _HELPERS_FAILED
    _HELPERS_FAILED = True

#: background builds of this process (:func:`build_later`), by memory key: threads, and
#: helper processes
_later: dict[tuple[int, str], threading.Thread | _Helper] = {}
#: whether :func:`wait_background` runs at the interpreter's exit
_AT_EXIT = False
#: whether :func:`_detach_helpers` is registered to run at exit
_AT_EXIT_HELPERS = False


def build_later(source: ProgramSource, options: Sequence[str] = (), *,
                inlined: bool = False) -> None:
    """Load or build the program of :func:`build` in the background, once per process, for
    :func:`in_memory`; the caller goes on meanwhile.

    An assembled program already in the disk cache is loaded at once (milliseconds where the
    driver's compiled code is cached too).  One not there is built by a helper process
    (:class:`_Helper`), which writes it to the cache, where :func:`in_memory` finds it once the
    helper has ended: the builds of this process go on meanwhile, and a helper still building
    when this process exits finishes, so the next process loads its program.  Without a usable
    disk cache (or for a linked build, or after a helper failed) a process that serves many
    calls (:func:`long_lived`) loads or builds it on a thread of its own, which it waits for at
    exit (:func:`wait_background`); any other process keeps what it has, since a build on a
    thread would hold back its next one (NVIDIA builds one program of a process at a time).
    The build takes the disk cache's lock like any other, so a cluster sharing the cache builds
    it once.  A build that fails leaves nothing in memory and is logged (the caller keeps the
    program it had).
    """
    bound = _device.current()
    opts, mode, key = _resolve(bound, source, options, inlined)
    mkey = (context_key(bound), key)
    global _AT_EXIT, _AT_EXIT_HELPERS
    with _locks_guard:
        if mkey in _memory or mkey in _later:
            return
    usable = mode == "assembled" and _disk_usable()
    stored = _load_stored(bound, source, opts, key) if usable else None
    with _locks_guard:
        if stored is not None:
            _count("disk")
            _memory.setdefault(mkey, stored)
            return
        if mkey in _memory or mkey in _later:      # another thread came first meanwhile
            return
        if usable and not _HELPERS_FAILED:
            try:
                _later[mkey] = _Helper(bound, source, opts, key)
                if not _AT_EXIT_HELPERS:
                    atexit.register(_detach_helpers)
                    _AT_EXIT_HELPERS = True
                return
            except OSError as exc:       # no process to be had
                _helpers_failed()
                _logger.warning("daskcl: no helper process to build a program in the "
                                "background (%s)", exc)
        if not _LONG_LIVED:
            return
        thread = threading.Thread(target=_build_quietly, args=(bound, source, opts, mode, key),
                                  name=f"daskcl-build-{key[:8]}", daemon=True)
        _later[mkey] = thread
        if not _AT_EXIT:
            # the interpreter's exit would stop a compiler in mid-build (PoCL's aborts the
            # process: "terminate called without an active exception")
            atexit.register(wait_background)
            _AT_EXIT = True
    thread.start()


def _detach_helpers() -> None:
    """At exit: the helpers still building finish on their own (:meth:`_Helper.detach`)."""
    with _locks_guard:
        helpers = [t for t in _later.values() if isinstance(t, _Helper)]
    for h in helpers:
        h.detach()


def _disk_usable() -> bool:
    """Whether this process has a disk cache it trusts (:class:`_DiskCache`)."""
    with _DiskCache.open() as disk:
        return disk is not None


def _build_quietly(bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...],
                   mode: str, key: str) -> None:
    try:
        _build(bound, source, options, mode, key)
    except Exception as exc:    # the caller keeps its program: say why, and go on
        _logger.warning("daskcl: a program built in the background failed (%s: %s); the one "
                        "already in use stays", type(exc).__name__, str(exc)[:300])


def wait_background(timeout: float | None = None) -> bool:
    """Wait for the background builds begun so far (:func:`build_later`), and load what the
    helper processes among them built; whether all ended.  ``daskcl cache warm`` waits for
    them; so can a benchmark before it times a kernel."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _locks_guard:
        threads = list(_later.values())
    for t in threads:
        t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if isinstance(t, _Helper) and not t.is_alive():
            t.collect()
    return not any(t.is_alive() for t in threads)


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


#: a warning to give in the caller's thread: (what, to warn once per process; or None) and text
_Note = tuple[tuple[str, str] | None, str]


def _load_or_build(
    bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...], key: str,
    mode: str = "assembled",
) -> BuiltProgram:
    import pyopencl as cl

    plan = None if mode == "assembled" else _link.plan(source, options, mode)
    if mode != "assembled" and plan is None:     # not assembled from a library: built whole
        key = _key(bound.info.identity, source.text, options)
    detail: dict[str, Any] = {}

    def load(binary: bytes) -> Any:
        return _device.build_program(cl.Program(bound.context, [bound.device], [binary]), options)

    def make(disk: _DiskCache | None) -> tuple[Any, bytes]:
        if plan is None:
            # raised after the except block, not in it: an error raised there keeps pyopencl's
            # as its __context__ (``from None`` only hides it), which cannot be pickled, and a
            # dask worker's BuildError reached the client as a bare Exception
            failed = None
            try:
                prg = _device.build_program(cl.Program(bound.context, source.text), options)
            except cl.Error as exc:
                failed = str(exc)
            if failed is not None:
                raise _build_error(failed, source, bound)
        else:
            prg = _build_linked(bound, plan, source, disk, detail)
            _count("linked")
        return prg, prg.get_info(cl.program_info.BINARIES)[0]

    with _DiskCache.open() as disk:
        prg, origin, notes = _cached(bound, disk, key, load, make, "")
    _warn(notes)
    if origin == "source" and plan is not None:
        origin = "linked"
    return BuiltProgram(prg, source, options, origin, linked=plan is not None, detail=detail)


def _cached(
    bound: _device.BoundDevice, disk: _DiskCache | None, key: str,
    load: Callable[[bytes], Any], make: Callable[[_DiskCache | None], tuple[Any, bytes]],
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


# -- linked builds ----------------------------------------------------------------------------------


def _build_linked(
    bound: _device.BoundDevice, plan: _link.LinkPlan, source: ProgramSource,
    disk: _DiskCache | None, detail: dict[str, Any],
) -> Any:
    """The program linked from ``plan``'s objects, each from memory, disk or compiled (several
    at once); the kernel's object is compiled every time (the linked program is what is kept).
    Objects from disk that the linker refuses are compiled again, with a warning."""
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.perf_counter()
    objects = plan.objects
    compile_s: list[float] = []
    notes: list[_Note] = []

    def get(k: int, read: bool = True) -> tuple[Any, str]:
        obj = objects[k]
        prg, origin, obj_notes = _object(bound, obj, disk, cache=k < len(objects) - 1,
                                         read=read, timing=compile_s)
        notes.extend(obj_notes)
        return prg, origin

    with ThreadPoolExecutor(max(1, min(len(objects), os.cpu_count() or 1, COMPILE_THREADS)),
                            thread_name_prefix="daskcl-compile") as pool:
        got = list(pool.map(get, range(len(objects))))
    detail.update(granularity=plan.granularity, objects=len(objects), compiled=len(compile_s),
                  from_disk=sum(o == "disk" for _, o in got),
                  from_memory=sum(o == "memory" for _, o in got),
                  objects_s=time.perf_counter() - t0)
    t1 = time.perf_counter()
    try:
        prg = _link_objects(bound, plan, [p for p, _ in got], source)
    except BuildError:
        stale = [k for k, (_, o) in enumerate(got) if o != "source"]
        if not stale or _link.diagnose(plan.objects):     # nothing cached, or the sources' fault
            raise
        # objects from the cache the linker may not have taken: compiled again and linked once
        # more (their entries replaced, with a warning, only if that link succeeds)
        for k in stale:
            got[k] = get(k, read=False)
        detail["recompiled"] = len(stale)
        prg = _link_objects(bound, plan, [p for p, _ in got], source)
    detail.update(link_s=time.perf_counter() - t1, compile_s=sum(compile_s))
    _warn(notes)
    return prg


def _object(
    bound: _device.BoundDevice, obj: _link.ObjectSource, disk: _DiskCache | None,
    cache: bool, read: bool, timing: list[float],
) -> tuple[Any, str, list[_Note]]:
    """The compiled object of ``obj``: from memory, from disk or compiled (and kept in both
    unless not ``cache``), with where it came from and the warnings to give."""
    import pyopencl as cl

    key = _key(bound.info.identity, obj.source.text, (_OBJECT, *obj.options))
    mkey = (context_key(bound), key)
    if not cache:
        prg, _ = _compile(bound, obj, timing)
        _count("object_source")
        return prg, "source", []
    hit = _objects.get(mkey) if read else None
    if hit is not None:
        _count("object_memory")
        return hit, "memory", []
    with _locks_guard:
        lock = _locks.setdefault(mkey, threading.Lock())
    with lock:
        hit = _objects.get(mkey) if read else None
        if hit is not None:
            _count("object_memory")
            return hit, "memory", []

        def load(binary: bytes) -> Any:
            prg = cl.Program(bound.context, [bound.device], [binary])
            kind = prg.get_build_info(  # type: ignore[no-untyped-call]
                bound.device, cl.program_build_info.BINARY_TYPE)
            if kind != cl.program_binary_type.COMPILED_OBJECT:
                raise ValueError(f"the driver reads it as a program of binary type {kind}, "
                                 "not a compiled object")
            return prg

        prg, origin, notes = _cached(bound, disk, key, load,
                                     lambda _disk: _compile(bound, obj, timing), "object_",
                                     read=read)
        _objects[mkey] = prg
        return prg, origin, notes


def _compile(bound: _device.BoundDevice, obj: _link.ObjectSource,
             timing: list[float]) -> tuple[Any, bytes]:
    """``obj`` compiled (clCompileProgram) into an object, and its binary.  NVIDIA's code
    generation options (``-cl-nv-*``) are dropped where a compiler of objects refuses them (the
    link gets them)."""
    import pyopencl as cl
    from pyopencl._cl import _Program

    t0 = time.perf_counter()
    options = list(obj.options)
    while True:
        # a program made from its raw object: compile() of one made from source warns first
        prg: Any = cl.Program(_Program(bound.context, obj.source.text))
        failed = None
        try:
            prg.compile(options, devices=[bound.device])
        except cl.Error as exc:
            vendor = [o for o in options if o.startswith("-cl-nv-")]
            if exc.code == cl.status_code.INVALID_COMPILER_OPTIONS and vendor:
                options = [o for o in options if o not in vendor]
                continue
            failed = f"{exc}\n{_log(prg, bound)}"
        if failed is not None:    # outside the except block (see _load_or_build's make)
            raise _build_error(failed, obj.source, bound,
                               what=f"compiling {obj.unit} separately")
        break
    timing.append(time.perf_counter() - t0)
    return prg, prg.get_info(cl.program_info.BINARIES)[0]


def _log(prg: Any, bound: _device.BoundDevice) -> str:
    """The build log of ``prg`` on the bound device; ``""`` where the driver gives none."""
    import pyopencl as cl

    try:
        return str(prg.get_build_info(bound.device, cl.program_build_info.LOG) or "")
    except cl.Error:
        return ""


_CL_BUILD_SUCCESS = 0


def _link_objects(bound: _device.BoundDevice, plan: _link.LinkPlan, objects: list[Any],
                  source: ProgramSource) -> Any:
    """The objects linked into an executable (clLinkProgram).

    A failed link raises :class:`BuildError` with what the texts show (symbols defined twice,
    or declared and called but defined nowhere, with their files and lines) and the linker's
    log where the driver keeps one (NVIDIA and PoCL may return no program from a failed link:
    then there is no log, and nothing of it is touched)."""
    import pyopencl as cl

    options = list(plan.link_options)
    link: Any = cl.link_program
    while True:
        try:
            prg: Any = link(bound.context, objects, options, devices=[bound.device])
            status = prg.get_build_info(bound.device, cl.program_build_info.STATUS)
            if status == _CL_BUILD_SUCCESS:
                return prg
            log = _log(prg, bound)
            error = f"the linked program's build status is {status}"
        except cl.Error as exc:
            vendor = [o for o in options if o.startswith("-cl-nv-")]
            if exc.code == cl.status_code.INVALID_LINKER_OPTIONS and vendor:
                options = [o for o in options if o not in vendor]   # the compile had them
                continue
            error, log = str(exc), ""
            prg = None
            record: Any = exc.what
            with contextlib.suppress(cl.Error, AttributeError):
                # the failed program, if the driver returned one (it holds the linker's log)
                prg = record._program()
            if prg is not None:
                log = _log(prg, bound)
        break
    found = _link.diagnose(plan.objects)
    files = ", ".join(o.unit for o in plan.objects)
    said = "\n".join(f"  {p}" for p in found) or "  (nothing in the sources explains it)"
    raise BuildError(
        f"OpenCL link of separately compiled objects failed on {bound.info.describe()} "
        f"({error}).\nObjects: {files}\nWhat the sources show:\n{said}\n"
        f"Linker log: {log.strip() or '(the driver gave none)'}\n"
        "DASKCL_LINK=0 builds the program whole.",
        log=log, units=source.files)


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


def _warn_once(what: tuple[str, str], message: str,
               category: type[Warning] = CacheWarning) -> None:
    """Warn with ``message`` the first time ``what`` happens in this process."""
    with _locks_guard:
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

    def entry(self, key: str, identity: str) -> _Entry:
        sub, name = _entry_name(key, identity)
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


_ENTRY_FILE = re.compile(r"[0-9a-f]{64}\.bin(\.lock|\.[0-9a-f]{16}\.tmp)?")
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
    for the GPU (most of a cold build: 7.6 of qbeta's 8.1 s on an H200), and the driver keeps
    the result in its compute cache (``~/.nv/ComputeCache``), which a fresh node or container
    does not have.  With ``CUDA_CACHE_PATH`` at ``<cache>/daskcl-nvidia`` (:data:`DRIVER_CACHE`)
    that compiled code lives beside daskcl's entries: processes and nodes that share the program
    cache share it too, so a program is compiled once per cluster, and ``daskcl cache warm``
    prepares both.

    daskcl makes that directory itself, with a marker file of its own in it
    (``.daskcl-driver-cache``) written before the directory takes its name
    (:func:`_make_driver_dir`), and uses it only while the marker is there and passes the
    cache's trust rules (the user's, in a private cache): a directory of that name that daskcl
    did not make is never taken over (one :class:`CacheWarning`, and the driver keeps its own
    cache), so that :func:`clear_disk_cache`, which empties the directory, deletes only what
    the driver wrote there at daskcl's direction.

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
    if len(rest) < 40:      # cut inside its header: no size to compare with
        raise ValueError(f"truncated: {len(blob)} bytes, shorter than its header")
    if size != len(binary):
        raise ValueError(f"truncated: {len(binary)} of {size} bytes")
    if hashlib.sha256(got + binary).digest() != digest:
        raise ValueError("checksum mismatch")
    if got != record:
        raise ValueError("the entry was written for another program or device (key mismatch)")
    return binary


# where a compiler's log says a line of the program is: NVIDIA "<kernel>:12:5", PoCL the path of
# the temporary file it compiled ("/home/u/.cache/pocl/kcache/tempfile_Tbaz3k.cl:12:5")
_LOG_LINE = re.compile(r"(<source>|input\.cl|<kernel>|\bsource|[^\s:'\"()]*\.cl):(\d+):(\d+)")


def _map_log(log: str, source: ProgramSource) -> str:
    """``log`` with the program's line numbers replaced by library files and their lines."""

    def where(m: re.Match[str]) -> str:
        name, line = source.locate(int(m.group(2)))
        return f"{name}:{line}:{m.group(3)}"

    return _LOG_LINE.sub(where, log)


def _build_error(log: str, source: ProgramSource, bound: _device.BoundDevice,
                 what: str = "build") -> BuildError:
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
    # pyopencl's first line repeats its status ("clBuildProgram failed: BUILD_PROGRAM_FAILURE
    # - clBuildProgram failed: ..." three times): once is enough
    first, sep, rest = log.partition("\n")
    shown = " - ".join(dict.fromkeys(first.split(" - "))) + sep + rest
    return BuildError(
        f"OpenCL {what} failed on {bound.info.describe()}.\nProgram files: {files}\n"
        f"Build log (locations mapped to library files):\n{_map_log(shown, source)}{yours}",
        log=log,
        units=source.files,
    )
