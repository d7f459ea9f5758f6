# SPDX-License-Identifier: GPL-2.0-or-later
"""Bayesian-GLM negative log-posterior and its gradient over grids of coefficient vectors.

For every grid point ``b_j`` (a row of ``b``), with ``d = b_j - mu`` and
``eta_i = alpha_i + x_i . b_j``::

    qf_j   = 0.5 d' P d + sum_i l_i(eta_i)        (f2, the negative log-posterior)
    grad_j = P d        + sum_i x_i g_i(eta_i)     (f3, its gradient), g_i = dl_i / deta

where ``l_i`` is the negative log-likelihood of observation ``i`` under the family and link
(:func:`f2_f3`'s docstring states the mathematics and lists the families).  The grid
points are independent and all of them read the whole data set, so one fused OpenCL kernel per
family/link evaluates them without ever storing ``eta`` (``cl/kernels/f2_f3_driver.cl`` describes
the work decomposition).

Three ways in:

* :func:`f2_f3` -- one call, NumPy or dask arrays in and out;
* :class:`Posterior` -- the data set checked once and kept on the device, for many grids;
* :class:`FactorialGrid` -- the full factorial grid of per-coefficient value vectors, decoded on
  the device instead of materialised.

Examples
--------
>>> import numpy as np
>>> from daskcl.glm import f2_f3
>>> rng = np.random.default_rng(1)
>>> x = rng.normal(size=(50, 3)); wt = np.full(50, 10.0); y = rng.integers(0, 11, 50) / 10
>>> b = rng.normal(size=(1000, 3))
>>> qf, grad = f2_f3("binomial", "logit", b, y, x, np.zeros(3), np.eye(3), np.zeros(50), wt)
>>> qf.shape, grad.shape
((1000,), (1000, 3))
"""

from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..kernels import _transfer
from ..kernels._elementwise import is_dask_array
from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import ProgramSource, get_library
from ..runtime.program import set_args as _set_args
from .checks import check_chunks, check_data, real
from .family import FAMILIES, _family_program, kernel_stem, program_source
from .grid import FactorialGrid
from .tuning import Tuning, _even

__all__ = ["FAMILIES", "GLM_SLAB", "GRID_MIN_ROWS", "MIN_ROWS", "PIECES", "SMALL_DOUBLES",
           "Posterior", "f2_f3", "kernel_stem", "program_source"]

#: a call streamed from NumPy is cut into at least this many pieces of at least MIN_ROWS points:
#: two overlap one piece's upload with the other's kernel, more pay more than they overlap
#: (``results/glm-pieces-gpu-h100.json``, benchmarks/README.md)
PIECES = 2
MIN_ROWS = 8192
#: doubles of results a streamed piece holds at most (the size the record above was measured at)
GLM_SLAB = 1 << 22
#: grid points per piece at least of a :class:`FactorialGrid` streamed back to NumPy
GRID_MIN_ROWS = 1 << 18
#: doubles (b, qf and grad) of a call from NumPy taken in one write, one launch and one read
SMALL_DOUBLES = 1 << 17


# -- the data set on the device -------------------------------------------------------------


@functools.cache
def _copy_kernel() -> Any:
    """``y = x`` elementwise: a device array of any element strides copied into a C-ordered
    one, on the device."""
    from ..kernels._elementwise import ElementwiseKernel

    return ElementwiseKernel("double x", "double y", "y = x;", name="dk_f2_f3_copy")


@dataclass
class _DeviceData:
    obs: Any
    mu: Any
    P: Any
    dummy: Any
    #: x with its rows zero-padded to a width, by width (l2 for the group kernel, l2 rounded
    #: up to even for the item kernel, Tuning.l2q for the tile kernel)
    x: dict[int, Any] = field(default_factory=dict)


@dataclass
class _Prepared:
    """What a small call of the default tuning needs beyond its data, on one device, kept
    while the configuration and the programs in memory stay as they were (``stamp``)."""

    stamp: Any
    tuning: Tuning
    program: _program.BuiltProgram
    data: _DeviceData
    x: Any


#: the scalar argument types of the f2_f3 kernels (m, j0, l1; the rest buffers)
_SIG = (np.int64, np.int64, np.int32) + (None,) * 8


#: per thread: (device, its queue, the scratch buffers of b, qf and grad, their doubles)
_scratch = threading.local()


def _scratch_buffers(bound: _device.BoundDevice, sizes: tuple[int, int, int]
                     ) -> tuple[Any, tuple[Any, ...]]:
    import pyopencl as cl

    have = getattr(_scratch, "have", None)
    if (have is None or have[0] is not bound or sizes[0] > have[3][0] or sizes[1] > have[3][1]
            or sizes[2] > have[3][2]):
        got = tuple(max(n, 1024) for n in sizes)
        bufs = tuple(cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 8 * n) for n in got)
        have = _scratch.have = (bound, _transfer.thread_queue(bound), bufs, got)
    return have[1], have[2]


class Posterior:
    """A GLM data set and prior, ready to evaluate ``f2_f3`` on many grids.

    The data are checked and copied once; each process uploads them to its device on first use
    (and prepares the per-observation table there), so a ``Posterior`` pickles as plain NumPy
    data and can be shipped to dask workers.

    Parameters
    ----------
    family, link, y, x, mu, P, alpha, wt
        As in :func:`f2_f3`.

    Examples
    --------
    >>> post = Posterior("poisson", "log", y, x, mu, P, alpha, wt)     # doctest: +SKIP
    >>> qf, grad = post.f2_f3(b)                                         # doctest: +SKIP
    """

    def __init__(
        self, family: str, link: str, y: Any, x: Any, mu: Any, P: Any, alpha: Any, wt: Any
    ) -> None:
        self.stem = kernel_stem(family, link)
        self.family, self.link = family, link
        self.y, self.x, self.mu, self.P, self.alpha, self.wt = check_data(
            family, y, x, mu, P, alpha, wt)
        self.l1, self.l2 = self.x.shape
        self._init_state()

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._devices: dict[int, _DeviceData] = {}
        self._prepared: dict[int, _Prepared] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"], state["_devices"], state["_prepared"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_state()

    def __repr__(self) -> str:
        return f"Posterior({self.family!r}, {self.link!r}, l1={self.l1}, l2={self.l2})"

    def __dask_tokenize__(self) -> Any:
        h = hashlib.sha1()
        for a in (self.y, self.x, self.mu, self.P, self.alpha, self.wt):
            h.update(a.tobytes())
            h.update(b"|")
        return ("Posterior", self.stem, h.hexdigest())

    # -- device side --------------------------------------------------------------------------

    def source(self) -> ProgramSource:
        """The program this posterior's kernels are built from (:func:`program_source`)."""
        return _family_program(self.stem, str(get_library().root))[0]

    def build_options(self, tuning: Tuning, fact: bool) -> tuple[str, ...]:
        """The build options of the kernels for a resolved ``tuning`` (:meth:`resolve_tuning`);
        ``fact``: the kernels that decode a :class:`FactorialGrid`."""
        return tuning.options(self.l2, self._nobsp(), fact)

    def build(self, tuning: Tuning, fact: bool) -> _program.BuiltProgram:
        """The program of :meth:`source` built with :meth:`build_options` (cached)."""
        return _program.build(self.source(), self.build_options(tuning, fact))

    def _nobsp(self) -> int:
        return _even(_family_program(self.stem, str(get_library().root))[1])

    def _device_data(self, bound: _device.BoundDevice, prg: _program.BuiltProgram) -> _DeviceData:
        import pyopencl as cl

        key = _program.context_key(bound)
        with self._lock:
            data = self._devices.get(key)
            if data is not None:
                return data
            ctx, queue, mf = bound.context, bound.queue, cl.mem_flags

            def upload(a: np.ndarray) -> Any:
                if a.size == 0:
                    a = np.zeros(1)
                return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)

            nobsp = self._nobsp()
            obs = cl.Buffer(ctx, mf.READ_WRITE, max(self.l1, 1) * nobsp * 8)
            if self.l1:
                bufs = [upload(a) for a in (self.y, self.wt, self.alpha)]
                kern, lock = prg.kernel("f2_f3_prepare")
                with lock:
                    _set_args(kern, np.int32(self.l1), *bufs, obs)
                    prepared = cl.enqueue_nd_range_kernel(queue, kern, (self.l1,), None)
                # waited for: the grid's pieces launch on the slots' queues (_transfer.stream),
                # which the device's queue does not order, and would read obs before it is set
                prepared.wait()
            data = _DeviceData(obs, upload(self.mu), upload(self.P), upload(np.zeros(3)))
            self._devices[key] = data
            return data

    def _x_buffer(self, bound: _device.BoundDevice, data: _DeviceData, tuning: Tuning) -> Any:
        import pyopencl as cl

        path = tuning.path
        width = _even(self.l2) if path == "item" else tuning.l2q(self.l2) if path == "tile" else self.l2
        with self._lock:
            if width not in data.x:
                xp = np.zeros((max(self.l1, 1), width))
                xp[: self.l1, : self.l2] = self.x
                data.x[width] = cl.Buffer(
                    bound.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=xp
                )
            return data.x[width]

    def enqueue(
        self, tuning: Tuning, fact: bool, m: int, j0: int, bsrc: Any, fdesc: Any | None,
        qf: Any, grad: Any, queue: Any = None,
    ) -> Any:
        """Launch the kernel for ``m`` grid points (``tuning`` resolved); returns its event.

        ``bsrc`` is a device buffer: the ``(m, l2)`` rows of ``b``, or for ``fact`` the
        concatenated values of a factorial grid whose descriptor is ``fdesc`` (the two arrays
        of :meth:`FactorialGrid.descriptor`, uploaded) and whose first point of this launch is
        ``j0``.  ``qf`` and ``grad`` are device buffers of ``m`` and
        ``m * l2`` doubles.
        """

        bound = _device.current()
        queue = queue if queue is not None else bound.queue
        prg = self.build(tuning, fact)
        data = self._device_data(bound, prg)
        return self._launch(bound, prg, data, self._x_buffer(bound, data, tuning), tuning, m, j0,
                            bsrc, fdesc, qf, grad, queue)

    def _launch(self, bound: _device.BoundDevice, prg: _program.BuiltProgram, data: _DeviceData,
                xbuf: Any, tuning: Tuning, m: int, j0: int, bsrc: Any, fdesc: Any | None,
                qf: Any, grad: Any, queue: Any) -> Any:
        import pyopencl as cl

        kern, lock = prg.kernel(f"f2_f3_{tuning.path}")
        with lock:
            _set_args(kern, m, j0, self.l1, bsrc, fdesc if fdesc is not None else data.dummy,
                      xbuf, data.obs, data.mu, data.P, qf, grad, types=_SIG)
            return cl.enqueue_nd_range_kernel(queue, kern, _global_size(bound, tuning, m),
                                              (tuning.work_group,))

    def resolve_tuning(self, tuning: Tuning | None = None) -> Tuning:
        """The launch configuration used on the bound device (``tuning`` fills in the rest)."""
        bound = _device.current()
        return (tuning or Tuning()).resolve(
            self.l2, self._nobsp(), bound.device, bound.info.type == "GPU"
        )

    def _rows(self, bound: _device.BoundDevice, streamed: bool, m: int = 0) -> int:
        """Grid points per launch: where the data stream through a device with its own memory,
        a piece of at most about :data:`GLM_SLAB` doubles of results and at most
        ``1 / PIECES`` of the call's ``m`` points (at least ``MIN_ROWS``), so that one piece's
        upload, another's kernel and a third's download overlap; otherwise up to 2^22, within
        the device's largest buffer."""
        cap = max(1, min(1 << 22, int(bound.max_alloc) // (8 * self.l2)))
        if streamed and _transfer.mode(bound) != "host":
            cap = min(cap, max(1, GLM_SLAB // (self.l2 + 1)),
                      max(MIN_ROWS, -(-m // PIECES)))
        return int(cap)

    def _small(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A call of the default tuning from NumPy of at most :data:`SMALL_DOUBLES`: one write,
        one launch and one read on the thread's queue, with the program, the data and the
        tuning prepared once per device (an optimiser's step)."""
        import pyopencl as cl

        bound = _device.current()
        stamp = (config.stamp(), _program.memory_generation())
        key = _program.context_key(bound)
        p = self._prepared.get(key)
        if p is None or p.stamp != stamp:
            tun = self.resolve_tuning(None)
            prg = self.build(tun, False)
            data = self._device_data(bound, prg)
            p = self._prepared[key] = _Prepared(stamp, tun, prg, data,
                                                self._x_buffer(bound, data, tun))
        m, l2 = b.shape
        queue, (bbuf, qbuf, gbuf) = _scratch_buffers(bound, (m * l2, m, m * l2))
        flat = np.ascontiguousarray(b, dtype=np.float64)
        qf, grad = np.empty(m), np.empty((m, l2))
        cl.enqueue_copy(queue, bbuf, flat, is_blocking=False)
        self._launch(bound, p.program, p.data, p.x, p.tuning, m, 0, bbuf, None, qbuf, gbuf, queue)
        cl.enqueue_copy(queue, qf, qbuf, is_blocking=False)
        cl.enqueue_copy(queue, grad, gbuf, is_blocking=True)
        return qf, grad

    def _compute(self, b: np.ndarray | FactorialGrid, tuning: Tuning | None = None,
                 device: bool = False) -> tuple[Any, Any]:
        """NumPy (or, with ``device``, device-array) ``qf`` and ``grad`` for host ``b``: the
        rows of ``b`` stream to the device, the results back (:func:`_transfer.stream`); a
        factorial grid uploads only its descriptor."""

        if device:
            return self._compute_device(b, tuning)
        if (tuning is None and isinstance(b, np.ndarray)
                and 0 < b.shape[0] * (2 * self.l2 + 1) <= SMALL_DOUBLES):
            return self._small(b)
        grid = b if isinstance(b, FactorialGrid) else None
        m = len(b)
        bound = _device.current()
        qf = _transfer.result_array(bound, (m,))
        grad = _transfer.result_array(bound, (m, self.l2))
        if m == 0:
            return qf, grad
        tun = self.resolve_tuning(tuning)
        fdesc = vals = None
        if grid is not None:
            vals, fdesc = _descriptor(bound, grid)
            flat_b = None
        else:
            assert isinstance(b, np.ndarray)
            flat_b = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
        rows = self._rows(bound, True, m)
        if grid is not None:
            # nothing goes up: pieces overlap only the results' download with the next
            # kernel, which pays for a piece's own cost only in large calls
            rows = min(max(rows, GRID_MIN_ROWS), self._rows(bound, False))
        l2 = self.l2
        pieces = [_transfer.Piece([None if flat_b is None else (s * l2, e * l2)],
                                  [(s, e), (s * l2, e * l2)], (s, e))
                  for s, e in ((s, min(m, s + rows)) for s in range(0, m, rows))]

        def launch(p: _transfer.Piece, ins: list[Any], outs: list[Any], queue: Any) -> Any:
            s, e = p.arg
            if grid is not None:
                return self.enqueue(tun, True, e - s, grid.start + s, vals, fdesc, outs[0],
                                    outs[1], queue)
            return self.enqueue(tun, False, e - s, 0, ins[0], None, outs[0], outs[1], queue)

        _transfer.stream(bound, pieces, [flat_b], [qf, grad.reshape(-1)], launch)
        return qf, grad

    def _compute_device(self, b: Any, tuning: Tuning | None) -> tuple[Any, Any]:
        """Device-array ``qf`` and ``grad`` for a device-array, NumPy or factorial ``b``:
        nothing comes back to the host; launches of at most 2^22 points write sub-regions of
        the outputs."""
        import pyopencl.array as cla

        bound = _device.current()
        queue = bound.queue
        grid = b if isinstance(b, FactorialGrid) else None
        m = len(b) if grid is not None else int(b.shape[0])
        qf = cla.empty(queue, (m,), np.float64)
        grad = cla.empty(queue, (m, self.l2), np.float64)
        if m == 0:
            return qf, grad
        tun = self.resolve_tuning(tuning)
        fdesc = vals = bsrc = None
        if grid is not None:
            vals, fdesc = _descriptor(bound, grid)
        elif _transfer.is_device_array(b):
            op = _transfer.device_operand("f2_f3", "b", b, bound)
            arr = op.array
            if not arr.flags.c_contiguous:      # Fortran order, a transpose, a strided view
                arr = _copy_kernel().compute([arr], device=True)[0]
            elif op.offset:
                arr = arr.copy()
            _transfer.after_other_queues(queue, [arr])
            bsrc = arr.base_data
        else:
            bsrc = _transfer.upload(bound, np.ascontiguousarray(b, dtype=np.float64).reshape(-1))
        rows = self._rows(bound, False)
        l2 = self.l2
        events = []     # released after the finish (see _transfer._piece)
        for s in range(0, m, rows):
            e = min(m, s + rows)
            whole = s == 0 and e == m

            def region(buf: Any, lo: int, hi: int, whole: bool = whole) -> Any:
                return buf if whole else buf.get_sub_region(lo * 8, (hi - lo) * 8)

            q_out = region(qf.base_data, s, e)
            g_out = region(grad.base_data, s * l2, e * l2)
            if grid is not None:
                events.append(self.enqueue(tun, True, e - s, grid.start + s, vals, fdesc, q_out,
                                           g_out, queue))
            else:
                events.append(self.enqueue(tun, False, e - s, 0, region(bsrc, s * l2, e * l2),
                                           None, q_out, g_out, queue))
        queue.finish()
        del events
        return qf, grad

    # -- public -------------------------------------------------------------------------------

    def f2_f3(self, b: Any, *, chunks: Any = None, tuning: Tuning | None = None,
              device: bool = False) -> tuple[Any, Any]:
        """``(qf, grad)`` at every grid point of ``b``; see :func:`f2_f3`.

        Parameters
        ----------
        b : (m1, l2) array, dask array, pyopencl array or FactorialGrid
            The grid, one coefficient vector per row.
        chunks : int, tuple or "auto", optional
            Return dask arrays chunked this way along the grid axis (``"auto"``: dask's
            choice; a dask ``b`` is rechunked so).
        tuning : Tuning, optional
            Launch configuration; the default suits the device.
        device : bool, default False
            Return device arrays (a device-array ``b`` always gives them).

        Returns
        -------
        qf : (m1,) array
        grad : (m1, l2) array
            NumPy arrays, dask arrays for a dask ``b`` or with ``chunks``, device arrays for
            a device-array ``b`` or with ``device``.

        Examples
        --------
        >>> import numpy as np
        >>> from daskcl.glm import Posterior
        >>> x = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
        >>> post = Posterior("poisson", "log", np.array([1.0, 2.0, 4.0, 9.0]), x, np.zeros(2),
        ...                  np.eye(2), 0.0, 1.0)
        >>> qf, grad = post.f2_f3(np.array([[0.0, 0.7], [0.1, 0.7]]))
        >>> qf.shape, grad.shape
        ((2,), (2, 2))
        """
        if tuning is not None and not isinstance(tuning, Tuning):
            raise TypeError(f"f2_f3: tuning must be a daskcl.glm.Tuning, not {tuning!r}")
        if not isinstance(device, (bool, np.bool_)):
            raise TypeError(f"f2_f3: device must be True or False, not {device!r}")
        if _transfer.is_device_array(b):
            if chunks is not None:
                raise ValueError("f2_f3: b is a device array; chunks= makes dask arrays: "
                                 "pass b.get() with chunks, or no chunks")
            if b.ndim != 2 or b.shape[1] != self.l2:
                self._check_b(tuple(b.shape))
            return self._compute_device(b, tuning)
        if device and (chunks is not None or is_dask_array(b)):
            raise ValueError("f2_f3: device=True gives device arrays, chunks= or a dask b dask "
                             "arrays: choose one")
        if chunks is not None:
            m1 = len(b) if isinstance(b, FactorialGrid) else (np.shape(b) or (None,))[0]
            check_chunks(chunks, m1)
        if isinstance(b, FactorialGrid):
            if b.shape[1] != self.l2:
                raise ValueError(
                    f"f2_f3: the factorial grid has {b.shape[1]} coefficients but x has shape "
                    f"{self.x.shape} (l2 = {self.l2})"
                )
            if chunks is not None:
                return self._dask_factorial(b, chunks, tuning)
            return self._compute(b, tuning, bool(device))
        if is_dask_array(b):
            if chunks is not None:
                # the grid axis rechunked as asked: the results follow b's chunks
                b = b.rechunk({0: chunks})
            return self._dask(b, tuning)
        barr = real("b", b)
        self._check_b(barr.shape)
        if chunks is not None:
            import dask.array as da

            return self._dask(da.from_array(barr, chunks=(chunks, -1)), tuning)
        return self._compute(barr, tuning, bool(device))

    def _check_b(self, shape: tuple[int, ...]) -> None:
        if len(shape) != 2 or shape[1] != self.l2:
            raise ValueError(
                f"f2_f3: b has shape {shape} but x has shape {self.x.shape}: b must have shape "
                f"(m1, l2) = (m1, {self.l2}), one coefficient vector per row"
            )

    def _dask(self, b: Any, tuning: Tuning | None) -> tuple[Any, Any]:
        import dask

        if b.dtype.kind not in "biuf":
            raise TypeError(f"f2_f3: b must be real numbers, got dtype {b.dtype}")
        self._check_b(b.shape)
        if b.numblocks[1] != 1:
            b = b.rechunk({1: -1})
        if b.dtype != np.float64:
            b = b.astype(np.float64)
        post = dask.delayed(self, pure=True)
        out = b.map_blocks(
            _rows_block, post, tuning, dtype=np.float64,
            chunks=(b.chunks[0], (self.l2 + 1,)), meta=np.empty((0, self.l2 + 1)),
        )
        return out[:, 0], out[:, 1:]

    def _dask_factorial(self, grid: FactorialGrid, chunks: Any, tuning: Tuning | None
                        ) -> tuple[Any, Any]:
        import dask
        import dask.array as da
        from dask.array.core import normalize_chunks

        sizes = normalize_chunks((chunks,), shape=(len(grid),), dtype=np.float64)[0]
        starts = np.cumsum((0, *sizes[:-1]), dtype=np.int64)
        bounds = np.column_stack([starts, starts + np.asarray(sizes, dtype=np.int64)])
        idx = da.from_array(bounds, chunks=(1, 2))
        out = idx.map_blocks(
            _grid_block, dask.delayed(self, pure=True), dask.delayed(grid, pure=True), tuning,
            dtype=np.float64, chunks=(sizes, (self.l2 + 1,)), meta=np.empty((0, self.l2 + 1)),
        )
        return out[:, 0], out[:, 1:]


def _global_size(bound: _device.BoundDevice, tuning: Tuning, m: int) -> tuple[int]:
    """The global size of a launch of ``m`` grid points under a resolved ``tuning``."""
    if tuning.path == "item":
        ngroups = -(-m // (tuning.work_group * tuning.points_per_item))
    elif tuning.path == "tile":
        ngroups = -(-m // tuning.points_per_group)
    else:
        ngroups = min(m, max(bound.info.compute_units, 1) * 64)
    return (ngroups * tuning.work_group,)


def _descriptor(bound: _device.BoundDevice, grid: FactorialGrid) -> tuple[Any, Any]:
    """The device buffers of a factorial grid's descriptor: its values and their layout."""
    import pyopencl as cl

    mf = cl.mem_flags
    return tuple(cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
                 for a in grid.descriptor())  # type: ignore[return-value]


def _stack(qf: np.ndarray, grad: np.ndarray) -> np.ndarray:
    out = np.empty((len(qf), grad.shape[1] + 1))
    out[:, 0] = qf
    out[:, 1:] = grad
    return out


def _rows_block(b: np.ndarray, post: Posterior, tuning: Tuning | None) -> np.ndarray:
    return _stack(*post._compute(np.ascontiguousarray(b, dtype=np.float64), tuning))


def _grid_block(bounds: np.ndarray, post: Posterior, grid: FactorialGrid,
                tuning: Tuning | None) -> np.ndarray:
    start, stop = (int(v) for v in bounds[0])
    return _stack(*post._compute(grid[start:stop], tuning))


def f2_f3(
    family: str, link: str, b: Any, y: Any, x: Any, mu: Any, P: Any, alpha: Any, wt: Any,
    *, chunks: Any = None, tuning: Tuning | None = None, device: bool = False,
) -> tuple[Any, Any]:
    """The GLM negative log-posterior ``qf`` (f2) and its gradient ``grad`` (f3) over a grid.

    For grid point ``j`` with ``d = b_j - mu`` and ``eta_i = alpha_i + x_i . b_j``::

        qf_j   = 0.5 d' P d + sum_i l_i(eta_i),     grad_j = P d + sum_i x_i g_i(eta_i)

    with no log-determinant or 2 pi constant in the prior term and ``l_i`` keeping its
    constants:

    ==========================  ===========================================  =====================
    family / link               l_i (negative log-likelihood)                g_i = dl_i / deta
    ==========================  ===========================================  =====================
    binomial / logit            -log dbinom(s; n, p), p = 1/(1 + e^-eta)     wt (p - y)
    binomial / probit           same, p = Phi(eta)                           -wt [y phi/Phi(eta)
                                                                             - (1-y) phi/Phi(-eta)]
    binomial / cloglog          same, p = 1 - exp(-e^eta)                    -wt [y a/p - (1-y) a/(1-p)],
                                                                             a = exp(eta - e^eta)
    poisson / log               wt [m - y log m + lgamma(y + 1)], m = e^eta   wt (m - y)
    Gamma / log                 -log dgamma(y; shape wt, scale m / wt)       wt (1 - y / m)
    gaussian / identity         0.5 log(2 pi) - 0.5 log wt                   wt (eta - y)
                                + 0.5 wt (y - eta)^2
    ==========================  ===========================================  =====================

    For the binomial, ``y`` is the proportion of successes and ``wt`` the number of trials:
    the objective uses the rounded counts ``n = round(wt)``, ``s = round(y wt)`` and the
    gradient the unrounded ``y`` and ``wt``.  quasibinomial and quasipoisson use the binomial
    and Poisson formulas (``y`` need not be a count for quasipoisson).

    Every term is evaluated on the log scale from ``eta`` directly, split at the observation's
    mode where that matters (``cl/kernels/f2_f3_<family>_<link>.cl`` say how), so values stay
    accurate near the mode and finite for any finite ``eta`` even where ``p``, ``1 - p`` or
    ``exp(eta)`` would round to 0 or overflow (R's density at such a rounded ``p`` would be 0,
    and ``qf`` Inf).  Outside the support the value is what R's density gives: ``y`` outside
    [0, 1] (binomial, with a warning), ``y < 0`` (poisson, Gamma) give ``qf = +Inf``; ``wt = 0``
    gives +Inf for gaussian and Gamma (R's dnorm with infinite sd, dgamma's point mass at 0;
    -Inf at y = 0) and a zero term for binomial and poisson; ``wt < 0`` gives NaN.  NaN in an input gives NaN
    in the outputs that depend on it: a NaN in row ``j`` of ``b`` only in ``qf[j]`` and
    ``grad[j]``; in ``P[k, k']`` in ``qf`` and ``grad[:, k]``; in ``x``, ``y``, ``alpha``,
    ``wt``, ``mu`` everywhere.

    Parameters
    ----------
    family, link : str
        One of the pairs of the table (and quasibinomial, quasipoisson).
    b : (m1, l2) array, dask array, ``pyopencl.array.Array`` or :class:`FactorialGrid`
        The grid, one coefficient vector per row.  A device array (on the bound device's
        context) gives device arrays ``qf`` and ``grad``, and nothing crosses to the host.  A dask array may be chunked along axis 0
        (axis 1 is made one chunk); then ``qf`` and ``grad`` are dask arrays with the same
        chunks along the grid axis (compute them together, ``dask.compute(qf, grad)``: they
        come from the same tasks).
    y, alpha, wt : (l1,) arrays
        Response, offset, prior weights (dispersion folded in).  ``alpha`` and ``wt`` may be
        scalars.
    x : (l1, l2) array
        Design matrix.
    mu : (l2,) array
    P : (l2, l2) array
        Prior mean and (symmetric) precision.
    chunks : int, tuple or "auto", optional
        Return dask arrays chunked this way along the grid axis (for a NumPy ``b``, a dask
        ``b``, which is rechunked so, or a :class:`FactorialGrid`, whose chunks are then
        decoded on the workers): a positive int
        (-1: one chunk), sizes that sum to the number of grid points, or ``"auto"`` (dask's
        choice).
    tuning : Tuning, optional
        Launch configuration (kernel path, work-group size, ...); the default suits the device.
    device : bool, default False
        Return ``pyopencl.array.Array`` results on the bound device (for a NumPy ``b`` or a
        :class:`FactorialGrid`; a device-array ``b`` always gives them).

    Returns
    -------
    qf : (m1,) array
    grad : (m1, l2) array
        NumPy arrays, dask arrays for a dask ``b`` or with ``chunks``, device arrays for a
        device-array ``b`` or with ``device``.

    Raises
    ------
    ValueError
        Unsupported family/link (the message lists the supported ones); arrays whose shapes do
        not fit together (the message names them and their shapes); non-symmetric ``P``, or
        ``P`` with a negative eigenvalue (positive semidefinite is accepted: zero precision is a
        flat prior along its null space); ``chunks`` that are not positive, or sizes that do
        not sum to the number of grid points; ``l2`` beyond the device's limit (a few
        thousand; the message states it).
    TypeError
        Non-numeric arrays; ``chunks`` of another type (a string other than ``"auto"``
        included); ``tuning`` not a :class:`Tuning`.

    Warns
    -----
    RuntimeWarning
        binomial data whose counts are not whole (``y * wt`` or ``wt`` more than 1e-3 from an
        integer), as R's glm warns "non-integer #successes": the likelihood counts
        ``round(y * wt)`` successes of ``round(wt)`` trials.  ``quasibinomial`` does not warn.
        binomial or quasibinomial ``y`` outside [0, 1], where R's glm stops ("y values must be
        0 <= y <= 1"): ``qf`` is +Inf at every ``b`` (counts given as ``y`` are the likely
        cause).

    Examples
    --------
    >>> import numpy as np
    >>> from daskcl.glm import f2_f3, FactorialGrid
    >>> x = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    >>> y = np.array([0.0, 0.5, 0.5, 1.0]); wt = np.full(4, 2.0)
    >>> grid = FactorialGrid([np.linspace(-1, 1, 5), np.linspace(0, 2, 5)])   # 25 points
    >>> qf, grad = f2_f3("binomial", "logit", grid, y, x, np.zeros(2), np.eye(2), np.zeros(4), wt)
    >>> qf.shape, grad.shape
    ((25,), (25, 2))
    """
    post = Posterior(family, link, y, x, mu, P, alpha, wt)
    return post.f2_f3(b, chunks=chunks, tuning=tuning, device=device)
