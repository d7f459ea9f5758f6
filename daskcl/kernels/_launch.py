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

__all__ = ["FIRST_PER_UNIT", "GROWTH", "NO", "PIECE_SECONDS", "SMALL", "Prepared", "cost_cap", "defer",
           "deferring", "fast", "prepared", "raise_counts", "record_cost", "synchronize",
           "take_counts"]

#: elements of a call from NumPy at most that take the small path (one write, one launch, one
#: read through a scratch buffer); larger ones are streamed (:func:`._transfer.stream`)
SMALL = 1 << 16
#: prepared launches kept per kernel (beyond, the cache starts again)
_MAX_PREPARED = 64
#: what :func:`fast` returns for a call it does not take
NO: Any = object()
#: doubles before a scratch buffer's outputs: R's counts (three 32-bit ints) and padding
_HEAD = 2
#: seconds a launch of a call from NumPy on a CPU device lasts at most, about (from the
#: kernel's measured pace), so that Ctrl-C stops a call of a costly function soon
PIECE_SECONDS = 0.1
#: elements per compute unit of a kernel's first launch on a CPU device, before its pace is
#: measured (a launch has at least one element per compute unit)
FIRST_PER_UNIT = 4
#: a launch is at most this many times the elements of the one before it (a short launch's
#: time is mostly its own cost, not its elements': it says little about larger ones)
GROWTH = 64


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
                args[len(args) - len(ints):] = ints
            self.kernel.set_args(*args)
            return cl.enqueue_nd_range_kernel(queue, self.kernel, (gsize,), self.local)


class _Cache:
    """A kernel's prepared launches and what they were made under: the configuration's stamp,
    the device, the library where it has unit trees (read again once edited); its usual
    variant on the device."""

    __slots__ = ("bound", "by_key", "lib", "stamp", "variant")

    def __init__(self, k: ElementwiseKernel, stamp: Any, bound: Any) -> None:
        lib = k.library
        self.stamp, self.bound, self.lib = stamp, bound, lib if lib.trees else None
        self.variant = k._variant(1)
        self.by_key: dict[Any, Prepared] = {}


_cache_lock = threading.Lock()


def _cache(k: ElementwiseKernel, bound: _device.BoundDevice) -> _Cache:
    """``k``'s prepared launches, started again where the configuration, the device or a unit
    tree of its library changed, or the programs in memory were forgotten."""
    c: _Cache | None = k.__dict__.get("_prepared")
    stamp = (config.stamp(), _program.memory_generation())
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
    if key is not None:
        kinds, nints = key
        prep.bind(k, variant[0], kinds, nints, bound)
    with _cache_lock:
        if len(c.by_key) >= _MAX_PREPARED:
            c.by_key.clear()
        c.by_key[full] = prep
    return prep


# -- launches sized by their cost ---------------------------------------------------------------


def cost_cap(k: Any, bound: _device.BoundDevice) -> int:
    """Elements of the next launch of ``k`` on ``bound`` (:func:`record_cost`);
    :data:`FIRST_PER_UNIT` per compute unit before any launch was timed."""
    size = k.__dict__.get("_piece")
    if size is None or size[0] is not bound:
        return FIRST_PER_UNIT * max(1, bound.info.compute_units)
    return int(size[1])


def record_cost(k: Any, bound: _device.BoundDevice, n: int, seconds: float) -> None:
    """A launch of ``n`` elements of ``k`` took ``seconds``: the next launch has as many
    elements as last :data:`PIECE_SECONDS` at that pace (the launch's own cost counted in),
    at most :data:`GROWTH` times these, at least one per compute unit, rounded down to a power
    of two.  A launch shorter than half of :data:`PIECE_SECONDS` (a small call, a call's last
    piece) never lowers the size."""
    if n <= 0:
        return
    units = max(1, bound.info.compute_units)
    size = max(units, min(GROWTH * n, int(n * PIECE_SECONDS / max(seconds, 1e-9))))
    if seconds < PIECE_SECONDS / 2:
        size = max(size, cost_cap(k, bound))
    # a power of two: launches of few distinct sizes (PoCL compiles a kernel again for each
    # work-group size it picks, and picks it from the launch's size)
    k.__dict__["_piece"] = (bound, 1 << (size.bit_length() - 1))


# -- the fast path -----------------------------------------------------------------------------


def fast(k: ElementwiseKernel, inputs: Sequence[Any], ints: Sequence[int]) -> Any:
    """The outputs (a list) of a call that fits a prepared launch (see the module), else
    :data:`NO`."""
    if not k._fast_kind:
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
        shape, n = (), 1
    elif not shape or (host and dev) or len(kinds) != k._fast_kind:
        return NO
    else:
        n = math.prod(shape)
        if n == 0 or (not dev and n > SMALL):
            return NO
    bound = _device.current()
    if dev:
        if any(t and v.context != bound.context for t, v in zip(kinds, inputs)):
            return NO            # the general path says why
    elif n > 1 and (n * (2 + len(kinds)) > _ew.launch_elements(bound)
                    or (bound.info.type == "CPU" and n > cost_cap(k, bound))
                    or (_transfer.mode(bound) != "host"
                        and (n > _transfer.SLAB or 8 * n > _ew.RESIDENT_BYTES))):
        return NO                # in pieces, or streamed: the general path
    c = _cache(k, bound)
    variant = c.variant
    if variant[1] is not None:
        return NO
    key = (tuple(kinds), len(ints))
    prep = c.by_key.get((variant, key))
    if prep is None or not prep.final:
        prep = prepared(k, variant, key, c)
    if dev:
        outs = _on_device(k, prep, inputs, kinds, ints, shape, n, bound)
    else:
        outs = _small(k, prep, inputs, kinds, ints, shape, n, bound)
    if k._tier_later:
        k._tier_up()
    return outs


class _Scratch:
    """A thread's buffer of small calls: R's counts, the outputs, the array inputs; and the
    device's buffer for the pointer of a scalar input."""

    def __init__(self, bound: _device.BoundDevice, size: int) -> None:
        import pyopencl as cl

        self.bound = bound
        self.size = size
        self.buffer = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, size * 8)
        zero = np.zeros(_HEAD, dtype=np.float64)
        cl.enqueue_copy(bound.queue, self.buffer, zero, is_blocking=True)
        #: the raw counts at the last reading (the kernels add to them, never reset)
        self.head = zero.tobytes()
        self.dummy = _ew._dummy(bound)

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
    buf, queue, dummy = s.buffer, bound.queue, s.dummy
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
        src = arrays[0] if len(arrays) == 1 else np.concatenate([a.reshape(-1) for a in arrays])
        cl.enqueue_copy(queue, buf, src, dst_offset=(_HEAD + n) * 8, is_blocking=False)
    t0 = time.perf_counter()
    prep.run(queue, n, buf, (buf,), _HEAD, 0, ins, ints)
    earlier = take_counts(bound) if bound.resources.pending_counts else None
    raw = np.empty(_HEAD + n)
    cl.enqueue_copy(queue, raw, buf, is_blocking=True)
    record_cost(k, bound, n, time.perf_counter() - t0)
    del src
    if earlier:
        raise_counts(earlier)
    head = raw[:_HEAD]
    if head.tobytes() != s.head:
        k.warn(s.counts(head))
    out = raw[_HEAD:]
    return [out[0] if not shape else out.reshape(shape)]


#: (device, shape) -> the attributes of a float64 device array of that shape from the pool,
#: but its buffer and events: results are made from them, not by pyopencl's constructor (its
#: checks cost a device call more than its launch)
_array_attrs: dict[tuple[Any, tuple[int, ...]], dict[str, Any]] = {}


def _result(bound: _device.BoundDevice, shape: tuple[int, ...], n: int) -> Any:
    """A new float64 device array of ``shape`` (``n`` elements) from the device's pool."""
    import pyopencl.array as cla

    attrs = _array_attrs.get((bound, shape))
    pool = _transfer.device_pool(bound)
    if attrs is None:
        out = cla.empty(bound.queue, shape, np.float64, allocator=pool)
        if len(_array_attrs) >= 256:
            _array_attrs.clear()
        _array_attrs[(bound, shape)] = {**vars(out), "base_data": None, "events": None}
        return out
    out = object.__new__(cla.Array)
    out.__dict__.update(attrs)
    out.base_data = pool(n * 8)
    out.events = []
    return out


def _on_device(k: ElementwiseKernel, prep: Prepared, inputs: Sequence[Any], kinds: list[int],
               ints: Sequence[int], shape: tuple[int, ...], n: int,
               bound: _device.BoundDevice) -> list[Any]:
    """Device arrays in and out: the launches, and R's counts as ``warnings`` says."""
    out = _result(bound, shape, n)
    _transfer.after_other_queues(bound.queue, [v for v, kind in zip(inputs, kinds) if kind])
    if deferring():
        with _pending_lock:
            name = getattr(_ew._called_as, "name", None) or k.name
            entry = bound.resources.pending_counts.get((id(k), name))
            if entry is None:
                entry = _pending_entry(bound, k, name)
            event = _launches(prep, bound, inputs, kinds, ints, n, out, entry[2].buffer)
        out.add_event(event)
    else:
        status = _transfer.status_buffer(bound)
        out.add_event(_launches(prep, bound, inputs, kinds, ints, n, out, status.buffer))
        counts = status.read(bound.queue)
        _transfer.release_status(bound, status)
        k.warn(counts)
    return [out]


def _launches(prep: Prepared, bound: _device.BoundDevice, inputs: Sequence[Any],
              kinds: list[int], ints: Sequence[int], n: int, out: Any, status: Any) -> Any:
    """The launches of a call on device arrays (each of at most the device's launch size);
    the last one's event."""
    import pyopencl as cl

    cap = _ew.launch_elements(bound)
    dummy = _ew._dummy(bound)
    for attempt in (0, 1):
        try:
            event = None
            for start in range(0, n, cap):
                ins = [(0.0, v.base_data, v.offset // 8 + start) if kind else
                       (float(v), dummy, 0) for v, kind in zip(inputs, kinds)]
                event = prep.run(bound.queue, min(cap, n - start), status, (out.base_data,),
                                 out.offset // 8 + start, start, ins, ints)
            return event
        except cl.MemoryError:
            # the pool's allocations are deferred (see device_pool): a full device shows at
            # the first launch; the blocks the pool keeps for reuse go back to the device, once
            pool = _transfer.device_pool(bound)
            if attempt or not pool.held_blocks:
                raise
            pool.free_held()
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
