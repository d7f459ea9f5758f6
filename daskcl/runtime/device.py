# SPDX-License-Identifier: GPL-2.0-or-later
"""OpenCL device discovery and the process's fp64 device binding.

A process binds one device.  It is chosen by the ``spec`` argument of :func:`bind` or by the
environment variable ``DASKCL_DEVICE``: ``"P:D"`` (platform and device indices, as
``daskcl devices`` lists them) or a case-insensitive substring of ``"<platform> <device>"``.
Without either, GPUs are preferred over accelerators over CPUs.  A device is usable only if it
advertises ``cl_khr_fp64`` *and* a probe kernel builds on it and computes doubles correctly.

Example
-------
>>> import daskcl.runtime.device
>>> dev = daskcl.runtime.device.current()        # binds on first use
>>> dev.info.fp64
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..errors import DeviceError, NoFp64DeviceError, NoMatchingDeviceError, NoPlatformError

__all__ = [
    "BoundDevice",
    "DeviceInfo",
    "DeviceResources",
    "before_drivers",
    "bind",
    "build_program",
    "choose",
    "current",
    "list_devices",
    "listing",
    "matches",
    "probe_fp64",
    "probe_store",
    "quiet_compiler",
    "refuse_default",
    "remedy",
    "unbind",
]

_TYPE_RANK = {"GPU": 0, "ACCELERATOR": 1, "CPU": 2}

_PROBE_SRC = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void probe(__global double *out, const double one)
{
    double e = one + 0x1p-52;          /* representable only in double precision */
    out[0] = (e - one) * 0x1p52;       /* 1 */
    out[1] = sqrt(2.0 * one);          /* sqrt(2) */
    out[2] = exp(one) - 2.0;           /* e - 2: 0.718281828459045... */
    out[3] = 1e300 * one * 1e-300;     /* 1: out of float range in between */
}
"""
_PROBE_WANT = np.array([1.0, math.sqrt(2.0), math.e - 2.0, 1.0])


@dataclass(frozen=True)
class DeviceInfo:
    """What OpenCL says about one device (picklable plain data)."""

    platform_index: int
    device_index: int
    platform: str
    platform_vendor: str
    platform_version: str
    name: str
    vendor: str
    version: str
    driver_version: str
    type: str
    fp64: bool
    compute_units: int
    global_mem: int

    @property
    def spec(self) -> str:
        """``"P:D"``, the indices that select this device in ``DASKCL_DEVICE``."""
        return f"{self.platform_index}:{self.device_index}"

    @property
    def identity(self) -> str:
        """Platform and device identity, driver included: part of every cache key."""
        return " | ".join(
            (self.platform, self.platform_vendor, self.platform_version,
             self.name, self.vendor, self.version, self.driver_version)
        )

    def describe(self) -> str:
        return f"[{self.spec}] {self.platform} / {self.name} ({self.type}, driver {self.driver_version})"


def _cl() -> Any:
    import pyopencl as cl

    return cl


def _type_name(cl: Any, t: int) -> str:
    for name in ("GPU", "ACCELERATOR", "CPU"):
        if t & getattr(cl.device_type, name):
            return name
    return "OTHER"


#: called once, before this process first asks OpenCL for its platforms (when the drivers
#: initialise and read their environment): see ``drivercache.share_driver_cache``
before_drivers: list[Callable[[], object]] = []
_drivers_started = False
#: the process in which this one's OpenCL drivers started, where it was forked after that
_forked_from: int | None = None


def _after_fork_in_child() -> None:
    global _forked_from
    if _drivers_started and _forked_from is None:
        _forked_from = os.getppid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _refuse_forked() -> None:
    """A process forked after its parent started OpenCL cannot use it: the drivers' threads
    and device state are the parent's (the first launch waited forever on PoCL)."""
    if _forked_from is not None:
        raise DeviceError(
            f"daskcl started OpenCL in process {_forked_from}, and this process was forked from "
            "it after that: OpenCL's drivers do not survive fork. Start processes with the "
            "'spawn' or 'forkserver' method (multiprocessing.get_context('spawn'), "
            "ProcessPoolExecutor(mp_context=...)), as dask's workers do, or use daskcl only "
            "in the children")


def list_devices() -> list[tuple[DeviceInfo, Any]]:
    """Every OpenCL device of every platform, as ``(DeviceInfo, pyopencl.Device)`` pairs.

    Raises
    ------
    NoPlatformError
        No OpenCL platform is installed.
    """
    global _drivers_started
    _refuse_forked()
    cl = _cl()
    if not _drivers_started:
        _drivers_started = True
        for hook in before_drivers:
            hook()
    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:  # clGetPlatformIDs fails with PLATFORM_NOT_FOUND_KHR
        platforms = []
        err: Exception | None = exc
    else:
        err = None
    if not platforms:
        raise NoPlatformError(
            "no OpenCL platform found"
            + (f" ({err})" if err else "")
            + ". Install a driver: on a CPU-only machine 'pip install daskcl[pocl]' (PoCL); on "
            "an NVIDIA machine make sure /etc/OpenCL/vendors/nvidia.icd names libnvidia-opencl.so.1"
        )
    out = []
    for pi, p in enumerate(platforms):
        try:
            devices = p.get_devices()
        except cl.Error:
            devices = []
        for di, d in enumerate(devices):
            out.append((DeviceInfo(
                platform_index=pi, device_index=di, platform=p.name.strip(),
                platform_vendor=p.vendor.strip(), platform_version=p.version.strip(),
                name=d.name.strip(), vendor=d.vendor.strip(), version=d.version.strip(),
                driver_version=d.driver_version.strip(), type=_type_name(cl, d.type),
                fp64="cl_khr_fp64" in d.extensions.split() or d.double_fp_config != 0,
                compute_units=d.max_compute_units, global_mem=d.global_mem_size,
            ), d))
    return out


#: whether this thread is in :func:`build_program` (its compiler output is not a warning)
_building = threading.local()


def _quiet_compiler_output(cl: Any) -> None:
    """Wrap ``pyopencl.compiler_output`` (which pyopencl looks up at each build) once, so that
    it says nothing for the thread that is in :func:`build_program`.  Not a
    ``warnings.catch_warnings`` block: that swaps the process's warning filters, so that a
    build on one thread (a background build) undid another thread's block (a caller recording
    R's warnings), and its warnings became errors or were lost."""
    original = getattr(cl, "compiler_output", None)
    if original is None or getattr(original, "_daskcl_quiet", False):
        return

    def compiler_output(text: str) -> None:
        if not getattr(_building, "on", False):
            original(text)

    compiler_output._daskcl_quiet = True  # type: ignore[attr-defined]
    cl.compiler_output = compiler_output


def build_program(prg: Any, options: Sequence[str] = ()) -> Any:
    """``prg.build(options)`` without pyopencl's ``CompilerWarning``: it warns whenever a
    compiler prints anything (PoCL prints notes; NVIDIA's driver prints a log for the fp64 probe);
    the log is part of the ``BuildError`` when a build fails, where it matters."""
    with quiet_compiler():
        return prg.build(options=list(options), cache_dir=False)


@contextlib.contextmanager
def quiet_compiler() -> Iterator[None]:
    """A block of this thread in which pyopencl's ``CompilerWarning`` is not given (builds of
    daskcl's programs, and of pyopencl's own array kernels for daskcl's calls); other threads'
    warnings are untouched (see :func:`_quiet_compiler_output`)."""
    _quiet_compiler_output(_cl())
    before = getattr(_building, "on", False)
    _building.on = True
    try:
        yield
    finally:
        _building.on = before


#: while :func:`bind` chooses (under its lock): the context of the probe that passed last, which
#: the bound device takes rather than making a second (a driver's context costs tens of
#: milliseconds, and a GPU's memory); other probes' contexts are let go
_kept_probe: dict[str, Any] = {}


def probe_fp64(device: Any) -> str | None:
    """Build and run the fp64 probe kernel on ``device``; ``None`` if it passes, else why not.

    Where :func:`bind` probes, the probe's binary is kept in the disk cache beside the
    programs' (where there is one that is trusted, :mod:`daskcl.runtime.diskcache`; ``cache
    info`` does not count it, ``cache clear`` deletes it), so that a process on a warm cache
    starts no compiler to bind its device; a cached binary that fails to load or to compute is
    passed over, and the probe built from source decides (and replaces it)."""
    cl = _cl()
    try:
        with contextlib.ExitStack() as held:
            out = _probe(cl, device, held)
    except cl.Error as exc:  # any driver failure means: not usable
        text = str(exc).strip()
        errors = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("error:")]
        if errors:   # a build failure: the compiler's own errors, not the driver's preamble
            return f"the probe kernel did not build ({'; '.join(dict.fromkeys(errors))[:300]})"
        return f"probe kernel failed: {type(exc).__name__}: {text[:300]}"
    if not np.allclose(out, _PROBE_WANT, rtol=1e-15, atol=0):
        return f"probe kernel computed {out.tolist()}, expected {_PROBE_WANT.tolist()}"
    return None


def _probe(cl: Any, device: Any, held: contextlib.ExitStack) -> np.ndarray:
    """The probe's four values on ``device``, from its cached binary where that loads and
    computes them, else built from source (and then stored)."""
    ctx = cl.Context([device])
    if "keep" in _kept_probe:
        _kept_probe["context"] = (device, ctx)
    queue = cl.CommandQueue(ctx)
    store = probe_store if "keep" in _kept_probe else None
    entry = None if store is None else store[0](device, held, _PROBE_KEY)
    if entry is not None and store is not None:
        prg = store[1](entry, cl, ctx, device)
        if prg is not None:
            out = _run_probe(cl, ctx, queue, prg)
            if np.allclose(out, _PROBE_WANT, rtol=1e-15, atol=0):
                return out
    prg = build_program(cl.Program(ctx, _PROBE_SRC))
    out = _run_probe(cl, ctx, queue, prg)
    if entry is not None and np.allclose(out, _PROBE_WANT, rtol=1e-15, atol=0):
        with contextlib.suppress(Exception):     # not stored: the next process builds it
            entry.write(prg.get_info(cl.program_info.BINARIES)[0])
    return out


def _run_probe(cl: Any, ctx: Any, queue: Any, prg: Any) -> np.ndarray:
    out = np.zeros(4)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    prg.probe(queue, (1,), None, buf, np.float64(1.0))
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    return out


#: where the probe's binary is kept: ``(entry, load)`` of :mod:`daskcl.runtime.diskcache`, which
#: sits above this module and sets it when imported; ``None``: the probe is built from source
probe_store: tuple[Callable[..., Any], Callable[..., Any]] | None = None

#: the probe's key in the disk cache (no program's: those are SHA-256 digests of their parts)
_PROBE_KEY = "fp64-probe-" + hashlib.sha256(_PROBE_SRC.encode()).hexdigest()


def _choose_keeping_context(spec: str | None) -> tuple[DeviceInfo, Any, Any]:
    """:func:`choose`, with the context its passing probe made (``None`` where there is none:
    a probe replaced by a test)."""
    _kept_probe.clear()
    _kept_probe["keep"] = True
    try:
        info, dev = choose(spec)
        kept = _kept_probe.get("context")
    finally:
        _kept_probe.clear()
    return info, dev, kept[1] if kept is not None and kept[0] == dev else None


def matches(info: DeviceInfo, spec: str) -> bool:
    """Whether ``spec`` (``"P:D"`` or a case-insensitive name substring) selects ``info``."""
    spec = spec.strip()
    # indices in ASCII digits: str.isdigit is true of "²", which int refuses (a traceback)
    if ":" in spec and all(part.strip().isascii() and part.strip().isdigit()
                           for part in spec.split(":", 1)):
        p, d = (int(x) for x in spec.split(":", 1))
        return (info.platform_index, info.device_index) == (p, d)
    return spec.lower() in f"{info.platform} {info.name}".lower()


def listing(found: Sequence[tuple[DeviceInfo, Any]]) -> str:
    """The devices of :func:`list_devices`, one clause each, for error messages: each with its
    fp64 verdict as ``daskcl devices`` gives it, the probe's (:func:`probe_fp64`), not only
    what the device advertises: ``fp64=yes (probed)``, ``fp64=no (probe failed)`` or
    ``fp64=no (extension)`` (no ``cl_khr_fp64``)."""
    def verdict(info: DeviceInfo, dev: Any) -> str:
        if not info.fp64:
            return "no (extension)"
        return "yes (probed)" if probe_fp64(dev) is None else "no (probe failed)"

    return "; ".join(f"{i.describe()} fp64={verdict(i, d)}" for i, d in found) or "none"


def choose(spec: str | None = None) -> tuple[DeviceInfo, Any]:
    """The device a process would bind: matching ``spec``, fp64-capable, GPUs first.

    Parameters
    ----------
    spec
        ``"P:D"`` or a name substring; ``None`` reads ``DASKCL_DEVICE`` (unset or empty: any).

    Raises
    ------
    NoPlatformError, NoMatchingDeviceError, NoFp64DeviceError
        With the devices that were found.
    """
    if spec is None:
        spec = config.get("device")
    found = list_devices()
    cands = [(i, d) for i, d in found if spec is None or matches(i, spec)]
    if not cands:
        # a list ("0:0,1:0") is what a node's workers take (daskcl worker --devices): a process
        # binds one device, and the list matched no device's name
        several = (" A process binds one device: a comma-separated list is for the workers of "
                   "a node ('daskcl worker --devices')." if "," in (spec or "") else "")
        raise NoMatchingDeviceError(
            f"no OpenCL device matches {spec!r} (DASKCL_DEVICE, the config key device, or an "
            f"argument; use 'P:D' indices or a name substring).{several} Devices found: "
            f"{listing(found)}"
        )
    cands.sort(key=lambda c: (_TYPE_RANK.get(c[0].type, 3), c[0].platform_index, c[0].device_index))
    why: list[str] = []
    for info, dev in cands:
        if not info.fp64:
            why.append(f"{info.describe()}: no cl_khr_fp64")
            continue
        problem = probe_fp64(dev)
        if problem is None:
            return info, dev
        why.append(f"{info.describe()}: {problem}")
    raise NoFp64DeviceError(
        "no device with working double precision"
        + (f" among those matching {spec!r}" if spec else "")
        + ": " + "; ".join(why)
        + ". daskcl computes in fp64 only; on a CPU-only machine install PoCL "
        "('pip install daskcl[pocl]')."
        + "".join(sorted({remedy(w) for w in why}))
    )


def remedy(problem: str) -> str:
    """What to do about a failed probe (:func:`probe_fp64`'s text), where daskcl knows: ``""``
    or a sentence that starts with a space.  A PoCL whose LLVM predates the CPU fails
    every build with "unknown target CPU 'generic'"."""
    if "unknown target CPU" in problem:
        return (" PoCL's compiler does not know this CPU (its LLVM is older than the CPU): "
                "install a newer PoCL beside it, on Debian and Ubuntu 'apt-get install "
                "pocl-opencl-icd', and daskcl takes it.")
    return ""


@dataclass(eq=False)
class DeviceResources:
    """What the calls of :mod:`daskcl.kernels` keep for one bound device, each made on first
    use and kept while the device is bound."""

    #: the streamed calls' slots (``_transfer._Slot``: a queue with its buffers and staging)
    slots: list[Any] | None = None
    #: the indices of the slots no call holds (``_transfer._take_slots``)
    free_slots: list[int] | None = None
    #: the threads that run the slots' pieces
    slot_threads: Any = None
    #: page-locked host memory (``_transfer.PinnedPool``)
    pinned: Any = None
    #: ``_transfer.Status`` buffers given back, for reuse
    free_status: list[Any] = field(default_factory=list)
    #: the memory pool of results on the device (``pyopencl.tools.MemoryPool``)
    pool: Any = None
    #: a one-element buffer for the pointer parameter of a scalar input
    dummy: Any = None
    #: the identity permutation of a sorted launch too small to sort (``_plan.identity``)
    identity: Any = None
    #: per queue (by id): the scratch buffers of sorted launches and their lock
    sort: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    sort_locks: dict[int, threading.Lock] = field(default_factory=dict)
    #: the counts of calls on device arrays that no wait has read yet (``_launch``)
    pending_counts: dict[Any, list[Any]] = field(default_factory=dict)


class BoundDevice:
    """The device of this process with its OpenCL context and (profiling) command queue.

    Attributes
    ----------
    resources : DeviceResources
        Host and device buffers, queues and threads the calls of :mod:`daskcl.kernels` keep
        for this device (made on first use, kept while the device is bound).
    """

    def __init__(self, info: DeviceInfo, device: Any, context: Any = None) -> None:
        cl = _cl()
        self.info = info
        self.device = device
        self.context = cl.Context([device]) if context is None else context
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        self.resources = DeviceResources()

    @functools.cached_property
    def max_alloc(self) -> int:
        """Bytes of the largest buffer the device allocates (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``)."""
        return int(self.device.max_mem_alloc_size)

    @functools.cached_property
    def nv_compiler_options(self) -> bool:
        """Whether the device takes NVIDIA's ``-cl-nv-*`` build options."""
        return "cl_nv_compiler_options" in str(self.device.extensions).split()

    def __repr__(self) -> str:
        return f"<BoundDevice {self.info.describe()}>"


_lock = threading.Lock()
_bound: BoundDevice | None = None
_bound_spec: str | None = None
#: why :func:`current` must not bind the default device (:func:`refuse_default`)
_refused: str | None = None


def bind(spec: str | None = None) -> BoundDevice:
    """Bind this process to a device (see :func:`choose`) and return it.

    Binding again with the same ``spec`` returns the same device; another ``spec`` rebinds.
    """
    global _bound, _bound_spec, _refused
    _refuse_forked()
    if spec is None:
        spec = config.get("device")
    with _lock:
        if _bound is None or spec != _bound_spec:
            info, dev, context = _choose_keeping_context(spec)
            _bound, _bound_spec = BoundDevice(info, dev, context), spec
        _refused = None
        return _bound


def current() -> BoundDevice:
    """The bound device, binding from ``DASKCL_DEVICE`` on first use (a :class:`DeviceError`
    instead where :func:`refuse_default` said why not)."""
    b = _bound
    if b is not None and _forked_from is None:
        return b
    if _refused is not None:
        raise DeviceError(_refused)
    return bind()


def refuse_default(reason: str) -> None:
    """Until a :func:`bind` succeeds, :func:`current` raises a :class:`DeviceError` saying
    ``reason`` instead of binding the default device: a dask worker whose
    :class:`~daskcl.distributed.DaskclPlugin` could not bind the device it was given (distributed
    starts the worker anyway) fails its tasks rather than run them on another device."""
    global _bound, _bound_spec, _refused
    with _lock:
        _bound, _bound_spec, _refused = None, None, reason


def unbind() -> None:
    """Forget the binding, and a :func:`refuse_default` (the next :func:`current` binds
    again)."""
    global _bound, _bound_spec, _refused
    with _lock:
        _bound, _bound_spec, _refused = None, None, None
