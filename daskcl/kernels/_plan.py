# SPDX-License-Identifier: GPL-2.0-or-later
"""The piece plan of elementwise calls: how many elements one launch takes (by the device's
limits and, on CPUs, by the kernel's measured pace, so that Ctrl-C stops a call soon), how a
call's index space is cut into such launches, and the per-device buffers the launches share
(the scalar inputs' dummy pointer, the scratch of sorted launches)."""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..runtime import device as _device
from ._table import NCLASS

__all__ = ["FIRST_PER_UNIT", "GROWTH", "LAUNCH_CPU", "LAUNCH_OTHER", "PIECE_SECONDS",
           "RESIDENT_BYTES", "SORT_LAUNCH", "UNSORTED_MAX", "Interrupted", "chunk", "cost_cap",
           "dummy", "identity", "interrupt_chunks", "launch_elements", "max_alloc",
           "measured_cap", "pieces", "record_cost", "sort_lock", "sort_scratch", "sorting",
           "span", "stopper"]

#: elements per kernel launch on CPU devices (on others: LAUNCH_OTHER for device arrays, and
#: _transfer.slab() for streamed NumPy data).  A larger call is computed in launches of at most
#: this many elements, so that the host returns to Python between them and Ctrl-C
#: (KeyboardInterrupt) stops a call within one launch; no launch needs a buffer above the
#: device's maximum allocation either.
LAUNCH_CPU = 1 << 22
LAUNCH_OTHER = 1 << 26
#: elements per sorted launch: a larger piece is sorted and computed in launches of this size
SORT_LAUNCH = 1 << 26
#: host arrays up to this many bytes are uploaded whole once per call on devices with their
#: own memory (larger ones are streamed piece by piece, through pinned staging: an upload
#: whole is a new buffer and a pageable copy, slower for large arrays)
RESIDENT_BYTES = 1 << 20
#: elements of a sorted launch at most that are computed in their own order, unsorted: the
#: lanes of one warp run every class its elements take whatever their order, and sorting costs
#: three launches (results do not depend on the order)
UNSORTED_MAX = 32
#: seconds a launch lasts at most, about (from the kernel's measured pace), so that Ctrl-C
#: stops a call of a costly function soon
PIECE_SECONDS = 0.1
#: elements per compute unit of a kernel's first launch on a CPU device, before its pace is
#: measured (a launch has at least one element per compute unit)
FIRST_PER_UNIT = 4
#: a launch is at most this many times the elements of the one before it (a short launch's
#: time is mostly its own cost, not its elements': it says little about larger ones)
GROWTH = 64


def pieces(
    dims: tuple[int, ...], strides: list[tuple[int, ...]], cap: int | Callable[[], int]
) -> Iterator[tuple[int, tuple[int, ...], list[int]]]:
    """Cut the C-order index space ``dims`` into blocks of at most ``cap`` elements.

    Yields ``(start, sub_dims, offsets)``: the block's first flat index, its dimensions (as many
    as ``dims``, leading ones of length 1 where the cut is deeper) and, for each stride vector
    of ``strides``, the offset of the block's first element.  Whole rows of the leading axis
    are taken together where they fit, otherwise each row is cut along the next axis.  A block
    spans at most ``cap`` consecutive elements of any compact array read through ``strides``
    (strides no larger than the C-order strides of ``dims``).  ``cap`` may be a function,
    asked before each block (launches sized by their measured cost).
    """
    limit = cap if callable(cap) else lambda: cap
    total = math.prod(dims)
    if total <= limit():
        yield 0, dims, [0] * len(strides)
        return
    inner = math.prod(dims[1:])
    if inner <= limit():
        a = 0
        while a < dims[0]:
            b = min(a + max(1, limit() // inner), dims[0])
            yield a * inner, (b - a, *dims[1:]), [a * s[0] for s in strides]
            a = b
        return
    for a in range(dims[0]):
        for start, sub, offs in pieces(dims[1:], [s[1:] for s in strides], cap):
            yield (a * inner + start, (1, *sub),
                   [a * s[0] + o for s, o in zip(strides, offs)])


def span(dims: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements of a compact array that a block ``dims`` reads through ``strides``."""
    return sum((d - 1) * s for d, s in zip(dims, strides)) + 1


def max_alloc(bound: _device.BoundDevice) -> int:
    """Bytes of the largest buffer the bound device allocates (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``,
    asked once per device).  Tests replace this function to exercise the pieces of large calls."""
    return bound.max_alloc


def launch_elements(bound: _device.BoundDevice) -> int:
    """Elements of float64 one launch computes at most on the bound device: its launch size
    (:data:`LAUNCH_CPU`, :data:`LAUNCH_OTHER`) within its maximum allocation."""
    cap = LAUNCH_CPU if bound.info.type == "CPU" else LAUNCH_OTHER
    return max(1, min(cap, max_alloc(bound) // 8))


# -- launches sized by their cost ---------------------------------------------------------------


def cost_cap(k: Any, bound: _device.BoundDevice) -> int:
    """Elements of the next launch of ``k`` on ``bound`` (:func:`record_cost`);
    :data:`FIRST_PER_UNIT` per compute unit before any launch was timed."""
    size = k.__dict__.get("_piece")
    if size is None or size[0] is not bound:
        return FIRST_PER_UNIT * max(1, bound.info.compute_units)
    return int(size[1])


def measured_cap(k: Any, bound: _device.BoundDevice) -> int | None:
    """:func:`cost_cap` once a launch of ``k`` on ``bound`` was timed, else ``None``."""
    size = k.__dict__.get("_piece")
    return None if size is None or size[0] is not bound else int(size[1])


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


# -- the chunks of an interrupted dask compute ---------------------------------------------------


class Interrupted(RuntimeError):
    """Raised between the pieces of a dask chunk whose compute was interrupted (Ctrl-C)."""


#: bumped by :func:`interrupt_chunks`: a chunk begun under an older value stops
_generation = [0]
_chunk = threading.local()


@contextlib.contextmanager
def chunk() -> Iterator[None]:
    """The calls in the block (a dask chunk, on a worker's thread) stop between their pieces,
    raising :class:`Interrupted`, once :func:`interrupt_chunks` is called."""
    before = getattr(_chunk, "generation", None)
    _chunk.generation = _generation[0]
    try:
        yield
    finally:
        _chunk.generation = before


def interrupt_chunks() -> None:
    """Stop the chunks running now (:func:`chunk`) after their current piece: a dask compute
    was interrupted, and its scheduler no longer waits for them.  Chunks of other computes
    running at that moment stop too."""
    _generation[0] += 1


def stopper() -> Callable[[], None] | None:
    """For a call in a :func:`chunk`: a function, callable from any thread, that raises
    :class:`Interrupted` once the chunk is to stop; ``None`` outside chunks."""
    began = getattr(_chunk, "generation", None)
    if began is None:
        return None

    def check() -> None:
        if _generation[0] != began:
            raise Interrupted("the dask compute this chunk belongs to was interrupted")

    return check


# -- buffers the launches share ------------------------------------------------------------------


def dummy(bound: _device.BoundDevice) -> Any:
    """A one-element buffer for the pointer parameter of a scalar input."""
    import pyopencl as cl

    buf = bound.resources.dummy
    if buf is None:
        buf = bound.resources.dummy = cl.Buffer(bound.context, cl.mem_flags.READ_ONLY, 8)
    return buf


def identity(bound: _device.BoundDevice) -> Any:
    """The permutation 0, 1, ..., :data:`UNSORTED_MAX` - 1 (int32) on ``bound``: the order of a
    sorted launch of at most that many elements, computed without sorting."""
    buf = bound.resources.identity
    if buf is None:
        import numpy as np
        import pyopencl as cl

        mf = cl.mem_flags
        buf = bound.resources.identity = cl.Buffer(
            bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR,
            hostbuf=np.arange(UNSORTED_MAX, dtype=np.int32))
    return buf


def sorting(bound: _device.BoundDevice, queue: Any, n: int, nblocks: int
            ) -> tuple[threading.Lock, Any, Any, Any]:
    """:func:`sort_lock` and :func:`sort_scratch` of a sorted launch of ``n`` elements in
    ``nblocks`` blocks (the buffers may be taken before the lock: one grown meanwhile is
    another thread's, and the old ones stay alive while used)."""
    res, key = bound.resources, id(queue)
    lock = res.sort_locks.get(key) or sort_lock(bound, queue)
    have = res.sort.get(key)
    if have is None or have[0] < n or have[1] < nblocks:
        return (lock, *sort_scratch(bound, queue, n, nblocks))
    return lock, have[2], have[3], have[4]


def sort_lock(bound: _device.BoundDevice, queue: Any) -> threading.Lock:
    """The lock of ``queue``'s sort scratch (:func:`sort_scratch`): held while a sorted launch
    enqueues its four kernels."""
    lock: threading.Lock = bound.resources.sort_locks.setdefault(id(queue), threading.Lock())
    return lock


def sort_scratch(bound: _device.BoundDevice, queue: Any, n: int, nblocks: int
                 ) -> tuple[Any, Any, Any]:
    """The class, count and permutation buffers of sorted launches on ``queue`` (kept per queue:
    launches on one in-order queue reuse them one after the other)."""
    have = bound.resources.sort.get(id(queue))
    if have is None or have[0] < n or have[1] < nblocks:
        import pyopencl as cl

        mf = cl.mem_flags
        cap, capb = max(n, have[0] if have else 0), max(nblocks, have[1] if have else 0)
        have = (cap, capb, cl.Buffer(bound.context, mf.READ_WRITE, cap),
                cl.Buffer(bound.context, mf.READ_WRITE, 4 * NCLASS * capb),
                cl.Buffer(bound.context, mf.READ_WRITE, 4 * cap), queue)
        bound.resources.sort[id(queue)] = have
    return have[2], have[3], have[4]
