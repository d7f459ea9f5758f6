# SPDX-License-Identifier: GPL-2.0-or-later
"""The prepared launches of elementwise kernels, their small path from NumPy, their path on
device arrays, and R's counts read where a call waits anyway.

A *prepared launch* (:class:`Prepared`) holds what the calls of one kernel with one signature
need beyond their data: the program, a kernel object of its own with its argument list and
argument types, the launch shape.  It is made by the first such call and kept while the
configuration (:func:`daskcl.config.stamp`), the bound device and the kernel's library
(a unit tree edited since is read again) are those it was made under; a call then sets only its
buffers, offsets, sizes and scalar values.  The signature of :func:`fast`: which inputs are
scalars, which NumPy or device arrays, all arrays C-contiguous float64 of one shape (nothing
broadcast), the kernel reading no count tables and no counter.  Other calls take the general
path of :mod:`._elementwise`, whose programs are prepared likewise (:func:`prepared`).

* From NumPy, up to :data:`SMALL` elements: one write of the array inputs into a scratch
  buffer of the calling thread, one launch, one read of the result and R's counts together;
  scalars travel as kernel arguments.
* On device arrays: launches of at most the device's launch size, and no wait.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import config
from ..runtime import device as _device
from ..runtime import program as _program
from . import _elementwise as _ew
from . import _transfer

if TYPE_CHECKING:
    from ._elementwise import ElementwiseKernel

__all__ = ["FIRST_PER_UNIT", "NO", "PIECE_SECONDS", "SMALL", "Prepared", "cost_cap", "defer",
           "deferring", "fast", "prepared", "raise_counts", "record_cost", "synchronize",
           "take_counts"]

#: elements of a call from NumPy at most that take the small path (one write, one launch, one
#: read through a scratch buffer); larger ones are streamed (:func:`._transfer.stream`)
SMALL = 1 << 14
#: prepared launches kept per kernel (beyond, the cache starts again)
_MAX_PREPARED = 64
#: what :func:`fast` returns for a call it does not take
NO: Any = object()
#: doubles before a scratch buffer's outputs: R's counts (three 32-bit ints) and padding
_HEAD = 2
#: seconds a launch of a call from NumPy on a CPU device lasts at most, about (from the
#: kernel's measured cost per element), so that Ctrl-C stops a call of a costly function soon
PIECE_SECONDS = 0.1
#: elements per compute unit of a kernel's first launch on a CPU device, before its cost is
#: measured (a launch has at least one element per compute unit)
FIRST_PER_UNIT = 4
#: a launch that took at least this long measures the cost per element (a shorter one is
#: mostly the launch's own cost: it can only lower the estimate)
_MEASURED = 1e-3


class Prepared:
    """The program of one variant of a kernel on the bound device, and for a signature of
    :func:`fast` its own kernel object with the argument list filled in but for the data."""

    __slots__ = ("args", "final", "kernel", "local", "lock", "program", "slots")

    def __init__(self, program: _program.BuiltProgram, final: bool) -> None:
        self.program = program
        #: whether the program is the one calls keep (not an out-of-line one tiering up)
        self.final = final
        self.kernel: Any = None
        self.lock = threading.Lock()
        self.args: list[Any] = []
        self.local: tuple[int, ...] | None = None
        #: positions in ``args``: n, status, outputs, ooff, base, then per input (its flag,
        #: scalar, buffer, offset)
        self.slots: tuple[int, ...] = ()

    def bind(self, k: ElementwiseKernel, ndims: int, kinds: tuple[int, ...], nints: int,
             bound: _device.BoundDevice) -> None:
        """The kernel object and the argument list of a call of ``kinds`` (per input: 0 a
        scalar, 1 an array) over one contiguous axis, as :meth:`ElementwiseKernel._args`
        gives them."""
        import pyopencl as cl

        nout = len(k.definition.outputs)
        self.kernel = cl.Kernel(self.program.program, k.definition.kernel_name)
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
        self.kernel.set_scalar_arg_dtypes(types)
        self.args = args
        self.slots = tuple(inputs)
        if bound.info.type == "GPU":
            self.local = (k.gpu_wg,)

    def run(self, queue: Any, n: int, status: Any, outs: Sequence[Any], ooff: int, base: int,
            ins: Sequence[tuple[float, Any, int]], ints: Sequence[int]) -> Any:
        """Set the call's data (``ins``: per input its scalar, buffer and offset) and enqueue
        the launch of ``n`` elements; its event."""
        import pyopencl as cl

        args = self.args
        args[0] = n
        args[1] = status
        nout = len(outs)
        args[2: 2 + nout] = outs
        args[2 + nout] = ooff
        args[3 + nout] = base
        for at, (scalar, buf, off) in zip(self.slots, ins):
            args[at + 1] = scalar
            args[at + 2] = buf
            args[at + 3] = off
        if ints:
            args[len(args) - len(ints):] = ints
        gsize = n
        if self.local is not None:
            gsize = -(-n // self.local[0]) * self.local[0]
        with self.lock:
            self.kernel.set_args(*args)
            return cl.enqueue_nd_range_kernel(queue, self.kernel, (gsize,), self.local)


class _Cache:
    """A kernel's prepared launches and what they were made under."""

    __slots__ = ("bound", "by_key", "lib", "stamp")

    def __init__(self, stamp: Any, bound: Any, lib: Any) -> None:
        self.stamp, self.bound, self.lib = stamp, bound, lib
        self.by_key: dict[Any, Prepared] = {}


_cache_lock = threading.Lock()


def _cache(k: ElementwiseKernel, bound: _device.BoundDevice) -> _Cache:
    """``k``'s prepared launches, started again where the configuration, the device or a unit
    tree of its library changed."""
    c: _Cache | None = k.__dict__.get("_prepared")
    stamp = config.stamp()
    if c is not None and c.stamp == stamp and c.bound is bound and (
            c.lib is None or k.library is c.lib):
        return c
    lib = k.library
    c = _Cache(stamp, bound, lib if lib.trees else None)
    k.__dict__["_prepared"] = c
    return c


def prepared(k: ElementwiseKernel, variant: Any, key: Any = None) -> Prepared:
    """The prepared launch of ``k``'s program ``variant`` on the bound device (``key``: a
    signature of :func:`fast`, else the program alone)."""
    bound = _device.current()
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
    if key is not None:
        ndims, kinds, nints = key
        prep.bind(k, ndims, kinds, nints, bound)
    with _cache_lock:
        if len(c.by_key) >= _MAX_PREPARED:
            c.by_key.clear()
        c.by_key[full] = prep
    return prep


# -- launches sized by their cost ---------------------------------------------------------------


def cost_cap(k: Any, bound: _device.BoundDevice) -> int:
    """Elements of one launch of ``k`` on ``bound`` that last about :data:`PIECE_SECONDS` by
    its measured cost (:func:`record_cost`), at least one per compute unit;
    :data:`FIRST_PER_UNIT` per compute unit before any measurement."""
    units = max(1, bound.info.compute_units)
    cost = k.__dict__.get("_cost")
    if cost is None or cost[0] is not bound:
        return FIRST_PER_UNIT * units
    return max(units, int(PIECE_SECONDS / cost[1]))


def record_cost(k: Any, bound: _device.BoundDevice, n: int, seconds: float) -> None:
    """A launch of ``n`` elements of ``k`` took ``seconds``: the seconds per element, where it
    was long enough to measure them or it lowers the estimate (a short launch is an upper
    bound: mostly its own cost)."""
    if n <= 0:
        return
    per = max(seconds, 1e-7) / n
    cost = k.__dict__.get("_cost")
    if cost is None or cost[0] is not bound or seconds >= _MEASURED or per < cost[1]:
        k.__dict__["_cost"] = (bound, per)


# -- the fast path -----------------------------------------------------------------------------


def fast(k: ElementwiseKernel, inputs: Sequence[Any], ints: Sequence[int]) -> Any:
    """The outputs (a list) of a call that fits a prepared launch (see the module), else
    :data:`NO`."""
    d = k.definition
    if d.tables or d.strided or len(inputs) != len(d.inputs) or len(d.outputs) != 1:
        return NO
    cla = sys.modules.get("pyopencl.array")
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
                return NO
            host = True
        elif cla is not None and t is cla.Array:
            if v.dtype != np.float64 or not v.flags.c_contiguous or v.offset % 8:
                return NO
            dev = True
        else:
            return NO
        if shape is None:
            shape = v.shape
        elif v.shape != shape:
            return NO
        kinds.append(1)
    if shape is None:
        shape = ()
    elif not shape or (host and dev):
        return NO
    n = math.prod(shape)
    if n == 0 or (not dev and n > SMALL):
        return NO
    bound = _device.current()
    if not dev and (n > _ew.launch_elements(bound)
                    or 8 * (_HEAD + n * (1 + sum(kinds))) > _ew.max_alloc(bound)
                    or (bound.info.type == "CPU" and n > cost_cap(k, bound))):
        return NO            # pieces: the general path
    if dev and any(t and v.context != bound.context for t, v in zip(kinds, inputs)):
        return NO            # the general path says why
    ndims, bins = k._variant(1)
    if bins is not None:
        return NO
    prep = prepared(k, (ndims, bins), (ndims, tuple(kinds), len(ints)))
    if dev:
        outs = _on_device(k, prep, inputs, kinds, ints, shape, n, bound)
    else:
        outs = _small(k, prep, inputs, kinds, ints, shape, n, bound)
    if k._tier_later:
        k._tier_up()
    return outs


class _Scratch:
    """A thread's buffer of small calls: R's counts, the outputs, the array inputs."""

    def __init__(self, bound: _device.BoundDevice, size: int) -> None:
        import pyopencl as cl

        self.bound = bound
        self.size = size
        self.buffer = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, size * 8)
        self._zero = np.zeros(_HEAD, dtype=np.float64)
        cl.enqueue_copy(bound.queue, self.buffer, self._zero, is_blocking=True)
        self.base = np.zeros(_transfer.STATUS_COUNTS, dtype=np.uint32)

    def counts(self, head: np.ndarray) -> np.ndarray:
        """The counts since the last reading from the raw head of the buffer."""
        raw = head.view(np.uint32)[: _transfer.STATUS_COUNTS]
        # the kernels add with 32-bit atomics, which wrap: the difference modulo 2^32
        counts: np.ndarray = (raw - self.base).view(np.int32)
        self.base = raw.copy()
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

    dummy = _ew._dummy(bound)
    arrays = [v for v, kind in zip(inputs, kinds) if kind]
    s = _scratch(bound, _HEAD + n * (1 + len(arrays)))
    buf, queue = s.buffer, bound.queue
    ins, at = [], _HEAD + n
    for v, kind in zip(inputs, kinds):
        if kind:
            ins.append((0.0, buf, at))
            at += n
        else:
            ins.append((float(v), dummy, 0))
    src = None
    if arrays:
        src = arrays[0] if len(arrays) == 1 else np.concatenate([a.reshape(-1) for a in arrays])
        cl.enqueue_copy(queue, buf, src, dst_offset=(_HEAD + n) * 8, is_blocking=False)
    t0 = time.perf_counter()
    prep.run(queue, n, buf, (buf,), _HEAD, 0, ins, ints)
    earlier = take_counts(bound)
    raw = np.empty(_HEAD + n)
    cl.enqueue_copy(queue, raw, buf, is_blocking=True)
    record_cost(k, bound, n, time.perf_counter() - t0)
    del src
    counts = s.counts(raw[:_HEAD])
    raise_counts(earlier)
    k.warn(counts)
    out = raw[_HEAD:]
    return [out[0] if not shape else out.reshape(shape)]


def _on_device(k: ElementwiseKernel, prep: Prepared, inputs: Sequence[Any], kinds: list[int],
               ints: Sequence[int], shape: tuple[int, ...], n: int,
               bound: _device.BoundDevice) -> list[Any]:
    """Device arrays in and out: the launches, and R's counts as ``warnings`` says."""
    import pyopencl as cl
    import pyopencl.array as cla

    queue = bound.queue
    dummy = _ew._dummy(bound)
    pool = _transfer.device_pool(bound)
    out = cla.empty(queue, shape, np.float64, allocator=pool)
    _transfer.after_other_queues(queue, [v for v, kind in zip(inputs, kinds) if kind])
    cap = _ew.launch_elements(bound)

    def launches(status: Any) -> Any:
        event = None
        for start in range(0, n, cap):
            ins = [(0.0, v.base_data, v.offset // 8 + start) if kind else
                   (float(v), dummy, 0) for v, kind in zip(inputs, kinds)]
            event = prep.run(queue, min(cap, n - start), status, (out.base_data,),
                             out.offset // 8 + start, start, ins, ints)
        return event

    def launched(status: Any) -> Any:
        try:
            return launches(status)
        except cl.MemoryError:
            # the pool's allocations are deferred (see device_pool): a full device shows at
            # the first launch; the blocks the pool keeps for reuse go back to the device, once
            if not pool.held_blocks:
                raise
            pool.free_held()
            return launches(status)

    if deferring():
        out.add_event(defer(bound, k, lambda status: launched(status.buffer)))
    else:
        status = _transfer.status_buffer(bound)
        out.add_event(launched(status.buffer))
        counts = status.read(queue)
        _transfer.release_status(bound, status)
        k.warn(counts)
    return [out]


# -- R's counts of calls on device arrays ------------------------------------------------------


_pending_lock = threading.Lock()


def _pending(bound: _device.BoundDevice) -> dict[Any, list[Any]]:
    """(kernel, name) -> [kernel, name, Status]: the counts of calls on device arrays that no
    wait has read yet."""
    pend: dict[Any, list[Any]] = bound.staging.setdefault(("pending_counts", 0), {})
    return pend


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
        entry = _pending_entry(bound, k, _ew.warning_name(k.name))
        return enqueue(entry[2])


def deferring() -> bool:
    """Whether calls on device arrays leave their counts to the next wait (config key
    ``warnings``)."""
    return bool(config.get("warnings") != "immediate")


def take_counts(bound: _device.BoundDevice) -> list[Any]:
    """The counts left by calls on device arrays, their reads enqueued on the device's queue
    (behind those calls' launches) without waiting; :func:`raise_counts` waits for them and
    warns."""
    pend = bound.staging.get(("pending_counts", 0))
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
        before = getattr(_ew._called_as, "name", None)
        _ew._called_as.name = name
        try:
            k.warn(counts)
        finally:
            _ew._called_as.name = before


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
