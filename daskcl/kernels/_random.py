# SPDX-License-Identifier: GPL-2.0-or-later
"""Random variates of R's distributions on the bound device, reproducible however they are cut.

Every ``r`` function of Rmath.h becomes ``daskcl.nmath.r<name>(size, *params, seed=None,
offset=0, chunks=None)``: ``size`` is an int or a shape, the parameters are Rmath.h's in its
order (with R's defaults) and broadcast against ``size`` as NumPy's ``Generator`` does, and the
result is float64 of shape ``size`` (R's r-functions return doubles, integer-valued for the
discrete distributions).

The generator is Philox4x32-10 (Salmon et al. 2011), counter based: element ``k`` of the result
(flat, C order) is computed from its own stream, keyed by ``seed`` and counted by
``offset + k``, and from its own parameters; nothing else.  So

* a dask array (``chunks=...``) equals the NumPy result element for element for any chunking,
  on one worker or many, and on every device: the generator is integer arithmetic and the
  transforms use only correctly rounded IEEE operations (``cl/nmath/rng_math.cl``);
* ``r(n, ..., seed=s)[m:]`` equals ``r(n - m, ..., seed=s, offset=m)``, so a long stream can be
  produced in pieces;
* the same ``seed`` and ``offset`` give the same numbers for every distribution's own use of the
  stream: take different seeds (or disjoint offsets) for independent samples.

Each distribution uses an exact method (inversion, or a published rejection or mixture method;
see :data:`ROWS` and the ``@source`` line of each unit).  R's domain rules hold: invalid
parameters give NaN, with one ``RuntimeWarning`` per call saying how many were produced (NaN
parameters give NaN without being counted, as in the rest of :mod:`daskcl.nmath`).

Three generators do work that grows with a parameter, and have a documented largest parameter
beyond which they give NaN (counted and warned as above) instead of running without end:
``rsignrank`` (n/64 words per variate) for n above :data:`RSIGNRANK_MAX_N` = 2**28;
``rwilcox`` (one draw per candidate) for m + n above :data:`RWILCOX_MAX_N` = 2**22; ``rhyper``
(a walk of the order of its standard deviation) for m + n above :data:`RHYPER_MAX_N` = 2**45.
R converts these parameters to C ints and does the same O(n) work; beyond 2**31 - 1 its
results are undefined.

Large calls are computed in launches (:data:`daskcl.kernels._elementwise.LAUNCH_CPU` elements at most
on CPU devices, fewer for those costly generators: about 2**21 words per compute unit), each
within the device's largest buffer; the host returns to Python between launches, so Ctrl-C
stops a call within one launch.

Example
-------
>>> from daskcl import nmath
>>> x = nmath.rnorm(5, 10.0, 2.0, seed=42)
>>> bool((nmath.rnorm(10, 10.0, 2.0, seed=42)[:5] == x).all())
True
>>> d = nmath.rgamma((1000, 1000), 2.5, seed=7, chunks=(250, 500))   # a dask array
>>> bool((d.compute() == nmath.rgamma((1000, 1000), 2.5, seed=7)).all())
True
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
import secrets
import string
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import ProgramSource, get_library
from . import _docs
from . import _elementwise as _ew
from ._elementwise import collapse_axes, is_dask_array
from ._table import PUBLIC_MODULE, KernelFunction

__all__ = ["FUNCTIONS", "RHYPER_MAX_N", "ROWS", "RSIGNRANK_MAX_N", "RWILCOX_MAX_N", "RFn",
           "Random", "philox4x32_10"]

_TEMPLATE = "random"
_SLAB = _ew._SLAB        # elements per launch on devices with their own memory
_U64 = 1 << 64

#: largest n of rsignrank (cl/nmath/rsignrank.cl); above it NaN with the warning
RSIGNRANK_MAX_N = 1 << 28
#: largest m + n of rwilcox (cl/nmath/rwilcox.cl)
RWILCOX_MAX_N = 1 << 22
#: largest m + n of rhyper (cl/nmath/rhyper.cl)
RHYPER_MAX_N = 1 << 45
#: work of one launch per compute unit, in 64-bit words drawn (see :attr:`RFn.cost`)
_WORK_CPU = 1 << 21
_WORK_OTHER = 1 << 24


@dataclass(frozen=True)
class RFn:
    """One r-function: its C symbol, Rmath.h parameters and method.

    Parameters
    ----------
    name
        Public name, ``daskcl.nmath.<name>`` (a row of ``tests/data/rmath_api.tsv``).
    csym
        The C function of the kernel library, called as ``csym(&stream, a0, a1, ...)``.
    args
        Parameter names in Rmath.h order; a ``(name, default)`` pair gives R's default.
    summary
        One line for the docstring.
    method
        The method and its reference, for the docstring.
    units
        The kernel's ``@depends_nmath`` names; ``csym`` if empty.
    limit
        The largest parameters the generator takes (NaN beyond), for the docstring and the
        warning; empty where every finite parameter is taken.
    cost
        Words drawn per variate at most, as a function of the largest value of each parameter
        (which it may clip to the limit); ``None`` for a few words.  Launches are sized by it.
    """

    name: str
    csym: str
    args: tuple[str | tuple[str, float], ...]
    summary: str
    method: str
    units: tuple[str, ...] = ()
    limit: str = ""
    cost: Callable[..., float] | None = None

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a if isinstance(a, str) else a[0] for a in self.args)

    @property
    def defaults(self) -> dict[str, float]:
        return {a[0]: a[1] for a in self.args if not isinstance(a, str)}

    @property
    def depends(self) -> tuple[str, ...]:
        return self.units or (self.csym,)


ROWS: tuple[RFn, ...] = (
    # --- inversion and transformations ----------------------------------------------------------
    RFn("runif", "runif", (("min", 0.0), ("max", 1.0)), "Uniform variates on (min, max).",
        "min + (max - min) U, U on the midpoints of a 2^52 grid of (0, 1)."),
    RFn("rnorm", "rnorm", (("mean", 0.0), ("sd", 1.0)), "Normal variates.",
        "Inversion (R's default), Wichura's AS 241 quantile (1988), U with 2^-52 relative "
        "resolution in both tails."),
    RFn("rexp", "rexp", (("scale", 1.0),), "Exponential variates (Rmath.h's scale parameter).",
        "Inversion, scale * -log(U)."),
    RFn("rlnorm", "rlnorm", (("meanlog", 0.0), ("sdlog", 1.0)), "Log-normal variates.",
        "exp of a normal variate."),
    RFn("rcauchy", "rcauchy", (("location", 0.0), ("scale", 1.0)), "Cauchy variates.",
        "Inversion, location - scale * cot(pi U)."),
    RFn("rlogis", "rlogis", (("location", 0.0), ("scale", 1.0)), "Logistic variates.",
        "Inversion, location + scale * log(U / (1 - U))."),
    RFn("rweibull", "rweibull", ("shape", ("scale", 1.0)), "Weibull variates.",
        "Inversion, scale * (-log U)^(1/shape)."),
    # --- gamma family ---------------------------------------------------------------------------
    RFn("rgamma", "rgamma", ("shape", ("scale", 1.0)), "Gamma variates (shape, scale).",
        "Marsaglia & Tsang (2000), ACM TOMS 26, 363-372; shape < 1 by Gamma(shape + 1) "
        "U^(1/shape)."),
    RFn("rbeta", "rbeta", ("shape1", "shape2"), "Beta variates.",
        "Cheng (1978), Comm. ACM 21, 317-322, algorithms BB and BC."),
    RFn("rchisq", "rchisq", ("df",), "Chi-squared variates.", "Gamma(df / 2, scale 2)."),
    RFn("rt", "rt", ("df",), "Student's t variates.", "Z / sqrt(X / df), X chi-squared(df)."),
    RFn("rf", "rf", ("df1", "df2"), "F variates.", "(X1 / df1) / (X2 / df2), chi-squared X."),
    RFn("rnchisq", "rnchisq", ("df", "ncp"), "Noncentral chi-squared variates.",
        "Poisson(ncp / 2) mixture of chi-squared variates, as R."),
    RFn("rnbeta", "rnbeta", ("shape1", "shape2", "ncp"), "Noncentral beta variates.",
        "X / (X + Y), X noncentral chi-squared(2 shape1, ncp), Y chi-squared(2 shape2), as R."),
    # --- discrete -------------------------------------------------------------------------------
    RFn("rpois", "rpois", ("lam",), "Poisson variates.",
        "Hormann (1993) PTRS for lam >= 10, Insurance Math. Econom. 12, 39-45; inversion "
        "below."),
    RFn("rbinom", "rbinom", ("size", "prob"), "Binomial variates.",
        "Hormann (1993) BTRS for n min(p, 1 - p) >= 10, J. Statist. Comput. Simul. 46, "
        "101-110; inversion (BINV) below."),
    RFn("rgeom", "rgeom", ("prob",), "Geometric variates (failures before the first success).",
        "Poisson(E (1 - prob) / prob), E exponential, as R."),
    RFn("rnbinom", "rnbinom", ("size", "prob"), "Negative binomial variates.",
        "Poisson(Gamma(size, (1 - prob) / prob)), as R."),
    RFn("rnbinom_mu", "rnbinom_mu", ("size", "mu"),
        "Negative binomial variates, parametrised by the mean.",
        "Poisson(Gamma(size, mu / size)), as R."),
    RFn("rhyper", "rhyper", ("m", "n", "k"),
        "Hypergeometric variates (white balls among k drawn from m white, n black).",
        "Inversion by search from the mode, Kemp (1986), Commun. Statist. 15, 805-813.",
        limit="m + n above RHYPER_MAX_N = 2**45 gives NaN",
        cost=lambda m, n, k: 4.0 * math.sqrt(min(m, n, k, RHYPER_MAX_N))),
    RFn("rwilcox", "rwilcox", ("m", "n"), "Wilcoxon rank sum statistic variates.",
        "Rank sum of a random n-subset of m + n by selection sampling (Knuth's Algorithm S).",
        limit="m + n above RWILCOX_MAX_N = 2**22 gives NaN",
        cost=lambda m, n: min(m + n, RWILCOX_MAX_N)),
    RFn("rsignrank", "rsignrank", ("n",), "Wilcoxon signed rank statistic variates.",
        "sum of i B_i over i = 1..n with fair bits B_i, as R (64 bits per word drawn).",
        limit="n above RSIGNRANK_MAX_N = 2**28 gives NaN",
        cost=lambda n: min(n, RSIGNRANK_MAX_N) / 64.0),
)


# -- the kernel -------------------------------------------------------------------------------


def kernel_text(fn: RFn, ndim: int) -> str:
    """The layer-3 source of ``fn``'s kernel for ``ndim`` collapsed output axes."""
    lib = get_library()
    template = string.Template(lib.read(f"kernels/{_TEMPLATE}.cl"))
    nin = len(fn.args)
    shape_params = "".join(f", const long N{k}" for k in range(1, ndim))
    shape_params += "".join(f", const long cst_{k}" for k in range(ndim))
    input_params = "".join(
        f",\n                      const int m{j}, const double s{j}, "
        f"__global const double *restrict p{j}"
        + "".join(f", const long st{j}_{k}" for k in range(ndim))
        for j in range(nin)
    )
    idx = ["    long r_ = i0 + i;", "    long oc_ = 0;"]
    idx += [f"    long o{j} = 0;" for j in range(nin)]
    for k in range(ndim - 1, 0, -1):
        idx.append(f"    {{ const long k_ = r_ % N{k}; r_ /= N{k}; oc_ += k_ * cst_{k};")
        idx += [f"      o{j} += k_ * st{j}_{k};" for j in range(nin)]
        idx.append("    }")
    idx.append("    oc_ += r_ * cst_0;")
    idx += [f"    o{j} += r_ * st{j}_0;" for j in range(nin)]
    loads = "\n".join(f"    const double a{j} = m{j} ? p{j}[o{j}] : s{j};" for j in range(nin))
    not_any_nan = (
        " && !(" + " || ".join(f"isnan(a{j})" for j in range(nin)) + ")" if nin else ""
    )
    call = f"{fn.csym}(&rng_{''.join(f', a{j}' for j in range(nin))})"
    return template.substitute(
        DEPENDS=", ".join(fn.depends), NAME=f"r_{fn.name}", SHAPE_PARAMS=shape_params,
        INPUT_PARAMS=input_params, INDEX="\n".join(idx), LOADS=loads, CALL=call,
        NOT_ANY_NAN=not_any_nan,
    )


def kernel_source(fn: RFn, ndim: int) -> ProgramSource:
    """The assembled program: layers 0 and 1, the minimal nmath subset for ``fn``, the kernel."""
    return get_library().program_source(
        ("philox", *fn.depends), kernel_text(fn, ndim), f"kernels/{_TEMPLATE}.cl[{fn.name}, {ndim}d]"
    )


# -- one call on the device -------------------------------------------------------------------


@dataclass
class _Launch:
    """A part of the output, ready for the kernel."""

    dims: tuple[int, ...]                   # collapsed axes
    cstrides: tuple[int, ...]               # counter strides along dims
    scalars: list[float | None]
    arrays: list[np.ndarray | None]         # contiguous float64, compacted
    strides: list[tuple[int, ...]]          # per parameter, along dims

    @property
    def size(self) -> int:
        return math.prod(self.dims)


def _compact(a: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """``a`` broadcast to ``shape`` as a small contiguous array and its element strides there.

    Axes along which ``a`` (or a broadcast view handed in) does not vary are kept at length 1,
    so broadcast parameters are never materialised.
    """
    b = np.broadcast_to(a, shape)
    keep = tuple(slice(0, 1) if st == 0 else slice(None) for st in b.strides)
    small = np.ascontiguousarray(b[keep], dtype=np.float64)
    return small, tuple(s // 8 for s in np.broadcast_to(small, shape).strides)


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


class Random:
    """The device implementation of one r-function: build on demand, broadcast, launch."""

    def __init__(self, fn: RFn) -> None:
        self.fn = fn
        self.kernel_name = f"r_{fn.name}"

    def source(self, ndim: int = 1) -> ProgramSource:
        return kernel_source(self.fn, ndim)

    def program(self, ndim: int = 1) -> _program.BuiltProgram:
        return _program.build(self.source(ndim))

    def launch(self, shape: tuple[int, ...], values: list[Any], cstrides: tuple[int, ...]) -> _Launch:
        """Broadcast the parameter ``values`` (floats or arrays) against ``shape``."""
        scalars: list[float | None] = []
        arrays: list[np.ndarray | None] = []
        full: list[tuple[int, ...]] = [cstrides]
        for v in values:
            if isinstance(v, np.ndarray):
                small, st = _compact(v, shape)
                arrays.append(small)
                scalars.append(None)
                full.append(st)
            else:
                arrays.append(None)
                scalars.append(float(v))
                full.append((0,) * len(shape))
        dims, strides = collapse_axes(shape, full)
        return _Launch(dims, strides[0], scalars, arrays, strides[1:])

    def _args(self, plan: _Launch, n: int, i0: int, out: Any, status: Any, seed: int,
              cbase: int, buffers: list[Any]) -> list[Any]:
        args: list[Any] = [np.int64(n), np.int64(i0), out, status, np.uint64(seed),
                           np.uint64(cbase)]
        args += [np.int64(d) for d in plan.dims[1:]]
        args += [np.int64(c) for c in plan.cstrides]
        for j in range(len(self.fn.args)):
            args += [np.int32(plan.arrays[j] is not None), np.float64(plan.scalars[j] or 0.0),
                     buffers[j]]
            args += [np.int64(s) for s in plan.strides[j]]
        return args

    def enqueue(self, plan: _Launch, n: int, i0: int, out: Any, status: Any, seed: int,
                cbase: int, buffers: list[Any], queue: Any = None) -> Any:
        """Launch the kernel for flat elements ``i0 .. i0 + n - 1`` of ``plan`` into ``out``."""
        import pyopencl as cl

        bound = _device.current()
        queue = queue if queue is not None else bound.queue
        kernel, lock = self.program(len(plan.dims)).kernel(self.kernel_name)
        if bound.info.type == "GPU":
            local: tuple[int, ...] | None = (256,)
            gsize = -(-n // 256) * 256
        else:
            local = None
            gsize = n
        with lock:
            kernel.set_args(*self._args(plan, n, i0, out, status, seed, cbase, buffers))
            return cl.enqueue_nd_range_kernel(queue, kernel, (gsize,), local)

    def per_launch(self, bound: _device.BoundDevice, plan: _Launch) -> int:
        """Elements of one launch: :func:`daskcl.kernels._elementwise.launch_elements`, fewer for a
        generator whose work grows with its parameters (:attr:`RFn.cost`), so that a launch
        draws about ``_WORK_*`` words per compute unit."""
        cap = _ew.launch_elements(bound)
        if self.fn.cost is None:
            return cap
        top = []
        for v, a in zip(plan.scalars, plan.arrays):
            x = np.asarray(v if a is None else a, dtype=np.float64)
            x = x[np.isfinite(x)]          # NaN and infinite parameters give NaN at once
            top.append(max(0.0, float(x.max())) if x.size else 0.0)
        cost = 1.0 + self.fn.cost(*top)
        units = max(1, bound.info.compute_units)
        work = (_WORK_CPU if bound.info.type == "CPU" else _WORK_OTHER) * units
        return max(1, min(cap, max(units, int(work // cost))))

    def run(self, shape: tuple[int, ...], values: list[Any], seed: int, cbase: int,
            cstrides: tuple[int, ...]) -> tuple[np.ndarray, int]:
        """Variates of ``shape`` whose element at index ``idx`` uses counter
        ``cbase + sum(idx * cstrides)``; returns them and the count of NaNs produced.

        The work is cut into launches of at most :meth:`per_launch` elements
        (:func:`daskcl.kernels._elementwise.pieces`), each finished before the next, with no buffer
        above the device's largest allocation; on devices with their own memory, calls of
        cheap generators large enough for slabs go through the pipelined slabs instead."""
        import pyopencl as cl

        result = np.empty(shape)
        if result.size == 0:
            return result, 0
        plan = self.launch(shape, values, cstrides)
        bound = _device.current()
        ctx = bound.context
        mf = cl.mem_flags
        cpu = _zero_copy(bound)
        counts = np.zeros(1, dtype=np.int32)
        status = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=counts)
        n = result.size
        flat = result.reshape(-1)
        per = self.per_launch(bound, plan)
        limit = _ew.max_alloc(bound)
        fits = all(a is None or a.nbytes <= limit for a in plan.arrays)
        if not cpu and n >= 2 * _SLAB and per >= _SLAB and _SLAB * 8 <= limit and fits:
            self._run_slabs(bound, plan, flat, status, seed, cbase)
        else:
            host = mf.USE_HOST_PTR if cpu else mf.COPY_HOST_PTR
            arrays = [None if a is None else a.reshape(-1) for a in plan.arrays]
            dev_out = None
            for start, dims, offs in _ew.pieces(plan.dims, [plan.cstrides, *plan.strides], per):
                m = math.prod(dims)
                subs = [None if a is None else a[o: o + _ew.span(dims, st)]
                        for a, o, st in zip(arrays, offs[1:], plan.strides)]
                buffers = [None if a is None else cl.Buffer(ctx, mf.READ_ONLY | host, hostbuf=a)
                           for a in subs]
                sub = _Launch(dims, plan.cstrides, plan.scalars, subs, plan.strides)
                part = flat[start: start + m]
                if cpu:
                    # the device writes straight into `result`; mapping makes the writes visible
                    out = cl.Buffer(ctx, mf.WRITE_ONLY | mf.USE_HOST_PTR, hostbuf=part)
                else:
                    if dev_out is None:
                        dev_out = cl.Buffer(ctx, mf.WRITE_ONLY, min(n, per) * 8)
                    out = dev_out
                self.enqueue(sub, m, 0, out, status, seed, cbase + offs[0], buffers)
                if cpu:
                    mapped = cl.enqueue_map_buffer(bound.queue, out, cl.map_flags.READ, 0, (m,),
                                                   np.dtype(np.float64))[0]
                    mapped.base.release()
                else:
                    cl.enqueue_copy(bound.queue, part, out)
                bound.queue.finish()
        cl.enqueue_copy(bound.queue, counts, status)
        bound.queue.finish()
        return result, int(counts[0])

    def _run_slabs(self, bound: _device.BoundDevice, plan: _Launch, flat: np.ndarray,
                   status: Any, seed: int, cbase: int) -> None:
        """Large calls on devices with their own memory: slabs through the pinned staging
        buffers of the elementwise launcher (made once per device), on two queues, so that the
        kernel of one slab overlaps the transfer of the other."""
        import pyopencl as cl

        mf = cl.mem_flags
        buffers = [None if a is None else
                   cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
                   for a in plan.arrays]
        n = flat.size
        slab = _SLAB
        with _ew._staging_lock:
            stages = [_ew._stage(bound, k, 0, slab) for k in range(2)]
            pending: list[tuple[Any, int, int, Any]] = []
            for k, a in enumerate(range(0, n, slab)):
                b = min(a + slab, n)
                st = stages[k % 2]
                if st.busy is not None:           # slab k - 2 used this stage: finish it first
                    _ew._finish(pending, flat)
                self.enqueue(plan, b - a, a, st.dev_out, status, seed, cbase, buffers, st.queue)
                ev = cl.enqueue_copy(st.queue, st.host_out[: b - a], st.dev_out,
                                     is_blocking=False)
                st.busy = ev
                pending.append((ev, a, b, st))
            while pending:
                _ew._finish(pending, flat)

    def warn(self, count: int, stacklevel: int = 3) -> None:
        if count:
            note = f" ({self.fn.limit})" if self.fn.limit else ""
            warnings.warn(f"{self.fn.name}: {count} NaN(s) produced{note}", RuntimeWarning,
                          stacklevel=stacklevel)


def _zero_copy(bound: _device.BoundDevice) -> bool:
    """CPU devices write straight into the result; others go through device buffers."""
    return bound.info.type == "CPU"


def philox4x32_10(ctr: ArrayLike, key: ArrayLike) -> np.ndarray:
    """The raw Philox4x32-10 bijection on the bound device (for known-answer tests).

    Parameters
    ----------
    ctr : array_like of uint32, shape (m, 4)
        Counters, word 0 first.
    key : array_like of uint32, shape (m, 2)
        Keys, word 0 first.

    Returns
    -------
    ndarray of uint32, shape (m, 4)
    """
    import pyopencl as cl

    c = np.ascontiguousarray(np.asarray(ctr, dtype=np.uint32).reshape(-1, 4))
    k = np.ascontiguousarray(np.asarray(key, dtype=np.uint32).reshape(-1, 2))
    if len(c) != len(k):
        raise ValueError(f"philox4x32_10: {len(c)} counters but {len(k)} keys")
    out = np.empty_like(c)
    if len(c) == 0:
        return out
    bound = _device.current()
    mf = cl.mem_flags
    cb = cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=c)
    kb = cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=k)
    ob = cl.Buffer(bound.context, mf.WRITE_ONLY, out.nbytes)
    kernel, lock = _ENGINES["runif"].program(1).kernel("philox4x32_10_raw")
    with lock:
        kernel.set_args(np.int64(len(c)), cb, kb, ob)
        cl.enqueue_nd_range_kernel(bound.queue, kernel, (len(c),), None)
    cl.enqueue_copy(bound.queue, out, ob)
    bound.queue.finish()
    return out


# -- the public functions ---------------------------------------------------------------------


def _shape(fn: RFn, size: Any) -> tuple[int, ...]:
    if isinstance(size, numbers.Integral):
        size = (size,)
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{fn.name}: size must be an int or a tuple of ints, not {size!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{fn.name}: size must not be negative, got {shape}")
    return shape


def _seed(fn: RFn, seed: object) -> int:
    """The 64-bit Philox key of ``seed``: an int in [0, 2**64) is the key itself; a
    ``numpy.random.SeedSequence`` gives ``int(generate_state(1, uint64)[0])`` (the same key every
    time for the same sequence); a ``numpy.random.Generator`` draws the key with
    ``integers(0, 2**64, dtype=uint64)``, so the caller's generator advances by one draw; None
    draws a fresh key from the operating system."""
    if seed is None:
        return secrets.randbits(64)
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(1, np.uint64)[0])
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, _U64, dtype=np.uint64, endpoint=False))
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{fn.name}: seed must be an int in [0, 2**64), a "
                        f"numpy.random.SeedSequence or a numpy.random.Generator, not {seed!r}")
    key = int(seed)
    if not 0 <= key < _U64:
        raise ValueError(f"{fn.name}: seed must be in [0, 2**64), got {key}")
    return key


def _param(fn: RFn, name: str, value: Any, shape: tuple[int, ...]) -> Any:
    """A float, a NumPy array broadcastable to ``shape``, or a dask array."""
    if is_dask_array(value):
        arr = value
    elif isinstance(value, numbers.Real) and not isinstance(value, np.ndarray):
        return float(value)
    else:
        if isinstance(value, np.ma.MaskedArray):
            raise TypeError(f"{fn.name}: parameter {name!r} is a masked array; its mask would be "
                            "lost: pass value.filled(np.nan) or the unmasked values")
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{fn.name}: parameter {name!r} must be real numbers, got dtype {arr.dtype}")
        if arr.ndim == 0:
            return float(arr)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{fn.name}: parameter {name!r} must be real numbers, got dtype {arr.dtype}")
    try:
        ok = np.broadcast_shapes(arr.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{fn.name}: parameter {name!r} of shape {arr.shape} does not broadcast to size {shape}"
        )
    return arr if is_dask_array(arr) else np.asarray(arr, dtype=np.float64)


_ENGINES: dict[str, Random] = {}


def _block(*blocks: np.ndarray, fname: str, scalars: tuple[float | None, ...], seed: int,
           offset: int, cstrides: tuple[int, ...], block_info: Any = None) -> np.ndarray:
    """One chunk of a dask array of variates (runs on the worker that owns the chunk)."""
    info = block_info[None]
    shape = tuple(info["chunk-shape"])
    cbase = offset + sum(lo * c for (lo, _), c in zip(info["array-location"], cstrides))
    it = iter(blocks)
    values = [next(it) if s is None else s for s in scalars]
    impl = _ENGINES[fname]
    result, count = impl.run(shape, values, seed, cbase, cstrides)
    impl.warn(count, stacklevel=2)
    return result


def _dask_call(impl: Random, shape: tuple[int, ...], values: list[Any], seed: int, offset: int,
               chunks: Any) -> Any:
    import dask.array as da
    from dask.base import tokenize

    chunks = da.core.normalize_chunks(chunks, shape, dtype=np.float64)
    arrays = []
    scalars: list[float | None] = []
    for v in values:
        if isinstance(v, float):
            scalars.append(v)
            continue
        scalars.append(None)
        d = v if is_dask_array(v) else da.from_array(v, chunks=v.shape or ())
        arrays.append(da.broadcast_to(d, shape).rechunk(chunks))
    fname = impl.fn.name
    name = f"daskcl-{fname}-" + tokenize(fname, shape, chunks, seed, offset, scalars, *arrays)
    return da.map_blocks(
        _block, *arrays, chunks=chunks, dtype=np.float64,
        meta=np.empty((0,) * len(shape), dtype=np.float64), name=name,
        fname=fname, scalars=tuple(scalars), seed=seed, offset=offset,
        cstrides=_c_strides(shape),
    )


def _make(fn: RFn) -> KernelFunction[Random]:
    impl = Random(fn)
    _ENGINES[fn.name] = impl
    conflict = "size" in fn.arg_names
    first = inspect.Parameter(
        "n" if conflict else "size",
        inspect.Parameter.POSITIONAL_ONLY if conflict else inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
    aliases = _docs.ALIASES.get(fn.name, {})
    optional = _docs.optional_params(fn.name)
    params = [first] + [
        inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=None if a in optional
                          else fn.defaults.get(a, inspect.Parameter.empty))
        for a in fn.arg_names
    ]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=d)
               for k, d in (("seed", None), ("offset", 0), ("chunks", None))]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None) for a in aliases]
    sig = inspect.Signature(params)

    def func(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        if aliases:
            target = _docs.apply_aliases(fn.name, bound.arguments)
            if target != fn.name:
                given = dict(bound.arguments)
                return FUNCTIONS[target](given.pop(first.name), **given)
        bound.apply_defaults()
        a = bound.arguments
        shape = _shape(fn, a[first.name])
        seed = _seed(fn, a["seed"])
        offset = a["offset"]
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral) or offset < 0:
            raise ValueError(f"{fn.name}: offset must be a non-negative int, not {offset!r}")
        offset = int(offset)
        if offset + math.prod(shape) > _U64:
            raise ValueError(f"{fn.name}: offset + size exceeds the 2**64 elements of a stream")
        values = [_param(fn, p, a[p], shape) for p in fn.arg_names]
        chunks = a["chunks"]
        if chunks is not None or any(is_dask_array(v) for v in values):
            return _dask_call(impl, shape, values, seed, offset,
                              "auto" if chunks is None else chunks)
        result, count = impl.run(shape, values, seed, offset, _c_strides(shape))
        impl.warn(count)
        return result[()] if result.ndim == 0 else result

    func.__name__ = func.__qualname__ = fn.name
    func.__module__ = PUBLIC_MODULE
    func.__signature__ = sig  # type: ignore[attr-defined]
    func.__doc__ = _docs.docstring(fn)
    func._daskcl_impl = impl  # type: ignore[attr-defined]
    return cast("KernelFunction[Random]", func)


#: the generators by name (public as ``daskcl.nmath.r<name>``)
FUNCTIONS: dict[str, KernelFunction[Random]] = {fn.name: _make(fn) for fn in ROWS}
