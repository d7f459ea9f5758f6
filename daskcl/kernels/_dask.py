# SPDX-License-Identifier: GPL-2.0-or-later
"""Elementwise kernels over dask arrays: a lazy dask array whose blocks are computed by the
kernel (its NumPy path) on whichever worker runs them."""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np

from ..errors import every_r_warning
from . import _plan
from ._call import _c_strides, called_as, called_name, is_dask_array

#: an elementwise kernel (:class:`._elementwise.ElementwiseKernel`, which calls this module)
ElementwiseKernel = Any

__all__: list[str] = []


def _block(*blocks: np.ndarray, kernel: ElementwiseKernel, ints: tuple[int, ...],
           nout: int, block_info: Any = None, called: str | None = None) -> np.ndarray:
    """One dask block, on a worker; an operation that reads ``i`` gets the indices of the
    block's elements in the whole array (its location and the array's C-order strides);
    ``called``: the function the user called, where R's keywords sent the call on to this
    kernel (its warnings' name, :func:`._call.called_as`)."""
    counter = None
    if kernel.definition.index and block_info is not None and None in block_info:
        info = block_info[None]
        shape, where = info["shape"], info["array-location"]
        if nout > 1:                # the outputs stacked along a last axis of their own
            shape, where = shape[:-1], where[:-1]
        strides = _c_strides(tuple(shape))
        counter = (0, sum(lo * st for (lo, _), st in zip(where, strides)), strides)
    with called_as(called), every_r_warning(), _plan.chunk():
        res = kernel.compute(blocks, ints, counter=counter)
    arrays = [np.asarray(r, dtype=np.float64) for r in res]
    if nout == 1 and arrays[0].ndim == 0:
        return arrays[0][()]     # a NumPy scalar, as the NumPy call and dask's arithmetic give
    return arrays[0] if nout == 1 else np.stack(arrays, axis=-1)


_watch_lock = threading.Lock()
_watching: list[Any] = []


def _watch() -> None:
    """Register, once, a callback of dask's local schedulers that stops the running chunks of
    a compute interrupted by Ctrl-C (:func:`._plan.interrupt_chunks`): its scheduler raises at
    once, but its worker threads would compute their chunks to the end, holding the device and
    the process's exit."""
    with _watch_lock:
        if not _watching:
            from dask.callbacks import Callback

            cb = Callback(finish=_finished)
            cb.register()
            _watching.append(cb)


def _finished(dsk: Any, state: Any, errored: bool) -> None:
    # called in the scheduler's ``finally``: the exception it raises is the one handled
    if errored and isinstance(sys.exc_info()[1], KeyboardInterrupt):
        _plan.interrupt_chunks()


def _dask_call(kernel: ElementwiseKernel, args: tuple[Any, ...], ints: tuple[int, ...]) -> Any:
    """Lazy dask arrays (``Any``: dask is not typed): NumPy broadcasting (arguments aligned from
    the right), chunks unified as dask's elementwise operations do, keys unique per call."""
    import dask.array as da
    from dask.base import tokenize

    _watch()
    arrays = [a if is_dask_array(a) else np.asarray(a, dtype=np.float64) for a in args]
    ndim = max(np.ndim(a) for a in arrays)
    out_ind = tuple(range(ndim))
    pairs: list[object] = []
    for a in arrays:
        pairs += [a, tuple(range(ndim - np.ndim(a), ndim))]
    nout = len(kernel.definition.outputs)
    called = called_name()     # the blocks' warnings name the function called
    if kernel.definition.index:
        # map_blocks, which gives each block its place in the whole array (block_info, for
        # i), over the arrays with their chunks unified as blockwise unifies them
        _, blocks = da.core.unify_chunks(*[
            x for a in arrays for x in (a if is_dask_array(a) else da.asarray(a),
                                        tuple(range(ndim - np.ndim(a), ndim)))])
        if any(math.isnan(c) for b in blocks for cs in b.chunks for c in cs):
            raise ValueError(f"{kernel.name}: the operation reads i, the element's index in "
                             "the whole array, which a dask array of unknown chunk sizes does "
                             "not give: call its compute_chunk_sizes() first")
        name = f"daskcl-{kernel.name}-" + tokenize(kernel.definition, ints, *blocks)
        if nout == 1:
            return da.map_blocks(_block, *blocks, dtype=np.float64, name=name,
                                 meta=np.empty((0,) * ndim, dtype=np.float64),
                                 kernel=kernel, ints=ints, nout=1, called=called)
        chunks = (*da.core.broadcast_chunks(*[b.chunks for b in blocks]), (nout,))
        stacked = da.map_blocks(_block, *blocks, dtype=np.float64, name=name, chunks=chunks,
                                meta=np.empty((0,) * (ndim + 1), dtype=np.float64),
                                new_axis=ndim, kernel=kernel, ints=ints, nout=nout,
                                called=called)
        return tuple(stacked[..., k] for k in range(nout))
    if nout == 1:
        return da.blockwise(
            _block, out_ind, *pairs, dtype=np.float64,
            meta=np.empty((0,) * ndim, dtype=np.float64), align_arrays=True,
            token=f"daskcl-{kernel.name}", kernel=kernel, ints=ints, nout=1, called=called)
    stacked = da.blockwise(
        _block, (*out_ind, ndim), *pairs, dtype=np.float64,
        meta=np.empty((0,) * (ndim + 1), dtype=np.float64), align_arrays=True,
        new_axes={ndim: nout}, token=f"daskcl-{kernel.name}", kernel=kernel, ints=ints,
        nout=nout, called=called)
    return tuple(stacked[..., k] for k in range(nout))
