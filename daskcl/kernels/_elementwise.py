# SPDX-License-Identifier: GPL-2.0-or-later
"""Elementwise evaluation of a table row (:class:`daskcl.kernels._table.Fn`) on the bound device.

NumPy broadcasting without materialising broadcast inputs: every array input is copied to the
device as it is (made C-contiguous float64, its own size) and read through its own element
strides over the broadcast shape (stride 0 along broadcast axes); scalars travel as kernel
arguments.  Axes that every input traverses contiguously are collapsed first, so the common
cases run a one-dimensional kernel.  One kernel is generated per (function, number of collapsed
axes) from ``cl/kernels/elementwise.cl`` and built through :mod:`daskcl.runtime.program`.
"""

from __future__ import annotations

import math
import numbers
import re
import string
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import config
from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import ProgramSource, get_library
from ._table import NCLASS, Fn

_SLAB = 1 << 21            # elements per slab of the pipelined path (16 MiB per array)
_staging_lock = threading.Lock()

#: elements per kernel launch on CPU devices (on others: LAUNCH_OTHER).  A larger call is
#: computed in launches of at most this many elements, each finished before the next starts, so
#: the host returns to Python between them and Ctrl-C (KeyboardInterrupt) stops a call within
#: one launch; no launch needs a buffer above the device's maximum allocation either.
LAUNCH_CPU = 1 << 22
LAUNCH_OTHER = 1 << 26

__all__ = [
    "DEFAULT_BINNING", "LAUNCH_CPU", "LAUNCH_OTHER", "Binning", "Elementwise", "Prepared",
    "binning", "collapse_axes", "is_dask_array", "kernel_source", "kernel_text",
    "launch_elements", "max_alloc", "pieces", "prepare",
]

_TEMPLATE_NAME = "elementwise"


@dataclass
class Prepared:
    """Inputs of one call, ready for the kernel."""

    shape: tuple[int, ...]
    #: collapsed axes: sizes, and per input its element strides along them
    dims: tuple[int, ...]
    scalars: list[float | None]           # the value, for scalar inputs
    arrays: list[np.ndarray | None]        # contiguous float64, for array inputs
    strides: list[tuple[int, ...]]         # per input, along ``dims``
    #: further kernel arguments, after the flags (for implementations with ``extra_params``)
    extra: tuple[Any, ...] = ()

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a dask array (checked without importing dask: one can exist only once
    ``dask.array`` is imported)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(x, da.Array)


def _as_input(fn: Fn, name: str, value: Any) -> float | np.ndarray:
    if isinstance(value, numbers.Real) and not isinstance(value, np.ndarray):
        return float(value)
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{fn.name}: argument {name!r} is a masked array; its mask would be lost: "
                        "pass value.filled(np.nan) (NaN in, NaN out) or the unmasked values")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{fn.name}: argument {name!r} must be real numbers, got "
            f"{type(value).__name__}" + (f" of dtype {arr.dtype}" if arr.ndim else "")
        )
    if arr.ndim == 0:
        return float(arr)
    return arr


def collapse_axes(
    shape: tuple[int, ...], strides: list[tuple[int, ...]]
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Drop length-1 axes and merge neighbours that every input steps through contiguously."""
    dims: list[int] = []
    st: list[list[int]] = [[] for _ in strides]
    for ax, n in enumerate(shape):
        if n == 1:
            continue
        if dims and all(s[-1] == src[ax] * n for s, src in zip(st, strides)):
            dims[-1] *= n
            for s, src in zip(st, strides):
                s[-1] = src[ax]
            continue
        dims.append(n)
        for s, src in zip(st, strides):
            s.append(src[ax])
    if not dims:
        return (1,), [(0,) for _ in strides]
    return tuple(dims), [tuple(s) for s in st]


def max_alloc(bound: _device.BoundDevice) -> int:
    """Bytes of the largest buffer the bound device allocates (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``,
    asked once per device).  Tests replace this function to exercise the pieces of large calls."""
    return bound.max_alloc


def launch_elements(bound: _device.BoundDevice) -> int:
    """Elements of float64 one launch computes at most on the bound device: its launch size
    (:data:`LAUNCH_CPU`, :data:`LAUNCH_OTHER`) within its maximum allocation."""
    cap = LAUNCH_CPU if bound.info.type == "CPU" else LAUNCH_OTHER
    return max(1, min(cap, max_alloc(bound) // 8))


def pieces(
    dims: tuple[int, ...], strides: list[tuple[int, ...]], cap: int
) -> Any:
    """Cut the C-order index space ``dims`` into blocks of at most ``cap`` elements.

    Yields ``(start, sub_dims, offsets)``: the block's first flat index, its dimensions (as many
    as ``dims``, leading ones of length 1 where the cut is deeper) and, for each stride vector
    of ``strides``, the offset of the block's first element.  Whole rows of the leading axis
    are taken together where they fit, otherwise each row is cut along the next axis.  A block
    spans at most ``cap`` consecutive elements of any compact array read through ``strides``
    (strides no larger than the C-order strides of ``dims``).
    """
    total = math.prod(dims)
    if total <= cap:
        yield 0, dims, [0] * len(strides)
        return
    inner = math.prod(dims[1:])
    if inner <= cap:
        rows = max(1, cap // inner)
        for a in range(0, dims[0], rows):
            b = min(a + rows, dims[0])
            yield a * inner, (b - a, *dims[1:]), [a * s[0] for s in strides]
        return
    for a in range(dims[0]):
        for start, sub, offs in pieces(dims[1:], [s[1:] for s in strides], cap):
            yield (a * inner + start, (1, *sub),
                   [a * s[0] + o for s, o in zip(strides, offs)])


def span(dims: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements of a compact array that a block ``dims`` reads through ``strides``."""
    return sum((d - 1) * s for d, s in zip(dims, strides)) + 1


def prepare(fn: Fn, args: tuple[Any, ...]) -> Prepared:
    """Check and broadcast the inputs of one call (no device work)."""
    names = fn.arg_names
    vals = [_as_input(fn, n, v) for n, v in zip(names, args)]
    try:
        shape = np.broadcast_shapes(*[v.shape for v in vals if isinstance(v, np.ndarray)])
    except ValueError:
        shapes = ", ".join(
            f"{n} {v.shape}" for n, v in zip(names, vals) if isinstance(v, np.ndarray)
        )
        raise ValueError(f"{fn.name}: the shapes of the arguments do not broadcast: {shapes}") from None
    scalars: list[float | None] = []
    arrays: list[np.ndarray | None] = []
    full_strides: list[tuple[int, ...]] = []
    for v in vals:
        if isinstance(v, np.ndarray):
            a = np.ascontiguousarray(v, dtype=np.float64)
            arrays.append(a)
            scalars.append(None)
            full_strides.append(tuple(s // 8 for s in np.broadcast_to(a, shape).strides))
        else:
            arrays.append(None)
            scalars.append(v)
            full_strides.append((0,) * len(shape))
    dims, strides = collapse_axes(tuple(shape), full_strides)
    return Prepared(tuple(shape), dims, scalars, arrays, strides)


def kernel_text(fn: Fn, ndim: int, extra_params: str = "", binning: Binning | None = None
                ) -> str:
    """The layer-3 source of ``fn``'s kernel for ``ndim`` collapsed axes.

    ``extra_params`` (C text starting with ``", "``) declares kernel parameters after the flags,
    which the row's ``call`` may use (see :class:`Elementwise.extra_params`).  ``binning``
    (rows with ``classify`` only) adds the kernels that sort the elements by class, and the
    computing kernel then takes the sorted order (:meth:`Elementwise.enqueue`); they run only
    with work-groups of exactly ``binning.work_group`` work-items.
    """
    lib = get_library()
    template = string.Template(lib.read(f"kernels/{_TEMPLATE_NAME}.cl"))
    nin = len(fn.args)
    kname = f"ew_{fn.name}"
    shape_params = "".join(f", const long N{k}" for k in range(1, ndim))
    input_params = "".join(
        f",\n                      const int m{j}, const double s{j}, __global const double *restrict p{j}"
        + "".join(f", const long st{j}_{k}" for k in range(ndim))
        for j in range(nin)
    )
    flag_params = "".join(f", const int {c}" for _, c in fn.flags)
    idx = ["    long r_ = i;"] + [f"    long o{j} = 0;" for j in range(nin)]
    for k in range(ndim - 1, 0, -1):
        idx.append(f"    {{ const long k_ = r_ % N{k}; r_ /= N{k};")
        idx += [f"      o{j} += k_ * st{j}_{k};" for j in range(nin)]
        idx.append("    }")
    idx += [f"    o{j} += r_ * st{j}_0;" for j in range(nin)]
    loads = "\n".join(f"    const double a{j} = m{j} ? p{j}[o{j}] : s{j};" for j in range(nin))
    any_nan = " || ".join(f"isnan(a{j})" for j in range(nin))
    nonint = "\n".join(
        f"    if (!isnan(r) && !isnan(a{fn.arg_names.index(a)}) && "
        f"R_nonint(a{fn.arg_names.index(a)})) atomic_inc(status + 1);"
        for a in fn.nonint
    )
    index = "\n".join(idx)
    element = "\n".join([index, loads, f"    const double r = {fn.c_call()};",
                         f"    if (isnan(r) && !({any_nan})) atomic_inc(status);", nonint,
                         "    out[i] = r;"])
    sort_wg = binning.work_group if binning else 0
    if sort_wg and not fn.classify:
        raise ValueError(f"{fn.name}: no class function to group elements by")
    return template.substitute(
        DEPENDS=", ".join(fn.depends), NAME=kname, SHAPE_PARAMS=shape_params,
        INPUT_PARAMS=input_params, FLAG_PARAMS=flag_params, EXTRA_PARAMS=extra_params,
        ELEMENT=_indent(element, 8), SORT=sort_wg, NCLASS=NCLASS,
        SORT_INDEX=_indent(index, 12), SORT_LOADS=_indent(loads, 12),
        CLASS=fn.c_classify() if sort_wg else "0",
    )


def _indent(text: str, n: int) -> str:
    """``text`` with each non-blank line indented by ``n`` spaces instead of its own indent."""
    return "\n".join(" " * n + line.lstrip() for line in text.splitlines() if line.strip())


def kernel_source(
    fn: Fn, ndim: int, names: list[str] | None = None, extra_params: str = "",
    binning: Binning | None = None,
) -> ProgramSource:
    """The assembled program: the minimal subset for ``fn`` (or the units ``names``)."""
    return get_library().program_source(
        fn.depends if names is None else names, kernel_text(fn, ndim, extra_params, binning),
        f"kernels/{_TEMPLATE_NAME}.cl[{fn.name}, {ndim}d"
        + (f", sorted {binning.work_group}]" if binning else "]"),
    )


@dataclass(frozen=True, kw_only=True)
class Binning:
    """Launches sorted by class (``cl/kernels/elementwise.cl``): the elements of a launch are
    counted by class in blocks of ``work_group * elements_per_item``, their indices sorted by
    class, and computed in that order by work-groups of ``work_group``.

    Parameters
    ----------
    work_group : int
        Work-items per work-group of the counting, placing and computing kernels (1 to 1024).
    elements_per_item : int
        Elements each work-item of the counting and placing kernels takes (1 to 1024).
    max_registers : int
        On NVIDIA devices the program is built with at most this many registers per work-item
        (``-cl-nv-maxrregcount``), so that more warps share a multiprocessor; 0: the compiler's
        choice.  Ignored elsewhere.
    """

    work_group: int
    elements_per_item: int = 1
    max_registers: int = 0

    def __post_init__(self) -> None:
        if not (1 <= self.work_group <= 1024 and 1 <= self.elements_per_item <= 1024):
            raise ValueError(f"binning: the work-group size must be 1 to 1024 and the elements "
                             f"per work-item 1 to 1024, not {self.work_group} x "
                             f"{self.elements_per_item}")

    @classmethod
    def parse(cls, text: str) -> Binning:
        """``"WG"``, ``"WGxEPI"`` or ``"WGxEPIrMAXRREG"``."""
        m = re.fullmatch(r"(\d+)(?:x(\d+))?(?:r(\d+))?", text.strip())
        if not m:
            raise ValueError(f"not WGxEPI or WGxEPIrMAXRREG: {text!r}")
        return cls(work_group=int(m.group(1)), elements_per_item=int(m.group(2) or 1),
                   max_registers=int(m.group(3) or 0))

    def options(self, bound: _device.BoundDevice) -> tuple[str, ...]:
        """Build options on ``bound``'s device."""
        if self.max_registers and _nv_compiler_options(bound):
            return (f"-cl-nv-maxrregcount={self.max_registers}",)
        return ()


def _nv_compiler_options(bound: _device.BoundDevice) -> bool:
    """Whether the device takes NVIDIA's ``-cl-nv-*`` build options (asked once per device)."""
    return bound.nv_compiler_options


#: the sorted launch on GPUs (benchmarks/tune_nmath.py, NVIDIA H100 and H200)
DEFAULT_BINNING = Binning(work_group=256, elements_per_item=32, max_registers=64)

#: elements per sorted launch: a larger call is sorted and computed in launches of this size
#: (scratch: 5 bytes per element)
SORT_LAUNCH = 1 << 26


def binning(fn: Fn, device_type: str) -> Binning | None:
    """How ``fn``'s kernel groups elements by class on a device of ``device_type`` (``None``:
    the plain kernel).  On by default for GPUs, where lanes of a warp run in lock-step;
    the config key ``binning`` (``DASKCL_BINNING``) overrides it: ``0`` off, ``1`` on for
    every device (PoCL too), or ``WGxEPIrN`` (:meth:`Binning.parse`) on every device."""
    if not fn.classify:
        return None
    spec = config.get("binning")
    if spec == "0" or (spec == "auto" and device_type != "GPU"):
        return None
    if spec in ("auto", "1"):
        return DEFAULT_BINNING
    return Binning.parse(spec)


class Elementwise:
    """The device implementation of one table row: build on demand, broadcast, launch.

    Subclasses that need per-call device data (a row's ``impl``, e.g. the count tables of
    :mod:`daskcl.kernels._counts`) declare further kernel parameters in ``extra_params`` and fill
    ``Prepared.extra`` with their values in :meth:`prepare`.
    """

    #: C declarations of kernel parameters after the flags (``", __global const double *t"``)
    extra_params: str = ""
    #: further build options (benchmarks/tune_nmath.py tries some)
    options: tuple[str, ...] = ()
    #: work-group size of the plain kernel on GPUs
    gpu_wg: int = 256

    def __init__(self, fn: Fn) -> None:
        self.fn = fn
        self.kernel_name = f"ew_{fn.name}"

    def binning(self) -> Binning | None:
        """How the kernel groups elements by class on the bound device (:func:`binning`)."""
        return binning(self.fn, _device.current().info.type)

    def source(self, ndim: int = 1) -> ProgramSource:
        """The assembled program for inputs of ``ndim`` collapsed axes."""
        return self._source(ndim, self.binning())

    def _source(self, ndim: int, bins: Binning | None) -> ProgramSource:
        """The program for ``ndim`` axes and grouping ``bins`` (subclasses may override it:
        benchmarks/bench_build.py builds the whole library)."""
        return kernel_source(self.fn, ndim, extra_params=self.extra_params, binning=bins)

    def prepare(self, args: tuple[Any, ...]) -> Prepared:
        """Check and broadcast the inputs of one call (:func:`prepare`)."""
        return prepare(self.fn, args)

    def program(self, ndim: int = 1) -> _program.BuiltProgram:
        return self._program(ndim, self.binning())

    def _program(self, ndim: int, bins: Binning | None) -> _program.BuiltProgram:
        extra = bins.options(_device.current()) if bins else ()
        return _program.build(self._source(ndim, bins), self.options + extra)

    def enqueue(
        self, prep: Prepared, buffers: list[Any], out: Any, status: Any,
        flags: dict[str, bool], queue: Any = None, events: list[Any] | None = None,
    ) -> Any:
        """Launch the kernel on device buffers (``buffers[j]`` is None for scalar inputs);
        returns the last event.  A sorted launch (:meth:`binning`) enqueues four kernels per
        :data:`SORT_LAUNCH` elements; ``events``, if given, receives every event in order."""
        import pyopencl as cl

        bound = _device.current()
        queue = queue if queue is not None else bound.queue
        bins = self.binning()
        program = self._program(len(prep.dims), bins)
        kernel, lock = program.kernel(self.kernel_name)
        n = prep.size
        tail: list[Any] = [np.int64(d) for d in prep.dims[1:]]
        for j in range(len(self.fn.args)):
            is_arr = prep.arrays[j] is not None
            tail += [np.int32(is_arr), np.float64(prep.scalars[j] or 0.0), buffers[j]]
            tail += [np.int64(s) for s in prep.strides[j]]
        tail += [np.int32(bool(flags[py])) for py, _ in self.fn.flags]
        tail += list(prep.extra)
        evs = events if events is not None else []
        if not bins:
            local: tuple[int, ...] | None = None
            gsize = n
            if bound.info.type == "GPU":
                local = (self.gpu_wg,)
                gsize = -(-n // self.gpu_wg) * self.gpu_wg
            with lock:
                kernel.set_args(np.int64(n), out, status, *tail)
                evs.append(cl.enqueue_nd_range_kernel(queue, kernel, (gsize,), local))
            return evs[-1]
        mf = cl.mem_flags
        wg, block = bins.work_group, bins.work_group * bins.elements_per_item
        k_class, lock_class = program.kernel(self.kernel_name + "_class")
        k_scan, lock_scan = program.kernel(self.kernel_name + "_scan")
        k_place, lock_place = program.kernel(self.kernel_name + "_place")
        for base in range(0, n, SORT_LAUNCH):
            ln = min(SORT_LAUNCH, n - base)
            nblocks = -(-ln // block)
            cls = cl.Buffer(bound.context, mf.READ_WRITE, ln)
            counts = cl.Buffer(bound.context, mf.READ_WRITE, 4 * NCLASS * nblocks)
            perm = cl.Buffer(bound.context, mf.READ_WRITE, 4 * ln)
            with lock_class:
                k_class.set_args(np.int64(base), np.int32(ln), np.int32(bins.elements_per_item), cls, counts,
                                 np.int32(nblocks), *tail)
                evs.append(cl.enqueue_nd_range_kernel(queue, k_class, (nblocks * wg,), (wg,)))
            with lock_scan:
                k_scan.set_args(np.int32(NCLASS * nblocks), counts)
                evs.append(cl.enqueue_nd_range_kernel(queue, k_scan, (wg,), (wg,)))
            with lock_place:
                k_place.set_args(np.int32(ln), np.int32(bins.elements_per_item), cls, counts,
                                 np.int32(nblocks), perm)
                evs.append(cl.enqueue_nd_range_kernel(queue, k_place, (nblocks * wg,), (wg,)))
            with lock:
                kernel.set_args(np.int64(n), out, status, *tail, np.int64(base), np.int32(ln),
                                perm)
                evs.append(cl.enqueue_nd_range_kernel(queue, kernel, (-(-ln // wg) * wg,), (wg,)))
        return evs[-1]

    def __call__(self, *args: Any, **flags: bool) -> Any:
        flags = {**self.fn.flag_defaults, **flags}
        prep = self.prepare(args)
        if prep.size == 0:
            return np.empty(prep.shape)
        bound = _device.current()
        result = np.empty(prep.shape)
        if _pipelined_device(bound) and _pipelinable(prep):
            counts = self._run_pipelined(bound, prep, flags, result)
        else:
            counts = self._run_direct(bound, prep, flags, result)
        self._warn(counts)
        return result[()] if result.ndim == 0 else result

    def _run_direct(
        self, bound: _device.BoundDevice, prep: Prepared, flags: dict[str, bool], result: np.ndarray
    ) -> np.ndarray:
        """Launches of at most :func:`launch_elements` elements (:func:`pieces`), each finished
        before the next; the whole call in one launch where it fits.  Each launch reads only
        the part of every input array it needs.  On a CPU device the buffers alias the NumPy
        arrays."""
        import pyopencl as cl

        ctx, queue = bound.context, bound.queue
        mf = cl.mem_flags
        cpu = _host_memory(bound)
        host = mf.USE_HOST_PTR if cpu else mf.COPY_HOST_PTR
        flat = result.reshape(-1)
        arrays = [None if a is None else a.reshape(-1) for a in prep.arrays]
        counts = np.zeros(2, dtype=np.int32)
        status = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=counts)
        dev_out = None
        for start, dims, offs in pieces(prep.dims, prep.strides, launch_elements(bound)):
            n = math.prod(dims)
            subs = [None if a is None else a[o: o + span(dims, st)]
                    for a, o, st in zip(arrays, offs, prep.strides)]
            buffers = [None if a is None else cl.Buffer(ctx, mf.READ_ONLY | host, hostbuf=a)
                       for a in subs]
            sub = Prepared(dims, dims, prep.scalars, subs, prep.strides, prep.extra)
            part = flat[start: start + n]
            if cpu:
                out = cl.Buffer(ctx, mf.WRITE_ONLY | mf.USE_HOST_PTR, hostbuf=part)
            else:
                if dev_out is None:
                    dev_out = cl.Buffer(ctx, mf.WRITE_ONLY, min(flat.size, launch_elements(bound)) * 8)
                out = dev_out
            self.enqueue(sub, buffers, out, status, flags, queue)
            if cpu:
                # map to make the device's writes visible in `result` (no copy on CPU devices)
                mapped, _ = cl.enqueue_map_buffer(queue, out, cl.map_flags.READ, 0, (n,),
                                                  result.dtype)
                mapped.base.release()
            else:
                cl.enqueue_copy(queue, part, out)
            queue.finish()
        cl.enqueue_copy(queue, counts, status)
        queue.finish()
        return counts

    def _run_pipelined(
        self, bound: _device.BoundDevice, prep: Prepared, flags: dict[str, bool], result: np.ndarray
    ) -> np.ndarray:
        """Large one-dimensional calls: slabs through pinned staging buffers on two queues, so
        that host copies, transfers to and from the device and the kernel overlap."""
        import pyopencl as cl

        mf = cl.mem_flags
        n = prep.size
        slab = _SLAB
        assert n >= slab
        arrays = [a.reshape(-1) if a is not None and a.size == n else None for a in prep.arrays]
        small = [
            None if (a is None or arrays[j] is not None)
            else cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
            for j, a in enumerate(prep.arrays)
        ]
        flat = result.reshape(-1)
        counts = np.zeros(2, dtype=np.int32)
        status = cl.Buffer(bound.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=counts)
        with _staging_lock:
            stages = [_stage(bound, k, len(arrays), slab) for k in range(2)]
            pending: list[tuple[Any, int, int, Any]] = []
            for k, a in enumerate(range(0, n, slab)):
                b = min(a + slab, n)
                st = stages[k % 2]
                q = st.queue
                if st.busy is not None:      # slab k-2 used this stage: finish it first
                    _finish(pending, flat)
                bufs = []
                for j, arr in enumerate(arrays):
                    if arr is None:
                        bufs.append(small[j])
                        continue
                    np.copyto(st.host_in[j][: b - a], arr[a:b])
                    cl.enqueue_copy(q, st.dev_in[j], st.host_in[j][: b - a], is_blocking=False)
                    bufs.append(st.dev_in[j])
                sub = Prepared((b - a,), (b - a,), prep.scalars, prep.arrays,
                               [(1,) if arrays[j] is not None else prep.strides[j]
                                for j in range(len(arrays))], prep.extra)
                self.enqueue(sub, bufs, st.dev_out, status, flags, q)
                ev = cl.enqueue_copy(q, st.host_out[: b - a], st.dev_out, is_blocking=False)
                st.busy = ev
                pending.append((ev, a, b, st))
            while pending:
                _finish(pending, flat)
            cl.enqueue_copy(bound.queue, counts, status)
            bound.queue.finish()
        return counts

    def _warn(self, counts: np.ndarray) -> None:
        if counts[0]:
            warnings.warn(f"{self.fn.name}: {counts[0]} NaN(s) produced", RuntimeWarning, stacklevel=4)
        if counts[1]:
            warnings.warn(
                f"{self.fn.name}: {counts[1]} non-integer {'/'.join(self.fn.nonint)}",
                RuntimeWarning, stacklevel=4,
            )


def _host_memory(bound: _device.BoundDevice) -> bool:
    """CPU devices compute in the host's memory: their buffers alias the NumPy arrays."""
    return bound.info.type == "CPU"


def _pipelined_device(bound: _device.BoundDevice) -> bool:
    """Devices with their own memory, where transfers are worth overlapping."""
    return bound.info.type != "CPU"


def _pipelinable(prep: Prepared) -> bool:
    """Large calls whose array inputs are full-size and contiguous, or single elements."""
    if prep.size < 2 * _SLAB or len(prep.dims) != 1:
        return False
    return all(a is None or a.size in (1, prep.size) for a in prep.arrays)


@dataclass
class _Stage:
    queue: Any
    host_in: list[np.ndarray]
    dev_in: list[Any]
    host_out: np.ndarray
    dev_out: Any
    keep: list[Any]
    busy: Any = None


def _pinned(bound: _device.BoundDevice, queue: Any, nelem: int) -> tuple[np.ndarray, Any]:
    """A page-locked host array (an ALLOC_HOST_PTR buffer, mapped once and kept mapped)."""
    import pyopencl as cl

    buf = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nelem * 8)
    map_buffer: Any = cl.enqueue_map_buffer  # its stubs reject combined flags and dtypes
    arr, _ = map_buffer(queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                   (nelem,), np.float64, is_blocking=True)
    return arr, buf


def _stage(bound: _device.BoundDevice, k: int, nin: int, slab: int) -> _Stage:
    """Staging set ``k`` of the bound device (made once per process and kept)."""
    import pyopencl as cl

    stages: dict[tuple[int, int], _Stage] = bound.staging
    st = stages.get((k, slab))
    if st is None:
        q = cl.CommandQueue(bound.context)
        out_host, out_pin = _pinned(bound, q, slab)
        st = _Stage(q, [], [], out_host, cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, slab * 8),
                    [out_pin])
        stages[(k, slab)] = st
    while len(st.host_in) < nin:
        h, pin = _pinned(bound, st.queue, slab)
        st.host_in.append(h)
        st.keep.append(pin)
        st.dev_in.append(cl.Buffer(bound.context, cl.mem_flags.READ_ONLY, slab * 8))
    st.busy = None
    return st


def _finish(pending: list[tuple[Any, int, int, Any]], flat: np.ndarray) -> None:
    ev, a, b, st = pending.pop(0)
    ev.wait()
    np.copyto(flat[a:b], st.host_out[: b - a])
    st.busy = None
