# SPDX-License-Identifier: GPL-2.0-or-later
"""Building programs for the bound device, with an in-memory and an on-disk cache.

A program is keyed by the device identity (platform and device names, versions and driver),
the SHA-256 of its source and its build options.  In memory, each process keeps built programs
(and their kernel objects) per context; on disk, :mod:`daskcl.runtime.diskcache` (with its
trust rules) and NVIDIA's cache beside it (:mod:`daskcl.runtime.drivercache`).  Background
builds run in helper processes (:mod:`daskcl.runtime.background`) or on threads.

A program is built from source whole, or, where ``build.link`` says so (:func:`link_mode`),
linked from objects compiled per library unit and shared by every kernel that uses the unit
(:mod:`daskcl.runtime.link`); objects are cached and trusted exactly as programs are.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..errors import BuildError, CacheWarning, DaskclWarning
from . import device as _device
from . import link as _link
from .background import _Helper
from .diskcache import (
    BUILD_WAIT_S,
    _cached,
    _count,
    _DiskCache,
    _Note,
    _unpack,
    _Untrusted,
    _warn,
    _warn_once,
    cache_dir,
    cache_refused,
    stats,
)
from .drivercache import DRIVER_CACHE, cache_info, clear_disk_cache, share_driver_cache
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
    "inlined_arrived",
    "inlined_key",
    "link_mode",
    "long_lived",
    "memory_generation",
    "noinline_mode",
    "set_args",
    "share_driver_cache",
    "stats",
    "stored",
    "wait_background",
]


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


def set_args(kernel: Any, *args: Any, types: tuple[Any, ...] | None = None) -> None:
    """``kernel.set_args(*args)`` where the scalar arguments are NumPy scalars, or of the NumPy
    scalar types ``types`` gives by position (``None`` for the others) for a caller that knows
    them.

    The argument types are declared to pyopencl once per kernel (and again only if they
    change), so that it packs the scalars with one compiled ``struct`` format: undeclared, it
    inspects each argument on every call, about 10 us an argument (0.35 ms for an elementwise
    kernel's 37, on every launch).
    """
    sig = types or tuple(type(a) if isinstance(a, np.generic) else None for a in args)
    if getattr(kernel, "_daskcl_sig", None) != sig:
        kernel.set_scalar_arg_dtypes([None if t is None else np.dtype(t) for t in sig])
        kernel._daskcl_sig = sig
    kernel.set_args(*args)


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


def default_options(device_type: str = "CPU", inlined: bool = False) -> tuple[str, ...]:
    """Build options every program gets on a device of ``device_type``.

    ``fp_contract`` (``DASKCL_FP_CONTRACT=1``) lets the compiler fuse ``a*b+c`` into ``fma`` (see ``OPENCL.cl``);
    it is off by default, so that expressions round as in R's C code on x86-64.

    ``accuracy`` (``DASKCL_ACCURACY=best``) defines ``DASKCL_ACCURACY_BEST``: the units whose R
    algorithm loses digits somewhere take another (docs/accuracy.rst); the default ``r`` adds
    nothing, so ``r`` and ``best`` never share a cached program.

    ``noinline`` (``DASKCL_NOINLINE``) keeps the heavy library routines out of line
    (``OPENCL.cl``): on by default for GPUs, where it cuts cold builds several-fold with the
    same bits; off for CPUs, where PoCL's kernels run slower with calls and builds are cheap
    (benchmarks/README.md, "Cold builds").  ``0`` or ``1``
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


#: how many times the memory cache was cleared (prepared launches hold programs: they start
#: again when it changes)
_generation = [0]


def memory_generation() -> int:
    """A number that changes each time :func:`clear_memory_cache` forgets the programs."""
    return _generation[0]


def clear_memory_cache() -> None:
    """Forget the programs and objects built in this process (the disk cache is kept), and
    the background builds that have ended (:func:`build_later` may start them again)."""
    _generation[0] += 1
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

    The fresh build compiles ``source`` whole, or (config key ``build.link``, :func:`link_mode`)
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
            hit = _collect(later)
    return hit


def inlined_key(source: ProgramSource, options: Sequence[str] = ()) -> tuple[Any, str]:
    """The key under which :func:`in_memory` finds ``source``'s inlined program on the bound
    device, for :func:`inlined_arrived`."""
    bound = _device.current()
    return context_key(bound), _resolve(bound, source, options, True)[2]


def inlined_arrived(mkey: tuple[Any, str]) -> bool:
    """Whether the program of :func:`inlined_key` ``mkey`` is in memory now (a finished
    background build collected): a call's check, cheaper than :func:`in_memory`'s."""
    if mkey in _memory:
        return True
    later = _later.get(mkey)
    return isinstance(later, _Helper) and not later.is_alive() and _collect(later) is not None


def stored(source: ProgramSource, options: Sequence[str] = (), *,
           inlined: bool = False) -> BuiltProgram | None:
    """The program :func:`build` would return, where this process or the disk cache has it
    (loaded, never built; an assembled program only); ``None`` where neither has it."""
    hit = in_memory(source, options, inlined=inlined)
    if hit is not None:
        return hit
    bound = _device.current()
    opts, mode, key = _resolve(bound, source, options, inlined)
    if mode != "assembled":
        return None
    built = _load_stored(bound, source, opts, key)
    if built is None:
        return None
    _count("disk")
    with _locks_guard:
        return _memory.setdefault((context_key(bound), key), built)


def _collect(helper: _Helper) -> BuiltProgram | None:
    """The program of ``helper``, loaded from the disk cache into memory (once); ``None``, with
    a warning in the log, where the helper failed."""
    mkey = (context_key(helper.bound), helper.key)
    with helper.lock:
        if helper.done:
            return _memory.get(mkey)
        helper.done = True
        built = None
        if helper.proc.returncode == 0:
            built = _load_stored(helper.bound, helper.source, helper.options, helper.key)
        if built is not None:
            _count("helper")
            _memory.setdefault(mkey, built)
        else:
            _helpers_failed()
            helper.log.seek(0)
            said = helper.log.read()[-600:].decode(errors="replace").strip()
            _logger.warning("daskcl: a program built in the background failed (helper "
                            "process exit %s: %s); the one already in use stays, and this "
                            "process starts no more helpers", helper.proc.returncode,
                            said or "no program in the cache")
        helper.close()
        return _memory.get(mkey)


def _from_binary(bound: _device.BoundDevice, binary: memoryview) -> Any:
    """A program of ``bound``'s device from a binary of the disk cache (not built yet)."""
    import pyopencl as cl

    # pyopencl takes any buffer: the entry's binary, uncopied
    return cl.Program(bound.context, [bound.device], [binary])  # type: ignore[list-item]


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
                _from_binary(bound, _unpack(blob, entry.record)), options)
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
            _collect(t)
    return not any(t.is_alive() for t in threads)


def _load_or_build(
    bound: _device.BoundDevice, source: ProgramSource, options: tuple[str, ...], key: str,
    mode: str = "assembled",
) -> BuiltProgram:
    import pyopencl as cl

    plan = None if mode == "assembled" else _link.plan(source, options, mode)
    if mode != "assembled" and plan is None:     # not assembled from a library: built whole
        key = _key(bound.info.identity, source.text, options)
    detail: dict[str, Any] = {}

    def load(binary: memoryview) -> Any:
        return _device.build_program(_from_binary(bound, binary), options)

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

        def load(binary: memoryview) -> Any:
            prg = _from_binary(bound, binary)
            kind = prg.get_build_info(
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
