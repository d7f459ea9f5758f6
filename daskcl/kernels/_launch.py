# SPDX-License-Identifier: GPL-2.0-or-later
"""The prepared launches of elementwise kernels, their small path from NumPy, their path on
device arrays, and R's counts read where a call waits anyway.

A *prepared launch* (:class:`Prepared`) holds what the calls of one kernel with one signature
need beyond their data: the program, a kernel object of its own with its argument list and
argument types (for launches sorted by class, ``binning``, the class, scan and place kernels
too), the launch shape.  It is made by the first such call and kept while the
configuration (:func:`daskcl.config.stamp`), the bound device and the kernel's library
(a unit tree edited since is read again) are those it was made under; a call then sets only its
buffers, offsets, sizes and scalar values.  The signature of :func:`fast`: which inputs are
scalars, which NumPy or device arrays, all arrays C-contiguous float64 of one shape (nothing
broadcast), the kernel reading no count tables and no counter.  Other calls take the general
path of :mod:`._elementwise`, whose programs are prepared likewise (:func:`prepared`).

* From NumPy, up to :data:`SMALL` elements: one write of the array inputs into a scratch
  buffer of the calling thread, one launch, one read of the result and R's counts together,
  on the thread's queue (:func:`._transfer.thread_queue`); scalars travel as kernel arguments.
* On device arrays: launches of at most the device's launch size, and no wait; the result is
  made from the attributes of the first of its shape, not by pyopencl's constructor.

R's warnings of calls on device arrays (config key ``warnings``, ``DASKCL_WARNINGS``): with
``deferred``, the default, a call on device arrays does not wait for its counts; they add up on
the device, per function, and are read, and R's warnings raised, at the next point that waits
anyway: a call from NumPy or dask data (before its own warnings) or :func:`synchronize`.  A
program that never waits sees none.  With ``immediate`` each call on device arrays waits for
its counts and warns at once, as calls from NumPy always do.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import config
from ..runtime import device as _device
from ..runtime import program as _program
from . import _call, _plan, _transfer
from ._table import NCLASS

__all__ = ["NO", "SMALL", "Prepared", "defer", "deferring", "fast", "prepared", "raise_counts",
           "synchronize", "take_counts"]

#: an elementwise kernel (:class:`._elementwise.ElementwiseKernel`, which calls this module)
ElementwiseKernel = Any

#: elements of a call from NumPy at most that take the small path (one write, one launch, one
#: read through a scratch buffer); larger ones are streamed (:func:`._transfer.stream`)
SMALL = 1 << 16
#: prepared launches kept per kernel (beyond, the cache starts again)
_MAX_PREPARED = 64
#: what :func:`fast` returns for a call it does not take
NO: Any = object()
#: doubles before a scratch buffer's outputs: R's counts (three 32-bit ints) and padding
_HEAD = 2


class Prepared:
    """The program of one variant of a kernel on the bound device, and for a signature of
    :func:`fast` its own kernel object with the argument list filled in but for the data."""

    __slots__ = ("args", "bins", "final", "held", "kernel", "local", "lock", "pending",
                 "program", "slots", "sort")

    def __init__(self, program: _program.BuiltProgram, final: bool) -> None:
        self.program = program
        #: whether the program is the one calls keep (not an out-of-line one tiering up)
        self.final = final
        #: where not final, the key of the inlined program it waits for (``inlined_arrived``)
        self.pending: Any = None
        self.kernel: Any = None
        self.lock = threading.Lock()
        self.args: list[Any] = []
        self.local: tuple[int, ...] | None = None
        #: positions in ``args``: n, status, outputs, ooff, base, then per input (its flag,
        #: scalar, buffer, offset)
        self.slots: tuple[int, ...] = ()
        #: the binning of a sorted launch, and its class, scan and place kernels
        self.bins: Any = None
        self.sort: tuple[Any, ...] = ()
        self.held: tuple[Any, ...] = ()

    def bind(self, k: ElementwiseKernel, variant: Any, kinds: tuple[int, ...], nints: int,
             bound: _device.BoundDevice) -> None:
        """The kernel objects and the argument list of a call of ``kinds`` (per input: 0 a
        scalar, 1 an array) over one contiguous axis, as :meth:`ElementwiseKernel._args`
        gives them; with ``variant``'s binning, the sorted launch's four kernels."""
        import pyopencl as cl

        ndims, bins = variant
        nout = len(k.definition.outputs)
        name, program = k.definition.kernel_name, self.program.program
        self.kernel = cl.Kernel(program, name)
        i64, i32, f64 = np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.float64)
        args: list[Any] = [0, None, *([None] * nout), 0, 0, 1, *([1] * (ndims - 1))]
        types: list[Any] = [i64, None, *([None] * nout), i64, i64, i32, *([i64] * (ndims - 1))]
        inputs = []
        for kind in kinds:
            inputs.append(len(args))
            args += [kind, 0.0, None, 0, kind, *([0] * (ndims - 1))]
            types += [i32, f64, None, i64, *([i64] * ndims)]
        args += [0] * nints
        types += [i32] * nints
        self.slots = tuple(inputs)
        if bins is not None:
            self.bins = bins
            self.sort = tuple(cl.Kernel(program, name + s) for s in ("_class", "_scan", "_place"))
            self.sort[0].set_scalar_arg_dtypes([i32, i32, None, None, i32, i64, *types[4 + nout:]])
            self.sort[1].set_scalar_arg_dtypes([i32, None])
            self.sort[2].set_scalar_arg_dtypes([i32, i32, None, None, i32, None])
            args.append(None)
            types.append(None)
            self.local = (bins.work_group,)
        elif bound.info.type == "GPU":
            self.local = (k.gpu_wg,)
        self.kernel.set_scalar_arg_dtypes(types)
        self.args = args

    def run(self, queue: Any, n: int, status: Any, outs: Sequence[Any], ooff: int, base: int,
            ins: Sequence[tuple[float, Any, int]], ints: Sequence[int],
            bound: _device.BoundDevice) -> Any:
        """Set the call's data (``ins``: per input its scalar, buffer and offset) and enqueue
        the launch of ``n`` elements; its (last kernel's) event."""
        import pyopencl as cl

        gsize = n
        if self.local is not None:
            gsize = -(-n // self.local[0]) * self.local[0]
        nout = len(outs)
        with self.lock:          # the argument list and the kernel's arguments are shared
            args = self.args
            args[0] = n
            args[1] = status
            args[2: 2 + nout] = outs
            args[2 + nout] = ooff
            args[3 + nout] = base
            for at, (scalar, buf, off) in zip(self.slots, ins):
                args[at + 1] = scalar
                args[at + 2] = buf
                args[at + 3] = off
            if ints:
                end = len(args) - (self.bins is not None)
                args[end - len(ints): end] = ints
            if self.bins is not None:
                return self._sorted(bound, queue, n, base, nout)
            self.kernel.set_args(*args)
            return cl.enqueue_nd_range_kernel(queue, self.kernel, (gsize,), self.local)

    def _sorted(self, bound: _device.BoundDevice, queue: Any, n: int, base: int,
                nout: int) -> Any:
        """Enqueue a sorted launch (class, scan, place, compute) of the arguments set, as
        :meth:`ElementwiseKernel._enqueue` does, or for a few elements the computation alone,
        in their order (:data:`._plan.UNSORTED_MAX`); hold ``self.lock``."""
        import pyopencl as cl

        bins, args = self.bins, self.args
        wg, epi = bins.work_group, bins.elements_per_item
        nblocks = -(-n // (wg * epi))
        enqueue = cl.enqueue_nd_range_kernel
        if n <= _plan.UNSORTED_MAX:
            args[-1] = _plan.identity(bound)
            self.kernel.set_args(*args)
            return enqueue(queue, self.kernel, (-(-n // wg) * wg,), (wg,))
        k_class, k_scan, k_place = self.sort
        lock, cls, counts, perm = _plan.sorting(bound, queue, n, nblocks)
        # the scratch buffers are the queue's: another launch on it must not come between
        with lock:
            k_class.set_args(n, epi, cls, counts, nblocks, base, *args[4 + nout: -1])
            k_scan.set_args(NCLASS * nblocks, counts)
            k_place.set_args(n, epi, cls, counts, nblocks, perm)
            # their events kept until the next sorted launch (see ElementwiseKernel._enqueue)
            self.held = (enqueue(queue, k_class, (nblocks * wg,), (wg,)),
                         enqueue(queue, k_scan, (wg,), (wg,)),
                         enqueue(queue, k_place, (nblocks * wg,), (wg,)))
            args[-1] = perm
            self.kernel.set_args(*args)
            return enqueue(queue, self.kernel, (-(-n // wg) * wg,), (wg,))


class _Cache:
    """A kernel's prepared launches and what they were made under: the configuration's stamp,
    the device, the library where it has unit trees (read again once edited); its usual
    variant on the device, and what its calls on device arrays read of the configuration."""

    __slots__ = ("arrays", "bound", "by_key", "cap", "cpu", "defer", "dummy", "fast", "launch",
                 "lib", "pool", "stamp", "variant")

    def __init__(self, k: ElementwiseKernel, stamp: Any, bound: Any) -> None:
        lib = k.library
        self.stamp, self.bound, self.lib = stamp, bound, lib if lib.trees else None
        self.variant = k._variant(1)
        self.by_key: dict[Any, Prepared] = {}
        #: the prepared launches of :func:`fast`'s signatures of the usual variant
        self.fast: dict[Any, Prepared] = {}
        self.defer = deferring()
        #: elements of one launch at most, and of one on device arrays (sorted or not)
        self.launch = self.cap = _plan.launch_elements(bound)
        if self.variant[1] is not None:
            self.cap = min(self.cap, _plan.SORT_LAUNCH)
        #: whether the device is a CPU (where host arrays are read in place)
        self.cpu = bound.info.type == "CPU"
        self.pool = _transfer.device_pool(bound)
        self.dummy = _plan.dummy(bound)
        #: shape -> the attributes of a result of that shape (:func:`_result`)
        self.arrays: dict[tuple[int, ...], dict[str, Any]] = {}


_cache_lock = threading.Lock()


def _cache(k: ElementwiseKernel, bound: _device.BoundDevice) -> _Cache:
    """``k``'s prepared launches, started again where the configuration, the device, the
    launch sizes or a unit tree of its library changed, or the programs in memory were
    forgotten."""
    c: _Cache | None = k.__dict__.get("_prepared")
    stamp = (config.stamp(), _program.memory_generation(), _plan.LAUNCH_CPU,
             _plan.LAUNCH_OTHER, _plan.SORT_LAUNCH, _plan.max_alloc)
    if c is None or c.stamp != stamp or c.bound is not bound or (
            c.lib is not None and k.library is not c.lib):
        c = k.__dict__["_prepared"] = _Cache(k, stamp, bound)
    return c


def prepared(k: ElementwiseKernel, variant: Any, key: Any = None,
             c: _Cache | None = None) -> Prepared:
    """The prepared launch of ``k``'s program ``variant`` on the bound device (``key``: a
    signature of :func:`fast`, ``(kinds, ints)``, else the program alone)."""
    bound = _device.current()
    if c is None:
        c = _cache(k, bound)
    full = (variant, key)
    hit = c.by_key.get(full)
    if hit is not None and hit.final:
        return hit
    program = k.program(variant)
    if hit is not None and hit.program is program:
        return hit
    tiering = k.tier_up and _program.noinline_mode(bound.info.type) == "tiered"
    final = not tiering or program is _program.in_memory(
        k.source(variant), k.build_options(variant), inlined=True)
    prep = Prepared(program, final)
    if not final:
        prep.pending = _program.inlined_key(k.source(variant), k.build_options(variant))
    if key is not None:
        kinds, nints = key
        prep.bind(k, variant, kinds, nints, bound)
    with _cache_lock:
        if len(c.by_key) >= _MAX_PREPARED:
            c.by_key.clear()
        c.by_key[full] = prep
    return prep


# -- the fast path -----------------------------------------------------------------------------


def fast(k: ElementwiseKernel, inputs: Sequence[Any], ints: Sequence[int]) -> Any:
    """The outputs (a list) of a call that fits a prepared launch (see the module), else
    :data:`NO`."""
    if not k._fast_kind:
        return NO
    kinds, shape, where = _kinds(inputs)
    if where is None or (shape and len(kinds) != k._fast_kind):
        return NO
    n = math.prod(shape) if shape else 1
    if n == 0 or (where == "host" and n > SMALL):
        return NO
    bound = _device.current()
    c = _cache(k, bound)
    if where == "device":
        ctx, cs = bound.context, _c_strides8(shape)
        for v, kind in zip(inputs, kinds):
            if kind and ((v.context is not ctx and v.context != ctx)
                         or (v.strides != cs and not v.flags.c_contiguous)):
                return NO        # the general path says why, or handles the strides
    elif n > 1 and (n * (2 + len(kinds)) > c.launch
                    or (c.cpu and n > _plan.cost_cap(k, bound))
                    or (_transfer.mode(bound) != "host"
                        and (n > _transfer.SLAB or 8 * n > _plan.RESIDENT_BYTES))):
        return NO                # in pieces, or streamed: the general path
    key = (tuple(kinds), len(ints))
    prep = c.fast.get(key)
    if prep is None or (not prep.final and _program.inlined_arrived(prep.pending)):
        prep = c.fast[key] = prepared(k, c.variant, key, c)
    if where == "device":
        outs = _on_device(k, c, prep, inputs, kinds, ints, shape, n, bound)
    else:
        outs = _small(k, prep, inputs, kinds, ints, shape, n, bound)
    if k._tier_later:
        k._tier_up()
    return outs


def _kinds(inputs: Sequence[Any]) -> tuple[list[int], tuple[int, ...], str | None]:
    """Per input 0 (a scalar) or 1 (an array), the arrays' common shape, and where they are:
    ``"host"`` (NumPy or scalars only), ``"device"``, or ``None`` where :func:`fast` does not
    take the call (a dtype, layout or mix of shapes or places that needs the general path)."""
    cla = sys.modules.get("pyopencl.array")
    array_type = cla.Array if cla is not None else None
    shape: tuple[int, ...] | None = None
    host = dev = False
    kinds = []
    for v in inputs:
        t = type(v)
        if t is float or t is np.float64 or (t is int and -2**53 <= v <= 2**53):
            kinds.append(0)
            continue
        if t is np.ndarray:
            if v.dtype != np.float64 or not v.flags.c_contiguous:
                return kinds, (), None
            host = True
        elif t is array_type:
            if v.dtype != np.float64 or v.offset % 8:
                return kinds, (), None
            dev = True
        else:
            return kinds, (), None
        if shape is None:
            shape = v.shape
            if not shape:
                return kinds, (), None
        elif v.shape != shape:
            return kinds, (), None
        kinds.append(1)
    if host and dev:
        return kinds, (), None
    return kinds, shape or (), "device" if dev else "host"


#: shape -> the byte strides of a C-contiguous float64 array of that shape
_STRIDES: dict[tuple[int, ...], tuple[int, ...]] = {}


def _c_strides8(shape: tuple[int, ...]) -> tuple[int, ...]:
    cs = _STRIDES.get(shape)
    if cs is None:
        cs = tuple(8 * math.prod(shape[a + 1:]) for a in range(len(shape)))
        if len(_STRIDES) < 256:
            _STRIDES[shape] = cs
    return cs


class _Scratch:
    """A thread's buffer of small calls: R's counts, the outputs, the array inputs; and the
    device's buffer for the pointer of a scalar input."""

    def __init__(self, bound: _device.BoundDevice, size: int) -> None:
        import pyopencl as cl

        self.bound = bound
        self.size = size
        self.buffer = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, size * 8)
        #: the thread's queue (the scratch is the thread's: its calls wait for their own work)
        self.queue = _transfer.thread_queue(bound)
        zero = np.zeros(_HEAD, dtype=np.float64)
        cl.enqueue_copy(self.queue, self.buffer, zero, is_blocking=True)
        #: the raw counts at the last reading (the kernels add to them, never reset)
        self.head = zero.tobytes()
        self.dummy = _plan.dummy(bound)

    def counts(self, head: np.ndarray) -> np.ndarray:
        """The counts since the last reading, from the raw head of the buffer."""
        raw = head.view(np.uint32)[: _transfer.STATUS_COUNTS]
        base = np.frombuffer(self.head, dtype=np.uint32)[: _transfer.STATUS_COUNTS]
        self.head = head.tobytes()
        # the kernels add with 32-bit atomics, which wrap: the difference modulo 2^32
        counts: np.ndarray = (raw - base).view(np.int32)
        return counts


_local = threading.local()


def _scratch(bound: _device.BoundDevice, size: int) -> _Scratch:
    s: _Scratch | None = getattr(_local, "scratch", None)
    if s is None or s.bound is not bound or s.size < size:
        s = _local.scratch = _Scratch(bound, max(size, 2 * s.size if s is not None
                                                 and s.bound is bound else 256))
    return s


def _small(k: ElementwiseKernel, prep: Prepared, inputs: Sequence[Any], kinds: list[int],
           ints: Sequence[int], shape: tuple[int, ...], n: int,
           bound: _device.BoundDevice) -> list[Any]:
    """From NumPy: one write, one launch, one read (R's counts with the result)."""
    import pyopencl as cl

    s = getattr(_local, "scratch", None)
    if s is None or s.bound is not bound or s.size < _HEAD + n * (1 + len(kinds)):
        s = _scratch(bound, _HEAD + n * (1 + len(kinds)))
    buf, queue, dummy = s.buffer, s.queue, s.dummy
    ins, at, arrays = [], _HEAD + n, []
    for v, kind in zip(inputs, kinds):
        if kind:
            ins.append((0.0, buf, at))
            arrays.append(v)
            at += n
        else:
            ins.append((float(v), dummy, 0))
    src = None
    if arrays:
        src = arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis=None)
        cl.enqueue_copy(queue, buf, src, dst_offset=(_HEAD + n) * 8, is_blocking=False)
    t0 = time.perf_counter()
    prep.run(queue, n, buf, (buf,), _HEAD, 0, ins, ints, bound)
    earlier = take_counts(bound) if bound.resources.pending_counts else None
    raw = np.empty(_HEAD + n)
    cl.enqueue_copy(queue, raw, buf, is_blocking=True)
    _plan.record_cost(k, bound, n, time.perf_counter() - t0)
    del src
    if earlier:
        raise_counts(earlier)
    head = raw[:_HEAD]
    if head.tobytes() != s.head:
        k.warn(s.counts(head))
    out = raw[_HEAD:]
    return [out[0] if not shape else out.reshape(shape)]


class _OwnEvents(list):  # type: ignore[type-arg]
    """The events of a result of :func:`_on_device`: its launch's, on the device's queue."""

    __slots__ = ()


def _result(c: _Cache, shape: tuple[int, ...], n: int) -> Any:
    """A new float64 device array of ``shape`` (``n`` elements) from the device's pool: made
    from the attributes of the first one of that shape, but its buffer and events, not by
    pyopencl's constructor (whose checks cost more than the launch)."""
    import pyopencl.array as cla

    attrs = c.arrays.get(shape)
    if attrs is None:
        out = cla.empty(c.bound.queue, shape, np.float64, allocator=c.pool)
        if len(c.arrays) >= 64:
            c.arrays.clear()
        c.arrays[shape] = {**vars(out), "base_data": None, "events": None}
        return out
    out = object.__new__(cla.Array)
    out.__dict__.update(attrs)
    out.base_data = c.pool(n * 8)
    return out


def _on_device(k: ElementwiseKernel, c: _Cache, prep: Prepared, inputs: Sequence[Any],
               kinds: list[int], ints: Sequence[int], shape: tuple[int, ...], n: int,
               bound: _device.BoundDevice) -> list[Any]:
    """Device arrays in and out: the launches, and R's counts as ``warnings`` says."""
    out = _result(c, shape, n)
    for v, kind in zip(inputs, kinds):
        # work on other queues that an input waits on (not the launches of this module)
        ev = v.events if kind else None
        if ev and (type(ev) is not _OwnEvents or len(ev) > 1):
            _transfer.after_other_queues(bound.queue, [v])
    if c.defer:
        name = getattr(_call._called_as, "name", None) or k.name
        with _pending_lock:
            entry = bound.resources.pending_counts.get((id(k), name))
            if entry is None:
                entry = _pending_entry(bound, k, name)
            out.events = _OwnEvents((_launches(prep, c, bound, inputs, kinds, ints, n, out,
                                               entry[2].buffer),))
    else:
        status = _transfer.status_buffer(bound)
        out.events = _OwnEvents((_launches(prep, c, bound, inputs, kinds, ints, n, out,
                                           status.buffer),))
        counts = status.read(bound.queue)
        _transfer.release_status(bound, status)
        k.warn(counts)
    return [out]


def _launches(prep: Prepared, c: _Cache, bound: _device.BoundDevice, inputs: Sequence[Any],
              kinds: list[int], ints: Sequence[int], n: int, out: Any, status: Any) -> Any:
    """The launches of a call on device arrays (each of at most ``c.cap`` elements); the last
    one's event."""
    import pyopencl as cl

    cap, dummy, queue, outs = c.cap, c.dummy, bound.queue, (out.base_data,)
    for attempt in (0, 1):
        try:
            event = None
            for start in range(0, n, cap):
                ins = [(0.0, v.base_data, (v.offset >> 3) + start) if kind else
                       (float(v), dummy, 0) for v, kind in zip(inputs, kinds)]
                event = prep.run(queue, min(cap, n - start), status, outs,
                                 (out.offset >> 3) + start, start, ins, ints, bound)
            return event
        except cl.MemoryError:
            # the pool's allocations are deferred (see device_pool): a full device shows at
            # the first launch; the blocks the pool keeps for reuse go back to the device, once
            if attempt or not c.pool.held_blocks:
                raise
            c.pool.free_held()
    raise AssertionError("unreachable")


# -- R's counts of calls on device arrays ------------------------------------------------------


_pending_lock = threading.Lock()


def _pending(bound: _device.BoundDevice) -> dict[Any, list[Any]]:
    """(kernel, name) -> [kernel, name, Status]: the counts of calls on device arrays that no
    wait has read yet."""
    return bound.resources.pending_counts


def _pending_entry(bound: _device.BoundDevice, k: Any, name: str) -> list[Any]:
    """The entry the launches of ``k`` (warning as ``name``) count into; hold
    ``_pending_lock`` until they are enqueued."""
    pend = _pending(bound)
    entry = pend.get((id(k), name))
    if entry is None:
        entry = pend[(id(k), name)] = [k, name, _transfer.status_buffer(bound)]
    return entry


def defer(bound: _device.BoundDevice, k: Any, enqueue: Any) -> Any:
    """Run ``enqueue(status)`` (the launches of a call of ``k`` on device arrays) with the
    :class:`~._transfer.Status` its counts add up in until a wait reads them; what it
    returns."""
    with _pending_lock:
        entry = _pending_entry(bound, k, _call.warning_name(k.name))
        return enqueue(entry[2])


def deferring() -> bool:
    """Whether calls on device arrays leave their counts to the next wait (config key
    ``warnings``)."""
    return bool(config.get("warnings") != "immediate")


def take_counts(bound: _device.BoundDevice) -> list[Any]:
    """The counts left by calls on device arrays, their reads enqueued on the device's queue
    (behind those calls' launches) without waiting; :func:`raise_counts` waits for them and
    warns."""
    pend = bound.resources.pending_counts
    if not pend:
        return []
    with _pending_lock:
        entries = list(pend.values())
        pend.clear()
        for entry in entries:
            entry[2].read_later(bound.queue)
    return [(bound, *entry) for entry in entries]


def raise_counts(taken: list[Any]) -> None:
    """R's warnings of :func:`take_counts`'s counts, each named by the function called."""
    for bound, k, name, status in taken:
        counts = status.read(bound.queue)
        _transfer.release_status(bound, status)
        # the name of the call that counted, whatever call waits now
        before = _call.called_name()
        _call._called_as.name = name
        try:
            k.warn(counts)
        finally:
            _call._called_as.name = before


def synchronize(*arrays: Any) -> Any:
    """Wait for the work daskcl enqueued on the bound device and raise R's warnings of the
    calls on device arrays that no wait has read yet.

    By default (config key ``warnings``, ``DASKCL_WARNINGS``, ``deferred``) a call on device
    arrays does not wait for R's counts (NaNs produced, non-integer arguments): they add up on
    the device, per function, and its warnings are raised at the next point that waits anyway:
    a call from NumPy or dask data (before that call's own warnings) or this function.  With
    ``warnings="immediate"`` each call on device arrays waits and warns at once.  Calls from
    NumPy or dask data always warn when they return.

    Parameters
    ----------
    *arrays : pyopencl.array.Array
        Device arrays to read to the host once the work is done.

    Returns
    -------
    None, numpy.ndarray or tuple of numpy.ndarray
        Nothing without ``arrays``; else their values on the host (one array, or a tuple).

    Examples
    --------
    >>> import warnings, numpy as np, pyopencl.array as cla
    >>> import daskcl
    >>> from daskcl import nmath
    >>> q = daskcl.runtime.device.current().queue
    >>> y = nmath.qnorm(cla.to_device(q, np.array([0.5, 2.0])))    # no warning yet
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     values = daskcl.synchronize(y)
    >>> values, [str(w.message) for w in seen]
    (array([ 0., nan]), ['qnorm: 1 NaN(s) produced'])
    """
    bound = _device._bound
    if bound is None:
        if arrays:
            raise ValueError("synchronize: no device is bound, so no device array of daskcl's "
                             "exists to read")
        return None
    taken = take_counts(bound)
    bound.queue.finish()
    raise_counts(taken)
    if not arrays:
        return None
    values = tuple(np.asarray(a.get()) for a in arrays)
    return values[0] if len(values) == 1 else values
