# SPDX-License-Identifier: GPL-2.0-or-later
"""The host data path: arrays to the bound device and results back, for every kernel.

Every kernel of :mod:`daskcl.kernels` (the elementwise functions of :mod:`daskcl.nmath`, the
random generators, user kernels) and :func:`daskcl.glm.f2_f3` move NumPy data through
:func:`stream`: a call is cut into pieces (one launch each), and each piece's inputs go to the
device, its kernel runs, and its outputs come back.  How depends on the device:

* CPU devices (PoCL) compute in the host's memory: the device buffers alias the NumPy arrays
  (``CL_MEM_USE_HOST_PTR``), nothing is copied, and each piece is finished before the next.
* Devices with their own memory (GPUs) run the pieces through a few slots, each with its own
  in-order queue and device buffers (kept per device and reused across calls), so that one
  piece's upload, another's kernel and a third's download overlap wherever the driver overlaps
  them.  A call takes only the slots it has pieces for, so the calls of several threads (a
  dask array's chunks, one piece each) overlap in the same way.  The config key
  ``transfer.mode`` (``DASKCL_TRANSFER``) chooses how the host side moves:

  ``direct``
      pageable copies both ways, straight from the input arrays and into the result;
  ``pinned``
      inputs are copied by ``transfer.threads`` host threads into pinned staging buffers and
      go to the device by DMA (inputs already in pinned memory, such as an earlier call's
      result or :func:`empty_pinned`'s arrays, go by DMA directly; with ``transfer.threads``
      0, by the driver's pageable copy); the result is allocated in page-locked (pinned) host
      memory that the returned NumPy array keeps alive, so the download is a DMA at the link's
      full speed with no host copy.  Pinned blocks come from a per-device pool
      (:class:`PinnedPool`) and go back to it when the last view of the result is gone; beyond
      ``transfer.pinned_limit`` bytes in use, results fall back to ordinary memory;
  ``staged``
      both ways through pinned staging buffers filled and emptied by host copies;
  ``auto``
      the mode measured best for the device (``benchmarks/bench_transfer.py``; recorded in
      ``benchmarks/README.md``): ``pinned`` on GPUs.

  A pageable copy is the driver's own copy into its staging memory on one thread; copies into pinned memory on several threads run at the host's
  memory bandwidth, and the DMA from there at the link's (``transfer.threads``: ``auto`` is up
  to 8, half the host's cores).

Inputs that are broadcast or scalar never reach :func:`stream` expanded: the kernels read them
through strides, and small arrays are uploaded whole once per call (:func:`upload`).

Device arrays (``pyopencl.array.Array``) bypass all of this: :func:`device_operand` checks that
one belongs to the bound device's context and gives its buffer, offset and strides.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import math
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..runtime import device as _device
from . import _plan
from ._device_arrays import DeviceOperand, after_other_queues, device_operand, is_device_array

__all__ = [
    "ALONE_COPY_MAX",
    "PIECES_MIN",
    "SLAB",
    "SLAB_MIN",
    "DeviceOperand",
    "Piece",
    "PinnedPool",
    "Status",
    "after_other_queues",
    "copy_parallel",
    "device_operand",
    "device_pool",
    "empty_pinned",
    "is_device_array",
    "mode",
    "release_status",
    "result_array",
    "slab",
    "status_buffer",
    "stream",
    "thread_queue",
    "upload",
]

#: elements of float64 per piece of a streamed call on devices with their own memory, at most
#: (a slot's buffers hold a piece of every input and output); smaller pieces were slower
#: (benchmarks/README.md, "The host path's own costs"): each costs a few tenths of a
#: millisecond of its own (its threads' hand-offs, the driver's calls).
SLAB = 1 << 23
#: elements per piece at least: a call of fewer than :data:`PIECES_MIN` slabs is cut into that
#: many pieces down to this size, so that its uploads, kernels and downloads still overlap (at
#: 2^23 elements: two pieces of 2^22 took 4.8-5.6 ms, pnorm and qnorm, and 12.8-13.8 ms, pbeta,
#: against 5.4-6.0 and 17.4-17.7 in one piece, and 5.8-6.1 and 16.5-17.4 in four of 2^21)
SLAB_MIN = 1 << 22
#: pieces a call is cut into at least, where its size allows pieces of :data:`SLAB_MIN`
PIECES_MIN = 4
#: results smaller than this many bytes are never pinned (the pool's overhead is not worth it)
PIN_MIN_BYTES = 1 << 20
#: slots (queues with their device buffers) a streamed call cycles through
SLOTS = 3

_lock = threading.RLock()
#: notified when a call gives its slots back (:func:`_take_slots`)
_slot_freed = threading.Condition(_lock)
#: streamed calls in progress in this process, holding slots (:func:`_take_slots`)
_streaming = [0]


def slab(total: int) -> int:
    """Elements per piece of a streamed call of ``total`` elements: :data:`SLAB`, or less for a
    call of fewer than :data:`PIECES_MIN` slabs (at least :data:`SLAB_MIN`)."""
    return max(1, min(SLAB, max(SLAB_MIN, -(-total // PIECES_MIN))))


def mode(bound: _device.BoundDevice) -> str:
    """How :func:`stream` moves data on ``bound``: ``host`` (CPU devices: in place), or the
    ``transfer.mode`` config key's mode for devices with their own memory (``auto``: ``pinned``)."""
    if bound.info.type == "CPU":
        return "host"
    chosen = str(config.get("transfer.mode"))
    return "pinned" if chosen == "auto" else chosen


def _stages(how: str, nthreads: int) -> bool:
    """Whether host inputs go through pinned staging in mode ``how`` with ``nthreads`` staging
    threads (``staged``; ``pinned`` with threads; otherwise the driver's pageable copies)."""
    return how == "staged" or (how == "pinned" and nthreads > 0)


def _threads() -> int:
    """Host threads copying into and out of pinned staging (0: inputs by pageable copies)."""
    n = config.get("transfer.threads")
    if n == "auto":
        return max(1, min(8, (os.cpu_count() or 2) // 2))
    return max(0, int(n))


#: elements of a host copy's part, at least: each part is handed to a thread (tens of
#: microseconds), so a copy is cut into no more parts than it has of this size (small copies
#: in many parts were slower: benchmarks/README.md, "The host path's own costs")
_PAR_COPY_MIN = 1 << 17

_copiers: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def copy_parallel(dst: np.ndarray, src: np.ndarray, nthreads: int) -> None:
    """``np.copyto(dst, src)`` for flat arrays, in up to ``nthreads`` parts of at least
    :data:`_PAR_COPY_MIN` elements on a pool of threads (NumPy releases the GIL while it
    copies)."""
    n = src.size
    parts = min(nthreads, n // _PAR_COPY_MIN)
    if parts <= 1:
        np.copyto(dst, src)
        return
    with _lock:
        pool = _copiers.get(nthreads)
        if pool is None:
            pool = _copiers[nthreads] = concurrent.futures.ThreadPoolExecutor(
                nthreads, thread_name_prefix="daskcl-copy")
    step = -(-n // parts)
    step = -(-step // 8192) * 8192
    futures = [pool.submit(np.copyto, dst[a: a + step], src[a: a + step])
               for a in range(0, n, step)]
    for f in futures:
        f.result()


# -- pinned host memory ---------------------------------------------------------------------------


@dataclass
class _Block:
    buffer: Any           # the ALLOC_HOST_PTR buffer
    host: np.ndarray      # its mapping (uint8), kept mapped for the block's life
    size: int


class PinnedPool:
    """Page-locked host memory of one device, handed out as NumPy arrays and taken back when
    the last view of an array is gone.

    Blocks are allocated in power-of-two sizes (at least 1 MiB) and kept for reuse; at most
    ``limit`` bytes are handed out at once (beyond, :meth:`take` returns ``None`` and the caller
    uses ordinary memory), and at most ``limit`` bytes of free blocks are kept.
    """

    def __init__(self, bound: _device.BoundDevice, limit: int) -> None:
        self.bound = bound
        self.limit = limit
        self.in_use = 0
        self.free: dict[int, list[_Block]] = {}
        self.spans: dict[int, int] = {}    # live blocks: host address -> size
        self._queue: Any = None

    def _new(self, size: int) -> _Block:
        import pyopencl as cl

        if self._queue is None:
            self._queue = cl.CommandQueue(self.bound.context)
        mf = cl.mem_flags
        buf = cl.Buffer(self.bound.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR, size)
        map_buffer: Any = cl.enqueue_map_buffer  # its stubs reject combined flags
        host, _ = map_buffer(self._queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                             (size,), np.uint8, is_blocking=True)
        with _lock:
            self.spans[host.ctypes.data] = size
        return _Block(buf, host, size)

    def holds(self, a: np.ndarray) -> bool:
        """Whether ``a``'s memory lies in one of the pool's blocks (pinned)."""
        lo = a.ctypes.data
        hi = lo + a.nbytes
        with _lock:
            return any(start <= lo and hi <= start + size for start, size in self.spans.items())

    def take(self, nbytes: int) -> np.ndarray | None:
        """``nbytes`` of pinned memory as a uint8 array, or ``None`` beyond the limit."""
        size = max(PIN_MIN_BYTES, 1 << max(0, nbytes - 1).bit_length())
        with _lock:
            if self.in_use + size > self.limit:
                return None
            blocks = self.free.get(size)
            block = blocks.pop() if blocks else None
            self.in_use += size
        if block is None:
            try:
                block = self._new(size)
            except Exception:    # the driver may refuse page-locked memory: use ordinary memory
                with _lock:
                    self.in_use -= size
                return None
        # A fresh exporter per hand-out: every view of the array keeps it alive, and when the
        # last one goes, the block returns to the pool (ndarray views collapse their bases onto
        # the array that exposes the memory, so the finalizer is tied to this object).
        exporter = (ctypes.c_char * nbytes).from_address(block.host.ctypes.data)
        weakref.finalize(exporter, self._give_back, block)
        return np.frombuffer(memoryview(exporter).cast("B"), dtype=np.uint8)

    def _give_back(self, block: _Block) -> None:
        with _lock:
            self.in_use -= block.size
            kept = sum(b.size for bs in self.free.values() for b in bs)
            if kept + block.size <= self.limit:
                self.free.setdefault(block.size, []).append(block)
            else:
                self.spans.pop(block.host.ctypes.data, None)


def _pool(bound: _device.BoundDevice) -> PinnedPool:
    with _lock:
        pool: PinnedPool | None = bound.resources.pinned
        if pool is None:
            pool = bound.resources.pinned = PinnedPool(bound, _pinned_limit())
        pool.limit = _pinned_limit()
        return pool


def _pinned_limit() -> int:
    chosen = config.get("transfer.pinned_limit")
    if chosen is not None:
        return int(chosen)
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 8 << 30
    return max(256 << 20, ram // 8)


def _pinned_array(pool: PinnedPool, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array of ``shape`` from ``pool``, or in ordinary memory where
    the pool has no room (or the array no elements)."""
    n = math.prod(shape)
    raw = pool.take(n * 8) if n else None
    return np.empty(shape) if raw is None else raw.view(np.float64)[:n].reshape(shape)


def result_array(bound: _device.BoundDevice, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array of ``shape`` for a result of :func:`stream`: in pinned
    memory where the mode is ``pinned`` (and the pool has room), else ordinary memory."""
    if mode(bound) == "pinned" and math.prod(shape) * 8 >= PIN_MIN_BYTES:
        return _pinned_array(_pool(bound), shape)
    return np.empty(shape)


# -- streaming --------------------------------------------------------------------------------


@dataclass
class Piece:
    """One launch of a streamed call.

    ``ins[j]`` is the element range ``(lo, hi)`` of streamed input ``j`` that the piece reads
    (``None``: input ``j`` is not streamed: a scalar, or uploaded whole); ``outs[k]`` the range
    of output ``k`` it writes.  ``arg`` is for the launch callback (the piece's shape, offsets).
    """

    ins: list[tuple[int, int] | None]
    outs: list[tuple[int, int]]
    arg: Any = None


#: ``launch(piece, inputs, outputs, queue)`` enqueues a piece's kernels on ``queue``:
#: ``inputs[j]`` is the device buffer holding input ``j``'s range (None where not streamed),
#: ``outputs[k]`` the buffer receiving output ``k``'s range, both starting at element 0; it
#: returns its kernels' events (an event, a list of them, or None), kept until the piece is done.
Launch = Callable[[Piece, list[Any], list[Any], Any], Any]


@dataclass
class _Slot:
    queue: Any
    dev_in: list[Any] = field(default_factory=list)
    dev_out: list[Any] = field(default_factory=list)
    pin_in: list[np.ndarray] = field(default_factory=list)
    pin_out: list[np.ndarray] = field(default_factory=list)
    busy: list[Any] = field(default_factory=list)     # (event, finish) of its last piece
    #: the events of its last piece's uploads and kernels, released only once the piece is done
    #: (see :func:`_piece`)
    held: list[Any] = field(default_factory=list)
    #: its last piece's elements and first and last kernel events (their profile: its pace)
    timing: tuple[int, Any, Any] | None = None


def _slots(bound: _device.BoundDevice) -> list[_Slot]:
    import pyopencl as cl

    slots: list[_Slot] | None = bound.resources.slots
    if slots is None:
        slots = bound.resources.slots = [_Slot(cl.CommandQueue(
            bound.context, properties=cl.command_queue_properties.PROFILING_ENABLE))
            for _ in range(SLOTS)]
    return slots


def _take_slots(bound: _device.BoundDevice, want: int) -> list[int]:
    """The indices of up to ``want`` of the device's slots, at least one, for one call alone
    (a slot's queue, buffers and staging memory serve one piece at a time): as many as are
    free, waiting for one where none is.  Calls of other threads (a dask array's chunks) run
    on the other slots meanwhile, so that one chunk's upload, another's kernel and a third's
    download overlap as a large call's pieces do."""
    with _slot_freed:
        if bound.resources.free_slots is None:
            bound.resources.free_slots = list(range(SLOTS))
        free = bound.resources.free_slots
        while not free:
            _slot_freed.wait()
        taken = free[:max(1, want)]
        del free[:len(taken)]
        _streaming[0] += 1
        return taken


def _give_slots(bound: _device.BoundDevice, taken: list[int]) -> None:
    """Give back slots of :func:`_take_slots` (their work done).  The free list stays sorted,
    so that a call takes the lowest free slots: calls one after another use the same slots and
    their buffers, where a list in the order of return handed each call of one piece the next
    slot, and three calls made three slots' staging and device buffers (a pinned block takes
    milliseconds to make: benchmarks/README.md, "Where a call from NumPy spends its time")."""
    with _slot_freed:
        _streaming[0] -= 1
        free = bound.resources.free_slots
        assert free is not None
        free.extend(taken)
        free.sort()
        _slot_freed.notify_all()


def _grow(bufs: list[Any], j: int, nelem: int, ctx: Any, flags: Any) -> Any:
    """Device buffer ``j`` of a slot, replaced by a larger one where it holds fewer than
    ``nelem`` doubles."""
    import pyopencl as cl

    bufs.extend([None] * (j + 1 - len(bufs)))
    if bufs[j] is None or bufs[j].size < nelem * 8:
        bufs[j] = None                  # the old one goes before the new one is allocated
        bufs[j] = cl.Buffer(ctx, flags, max(nelem, 1) * 8)
    return bufs[j]


def _pinned_staging(arrs: list[np.ndarray], j: int, pool: PinnedPool, nelem: int) -> np.ndarray:
    """Staging array ``j`` of a slot, replaced by a larger one where it is too small."""
    arrs.extend([np.empty(0)] * (j + 1 - len(arrs)))
    if arrs[j].size < nelem:
        arrs[j] = _pinned_array(pool, (nelem,))
    return arrs[j]


def stream(bound: _device.BoundDevice, pieces: Sequence[Piece] | Iterable[Piece],
           ins: Sequence[np.ndarray | None], outs: Sequence[np.ndarray], launch: Launch,
           status: Status | None = None,
           timed: Callable[[int, float], None] | None = None) -> None:
    """Run ``pieces`` on ``bound``: for each, the ranges of the streamed inputs ``ins`` (flat,
    contiguous float64; ``None`` for inputs not streamed) go to the device, ``launch``
    enqueues its kernels, and the output ranges come back into ``outs`` (flat, contiguous,
    float64).  Returns when every output is complete.  ``status``: the :class:`Status` the
    launches count into; on CPU devices its read is enqueued behind the last piece and waited
    for with the outputs, elsewhere :meth:`Status.read` reads it once the slots have drained:
    either way :meth:`Status.read` then gives the call's counts.  On CPU devices ``pieces``
    may be an iterator, asked for each piece once the one before is done.  ``timed(n,
    seconds)`` is told each piece's elements and time (elsewhere its kernels', from their
    profile, once its slot drains)."""
    stop = _plan.stopper()       # in a dask chunk: stop between pieces once interrupted
    if mode(bound) == "host":
        _stream_host(bound, pieces, ins, outs, launch, status, timed, stop)
        return
    pieces = list(pieces)
    taken = _take_slots(bound, min(SLOTS, len(pieces)))
    try:
        _stream_device(bound, pieces, ins, outs, launch, taken, stop, timed)
    finally:
        _give_slots(bound, taken)


_thread = threading.local()


def thread_queue(bound: _device.BoundDevice) -> Any:
    """An in-order queue of the calling thread on ``bound`` for calls from NumPy on CPU devices:
    the device's own queue on the main thread, a queue of their own on others (a dask
    compute's workers), so that one thread's wait for its piece does not wait for another's
    work too."""
    if threading.current_thread() is threading.main_thread():
        return bound.queue
    have = getattr(_thread, "queue", None)
    if have is None or have[0] is not bound:
        import pyopencl as cl

        have = _thread.queue = (bound, cl.CommandQueue(bound.context))
    return have[1]


def _stream_host(bound: _device.BoundDevice, pieces: Iterable[Piece],
                 ins: Sequence[np.ndarray | None], outs: Sequence[np.ndarray],
                 launch: Launch, status: Status | None = None,
                 timed: Callable[[int, float], None] | None = None,
                 stop: Callable[[], None] | None = None) -> None:
    """CPU devices: buffers over the NumPy memory, one piece finished before the next (so that
    Ctrl-C stops a call within one launch).  A piece's commands (its kernels, the mapping of
    its outputs, after the last piece the read of ``status``) are enqueued without waiting
    and waited for once: on PoCL each blocking call is a round trip to its threads, and
    pnorm of 1024 elements took 223-241 us with three such waits against 162-175 with one
    (benchmarks/README.md, "A small call on a CPU device")."""
    import pyopencl as cl

    ctx, queue = bound.context, thread_queue(bound)
    mf = cl.mem_flags
    for p in pieces:
        if stop is not None:
            stop()
        t0 = time.perf_counter()
        dev_in = [None if r is None or a is None else
                  cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=_nonempty(a, r))
                  for a, r in zip(ins, p.ins)]
        dev_out = [cl.Buffer(ctx, mf.WRITE_ONLY | mf.USE_HOST_PTR, hostbuf=_nonempty(o, r))
                   for o, r in zip(outs, p.outs)]
        launch(p, dev_in, dev_out, queue)
        for buf, (lo, hi) in zip(dev_out, p.outs):
            # mapping makes the device's writes visible in the host array (no copy on CPUs);
            # the unmap is enqueued behind it, and the finish below waits for both
            map_buffer: Any = cl.enqueue_map_buffer
            mapped, _ = map_buffer(queue, buf, cl.map_flags.READ, 0, (max(hi - lo, 1),),
                                   np.float64, is_blocking=False)
            mapped.base.release()
        # the last piece (its outputs reach the end) reads the counts in the same wait
        if status is not None and p.outs and all(hi >= o.size for o, (_, hi)
                                                 in zip(outs, p.outs)):
            status.read_later(queue)
        queue.finish()
        if timed is not None and p.outs:
            timed(p.outs[0][1] - p.outs[0][0], time.perf_counter() - t0)


def _nonempty(a: np.ndarray, r: tuple[int, int]) -> np.ndarray:
    lo, hi = r
    return a[lo:hi] if hi > lo else a[lo: lo + 1] if lo < a.size else np.zeros(1)


def _stream_device(bound: _device.BoundDevice, pieces: Sequence[Piece],
                   ins: Sequence[np.ndarray | None], outs: Sequence[np.ndarray],
                   launch: Launch, taken: list[int],
                   interrupted: Callable[[], None] | None = None,
                   timed: Callable[[int, float], None] | None = None) -> None:
    """Piece ``k`` runs on the ``k % len(taken)``-th slot taken; each slot's pieces run in
    order on a thread of its own, so that whatever a driver call blocks on (NVIDIA's OpenCL
    returns from some non-blocking copies only when they are done) holds up one slot, not the
    pipeline."""
    how = mode(bound)
    nthreads = _threads()
    slots = [_slots(bound)[i] for i in taken]
    pool = _pool(bound) if _stages(how, nthreads) else None
    # inputs staged through pinned memory (those already pinned go by DMA as they are)
    stage = [pool is not None and a is not None and not pool.holds(a) for a in ins]

    stop = threading.Event()

    def run(j: int) -> None:
        s = slots[j]
        try:
            for p in pieces[j:: len(slots)]:
                _drain(s, timed)       # the slot's previous piece is done with its buffers
                if stop.is_set():
                    return
                if interrupted is not None:
                    interrupted()
                _piece(bound, s, p, ins, outs, launch, how, pool, stage, nthreads)
        finally:
            _drain(s, timed)

    used = range(min(len(slots), len(pieces)))
    if len(used) <= 1:
        for j in used:
            run(j)
        return
    ex = _slot_threads(bound)
    futures: list[concurrent.futures.Future[None]] = []
    try:
        for j in used:
            futures.append(ex.submit(run, j))
        done, _ = concurrent.futures.wait(futures,
                                          return_when=concurrent.futures.FIRST_EXCEPTION)
        for f in (*done, *futures):    # a failed slot's error first, while the others run
            f.result()
    except BaseException:
        # Ctrl-C here, or a piece that failed: the other slots stop after their current piece
        # and are waited for, so that no thread of this call still uses the slots' buffers
        # when they are given to the next call
        stop.set()
        concurrent.futures.wait(futures)
        raise


def _slot_threads(bound: _device.BoundDevice) -> concurrent.futures.ThreadPoolExecutor:
    """The device's threads that run the slots' pieces: one per slot (the slots of every call
    at once), all started when the pool is made.  A pool starts a thread when work finds none
    idle, and ``submit`` returns only once it runs: a call's ``submit`` of a later slot could
    wait there while its other slots' pieces ran, and Ctrl-C arriving then left those slots
    running the rest of the call."""
    with _lock:
        ex: concurrent.futures.ThreadPoolExecutor | None = bound.resources.slot_threads
        if ex is None:
            ex = concurrent.futures.ThreadPoolExecutor(SLOTS, thread_name_prefix="daskcl-slot")
            ready = threading.Barrier(SLOTS)
            for f in [ex.submit(ready.wait) for _ in range(SLOTS)]:
                f.result()             # each waits for all: SLOTS threads, every one started
            bound.resources.slot_threads = ex
        return ex


def _piece(bound: _device.BoundDevice, s: _Slot, p: Piece, ins: Sequence[np.ndarray | None],
           outs: Sequence[np.ndarray], launch: Launch, how: str, pool: PinnedPool | None,
           stage: list[bool], nthreads: int) -> None:
    """One piece on slot ``s``: its inputs up, its kernels, its outputs down (not waited for)."""
    import pyopencl as cl

    ctx, mf, q = bound.context, cl.mem_flags, s.queue
    dev_in: list[Any] = []
    for j, (a, r) in enumerate(zip(ins, p.ins)):
        if a is None or r is None:
            dev_in.append(None)
            continue
        lo, hi = r
        buf = _grow(s.dev_in, j, hi - lo, ctx, mf.READ_ONLY)
        if hi > lo:
            if stage[j] and pool is not None:
                st = _pinned_staging(s.pin_in, j, pool, hi - lo)
                copy_parallel(st[: hi - lo], a[lo:hi], _copy_threads(nthreads, hi - lo))
                s.held.append(cl.enqueue_copy(q, buf, st[: hi - lo], is_blocking=False))
            else:
                s.held.append(cl.enqueue_copy(q, buf, a[lo:hi], is_blocking=False))
        dev_in.append(buf)
    dev_out = [_grow(s.dev_out, j, hi - lo, ctx, mf.READ_WRITE)
               for j, (lo, hi) in enumerate(p.outs)]
    # The events are kept until the piece is done: NVIDIA's OpenCL returns from releasing the
    # event of a copy or kernel still running only when it has finished, and pyopencl releases
    # an event as its last reference goes, holding the interpreter's lock: dropped at once,
    # each upload's event would stop every thread of the process for its DMA.
    events = launch(p, dev_in, dev_out, q)
    s.held.append(events)
    if p.outs and isinstance(events, list) and events:
        s.timing = (p.outs[0][1] - p.outs[0][0], events[0], events[-1])
    for j, (o, (lo, hi)) in enumerate(zip(outs, p.outs)):
        if hi <= lo:
            continue
        if how == "staged" and pool is not None:
            st = _pinned_staging(s.pin_out, j, pool, hi - lo)
            ev = cl.enqueue_copy(q, st[: hi - lo], dev_out[j], is_blocking=False)
            s.busy.append((ev, _copier(o[lo:hi], st[: hi - lo], nthreads)))
        else:
            ev = cl.enqueue_copy(q, o[lo:hi], dev_out[j], is_blocking=False)
            s.busy.append((ev, None))
    if not s.busy:
        s.busy.append((cl.enqueue_marker(q), None))


#: elements of a piece's input that, beside another streamed call, are copied into staging on
#: the piece's own thread in one part
ALONE_COPY_MAX = 1 << 20


def _copy_threads(nthreads: int, n: int) -> int:
    """Threads for a piece's staging copy of ``n`` elements: ``nthreads``, or one beside
    another streamed call (a dask array's chunks) for up to :data:`ALONE_COPY_MAX` elements.
    Such calls already copy side by side, and small parts handed to the copy threads cost more
    than they gained; larger chunks gain from the threads (benchmarks/README.md, "Dask
    arrays")."""
    return 1 if _streaming[0] > 1 and n <= ALONE_COPY_MAX else nthreads


def _copier(dst: np.ndarray, src: np.ndarray, nthreads: int) -> Callable[[], None]:
    return lambda: copy_parallel(dst, src, nthreads)


def _drain(slot: _Slot, timed: Callable[[int, float], None] | None = None) -> None:
    """Wait for the slot's outstanding work and finish it (staged copies out); ``timed(n,
    seconds)`` is told its last piece's elements and kernels' time (their profile)."""
    busy, slot.busy = slot.busy, []
    held, slot.held = slot.held, []
    timing, slot.timing = slot.timing, None
    for ev, finish in busy:
        ev.wait()
        if finish is not None:
            finish()
    if busy:
        slot.queue.finish()
    if timed is not None and timing is not None:
        import pyopencl as cl

        n, first, last = timing
        try:
            seconds = (last.profile.end - first.profile.start) * 1e-9
        except cl.Error:      # a queue without profiling (made before), or a driver's refusal
            seconds = None
        if seconds is not None and seconds > 0:
            timed(n, seconds)
    del held                           # released now that they are done


def upload(bound: _device.BoundDevice, a: np.ndarray) -> Any:
    """A device buffer holding the contiguous float64 array ``a`` whole (read-only; for CPU
    devices the buffer aliases ``a``), there when this returns.

    On devices with their own memory an array above :data:`PIN_MIN_BYTES` goes as a stream's
    input does (``pinned`` mode with staging threads, and ``staged``): copied into pinned
    staging by the staging threads, then by DMA; a buffer made with the array's contents
    (``COPY_HOST_PTR``, as the other modes and small arrays have it) took
    NVIDIA's OpenCL about 13 ms for 16 MB, a tenth of the link's speed."""
    import pyopencl as cl

    mf = cl.mem_flags
    how = mode(bound)
    if how == "host":
        return cl.Buffer(bound.context, mf.READ_ONLY | mf.USE_HOST_PTR,
                         hostbuf=a if a.size else np.zeros(1))
    threads = _threads()
    if a.nbytes <= PIN_MIN_BYTES or not _stages(how, threads):
        return cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR,
                         hostbuf=a if a.size else np.zeros(1))
    buf = cl.Buffer(bound.context, mf.READ_ONLY, a.nbytes)
    pool = _pool(bound)
    src = a
    if not pool.holds(a):
        src = _pinned_array(pool, (a.size,))
        copy_parallel(src, a, max(1, threads))
    cl.enqueue_copy(bound.queue, buf, src, is_blocking=True)
    return buf


#: the counts of a :class:`Status`: NaNs produced, non-integer arguments, arguments out of an
#: algorithm's range (R's "value out of range" warnings where it still gives a value)
STATUS_COUNTS = 3


class Status:
    """A buffer of :data:`STATUS_COUNTS` ints that the kernels of a call count into (NaNs
    produced, non-integer arguments, arguments out of range), from a free list per device
    (:func:`status_buffer`, :func:`release_status`).

    A reused buffer is not zeroed: :meth:`read` gives what it counted since the last reading.
    So nothing has to run on the device before a call's launches (the zeroing was an extra
    command on every call, and on the device's queue it did not order the launches of the
    slots' queues: it once ran after a launch and lost its counts, and R's warning with them)."""

    def __init__(self, buffer: Any, base: np.ndarray) -> None:
        #: the ``cl.Buffer`` the kernels take
        self.buffer = buffer
        self._base = base
        self._pending: tuple[np.ndarray, Any] | None = None

    def read_later(self, queue: Any) -> None:
        """Enqueue the read of the counts on ``queue`` without waiting; :meth:`read` waits
        for it and gives them."""
        import pyopencl as cl

        raw = np.empty(STATUS_COUNTS, dtype=np.uint32)
        self._pending = (raw, cl.enqueue_copy(queue, raw, self.buffer, is_blocking=False))

    def read(self, queue: Any) -> np.ndarray:
        """The counts since the last reading (int32): those of :meth:`read_later` where one is
        pending, else read by a blocking copy on ``queue`` (call it once the call's launches
        are done or are on ``queue``, an in-order queue)."""
        import pyopencl as cl

        if self._pending is not None:
            (raw, event), self._pending = self._pending, None
            event.wait()
        else:
            raw = np.empty(STATUS_COUNTS, dtype=np.uint32)
            cl.enqueue_copy(queue, raw, self.buffer, is_blocking=True)
        # the kernels add with 32-bit atomics, which wrap: the difference modulo 2^32
        counts: np.ndarray = (raw - self._base).view(np.int32)
        self._base = raw
        return counts


def status_buffer(bound: _device.BoundDevice) -> Status:
    """A :class:`Status` for one call, from the device's free list (or new)."""
    import pyopencl as cl

    with _lock:
        free: list[Status] = bound.resources.free_status
        if free:
            return free.pop()
    zeros = np.zeros(STATUS_COUNTS, dtype=np.uint32)
    return Status(cl.Buffer(bound.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=zeros), zeros)


def release_status(bound: _device.BoundDevice, status: Status) -> None:
    """Give a :class:`Status` back once its counts have been read."""
    with _lock:
        free: list[Status] = bound.resources.free_status
        if len(free) < 8:
            free.append(status)


def device_pool(bound: _device.BoundDevice) -> Any:
    """The device's memory pool for results on the device: ``pyopencl.tools.MemoryPool``, so
    that a chain of calls reuses buffers instead of allocating one per result.

    Its allocator is pyopencl's ``DeferredAllocator``, not the ``ImmediateAllocator`` that
    makes each new buffer resident at once with a ``clEnqueueMigrateMemObjects`` on the queue:
    on NVIDIA's driver those migrations, enqueued while other threads launched on and read
    from the same queue, crashed the process now and then (``benchmarks/README.md``, "Threads
    on one queue")."""
    with _lock:
        pool = bound.resources.pool
        if pool is None:
            import pyopencl.tools as clt

            with warnings.catch_warnings():  # pyopencl's warning that a full device is then
                # reported by the launch, not by the allocation (as it is without a pool)
                warnings.filterwarnings("ignore", "Memory pools expect non-deferred")
                pool = bound.resources.pool = clt.MemoryPool(
                    clt.DeferredAllocator(bound.context))
        return pool


def empty_pinned(shape: int | Sequence[int]) -> np.ndarray:
    """An uninitialised float64 NumPy array in page-locked (pinned) host memory of the bound
    device, where it has its own memory (otherwise ordinary memory).

    Inputs in pinned memory reach the device by DMA at the link's full speed instead of
    through the driver's pageable copies (``benchmarks/README.md``); the results of daskcl's functions come in pinned memory
    already, so chains of calls from NumPy get this without asking.  The memory returns to
    the device's pool when the last view of the array is gone; beyond
    ``transfer.pinned_limit`` bytes in use, ordinary memory is returned.

    Examples
    --------
    >>> import numpy as np, daskcl
    >>> x = daskcl.empty_pinned((2, 3))
    >>> x[...] = 1.0
    >>> x.shape, x.dtype
    ((2, 3), dtype('float64'))
    """
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    bound = _device.current()
    return np.empty(dims) if mode(bound) == "host" else _pinned_array(_pool(bound), dims)
