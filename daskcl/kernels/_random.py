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
parameters give NaN, with one ``RuntimeWarning`` per call saying how many were produced; NaN
parameters give NaN and are counted too, as R's ``rnorm(2, NaN)`` warns "NAs produced" (the d, p
and q functions count only NaNs of inputs that are not NaN, as R's do).  ``rbeta`` with ``ncp``
is R code in R, ``X / (X + Y)`` of two chi-squared variates: the NaN of 0 / 0 or Inf / Inf from
valid parameters (``rbeta(n, 0, 0, ncp = 0)``, ``rbeta(n, Inf, 2, ncp = 1)``) is not counted,
as R does not warn for it.

Three generators do work that grows with a parameter, and have a documented largest parameter
beyond which they give NaN (counted and warned as above) instead of running without end:
``rsignrank`` (n/64 words per variate) for n above :data:`RSIGNRANK_MAX_N` = 2**28;
``rwilcox`` (one draw per candidate) for m + n above :data:`RWILCOX_MAX_N` = 2**22; ``rhyper``
(a walk of the order of its standard deviation) for m + n above :data:`RHYPER_MAX_N` = 2**45.
R converts these parameters to C ints and does the same O(n) work; beyond 2**31 - 1 its
results are undefined.

Large calls are computed in launches (:data:`daskcl.kernels._plan.LAUNCH_CPU` elements at most
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

import functools
import inspect
import math
import numbers
import operator
import secrets
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import outside_stacklevel, warn_r
from ..runtime import device as _device
from ..runtime.library import get_library
from . import _docs, _transfer
from ._call import _c_strides
from ._elementwise import (
    Call,
    ElementwiseDef,
    ElementwiseKernel,
    called_as,
    called_name,
    is_dask_array,
    warning_name,
)
from ._kernel import Kernel, RawKernel, misspelt
from ._table import PUBLIC_MODULE, Example, RFn

__all__ = ["FUNCTIONS", "RHYPER_MAX_N", "ROWS", "RSIGNRANK_MAX_N", "RWILCOX_MAX_N", "RFn",
           "RandomKernel", "philox4x32_10"]

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


ROWS: tuple[RFn, ...] = (
    # --- inversion and transformations ----------------------------------------------------------
    RFn("runif", "runif", (("min", 0.0), ("max", 1.0)), "Uniform variates on (min, max).",
        "min + (max - min) U, U on the midpoints of a 2^52 grid of (0, 1).",
        r_call="runif(n, min = 0, max = 1)",
        examples=(Example((3, 2.0, 2.0), {}, "runif(3, 2, 2)", (2.0, 2.0, 2.0)),)),
    RFn("rnorm", "rnorm", (("mean", 0.0), ("sd", 1.0)), "Normal variates.",
        "Inversion (R's default), Wichura's AS 241 quantile (1988), U with 2^-52 relative "
        "resolution in both tails.",
        r_call="rnorm(n, mean = 0, sd = 1)",
        examples=(Example((3, 5.0, 0.0), {}, "rnorm(3, 5, 0)", (5.0, 5.0, 5.0)),)),
    RFn("rexp", "rexp", (("scale", 1.0),), "Exponential variates (Rmath.h's scale parameter).",
        "Inversion, scale * -log(U).",
        r_call="rexp(n, rate = 1)",
        examples=(Example((3,), {"rate": math.inf}, "rexp(3, Inf)", (0.0, 0.0, 0.0)),)),
    RFn("rlnorm", "rlnorm", (("meanlog", 0.0), ("sdlog", 1.0)), "Log-normal variates.",
        "exp of a normal variate.",
        r_call="rlnorm(n, meanlog = 0, sdlog = 1)",
        examples=(Example((3, 0.0, 0.0), {}, "rlnorm(3, 0, 0)", (1.0, 1.0, 1.0)),)),
    RFn("rcauchy", "rcauchy", (("location", 0.0), ("scale", 1.0)), "Cauchy variates.",
        "Inversion, location - scale * cot(pi U).",
        r_call="rcauchy(n, location = 0, scale = 1)",
        examples=(Example((3, 1.0, 0.0), {}, "rcauchy(3, 1, 0)", (1.0, 1.0, 1.0)),)),
    RFn("rlogis", "rlogis", (("location", 0.0), ("scale", 1.0)), "Logistic variates.",
        "Inversion, location + scale * log(U / (1 - U)).",
        r_call="rlogis(n, location = 0, scale = 1)",
        examples=(Example((3, 2.0, 0.0), {}, "rlogis(3, 2, 0)", (2.0, 2.0, 2.0)),)),
    RFn("rweibull", "rweibull", ("shape", ("scale", 1.0)), "Weibull variates.",
        "Inversion, scale * (-log U)^(1/shape).",
        r_call="rweibull(n, shape, scale = 1)",
        examples=(Example((3, 2.0, 0.0), {}, "rweibull(3, 2, 0)", (0.0, 0.0, 0.0)),),
        stream_args=(1.5,)),
    # --- gamma family ---------------------------------------------------------------------------
    RFn("rgamma", "rgamma", ("shape", ("scale", 1.0)), "Gamma variates (shape, scale).",
        "Marsaglia & Tsang (2000), ACM TOMS 26, 363-372; shape < 1 by Gamma(shape + 1) "
        "U^(1/shape).",
        r_call="rgamma(n, shape, rate = 1, scale = 1/rate)",
        examples=(Example((3, 0.0), {}, "rgamma(3, 0)", (0.0, 0.0, 0.0)),),
        stream_args=(2.5,)),
    RFn("rbeta", "rbeta", ("shape1", "shape2"), "Beta variates.",
        "Cheng (1978), Comm. ACM 21, 317-322, algorithms BB and BC.",
        r_call="rbeta(n, shape1, shape2, ncp = 0)",
        examples=(Example((3, 0.0, 2.0), {}, "rbeta(3, 0, 2)", (0.0, 0.0, 0.0)),),
        stream_args=(2.0, 3.0)),
    RFn("rchisq", "rchisq", ("df",), "Chi-squared variates.", "Gamma(df / 2, scale 2).",
        r_call="rchisq(n, df, ncp = 0)",
        examples=(Example((3, 0.0), {}, "rchisq(3, 0)", (0.0, 0.0, 0.0)),),
        stream_args=(3.0,)),
    RFn("rt", "rt", ("df",), "Student's t variates.", "Z / sqrt(X / df), X chi-squared(df).",
        r_call="rt(n, df, ncp)",
        r_note="R's ``rt(n, df, ncp)`` (R code over rnorm and rchisq) has no Rmath.h function and "
               "is not provided: a positional ``ncp`` is a TypeError.",
        examples=(Example((0, 5.0), {}, "rt(0, 5)", ()),),
        stream_args=(5.0,)),
    RFn("rf", "rf", ("df1", "df2"), "F variates.", "(X1 / df1) / (X2 / df2), chi-squared X.",
        r_call="rf(n, df1, df2, ncp)",
        r_note="R's ``rf(n, df1, df2, ncp)`` (R code over rchisq) has no Rmath.h function and is "
               "not provided: a positional ``ncp`` is a TypeError.",
        examples=(Example((3, math.inf, math.inf), {}, "rf(3, Inf, Inf)", (1.0, 1.0, 1.0)),),
        stream_args=(3.0, 7.0)),
    RFn("rnchisq", "rnchisq", ("df", "ncp"), "Noncentral chi-squared variates.",
        "Poisson(ncp / 2) mixture of chi-squared variates, as R.",
        r_call="rchisq(n, df, ncp)",
        r_note="R has no ``rnchisq``: R calls it for ``rchisq(n, df, ncp = )``.",
        examples=(Example((3, 0.0, 0.0), {}, "rchisq(3, 0, ncp = 0)", (0.0, 0.0, 0.0)),),
        stream_args=(3.0, 2.0)),
    RFn("rnbeta", "rnbeta", ("shape1", "shape2", "ncp"), "Noncentral beta variates.",
        "X / (X + Y), X noncentral chi-squared(2 shape1, ncp), Y chi-squared(2 shape2), as R.",
        # R's rbeta(n, a, b, ncp) is R code: its rnchisq (a NaN or < 0, ncp NaN, Inf or < 0)
        # and rchisq (b NaN, Inf or < 0) warn "NAs produced"; X / (X + Y) of 0 / 0 (a = b =
        # ncp = 0) or Inf / Inf (a = Inf) is NaN in silence
        quiet_nan="!(isnan(a0) || a0 < 0 || isnan(a2) || !isfinite(a2) || a2 < 0 "
                  "|| isnan(a1) || !isfinite(a1) || a1 < 0)",
        r_call="rbeta(n, shape1, shape2, ncp)",
        r_note="R has no ``rnbeta``: R's ``rbeta(n, shape1, shape2, ncp = )`` computes the same "
               "quotient in R code.",
        examples=(Example((3, 0.0, 2.0, 0.0), {}, "rbeta(3, 0, 2, ncp = 0)", (0.0, 0.0, 0.0)),),
        stream_args=(2.0, 3.0, 1.5)),
    # --- discrete -------------------------------------------------------------------------------
    RFn("rpois", "rpois", ("lam",), "Poisson variates.",
        "Hormann (1993) PTRS for lam >= 10, Insurance Math. Econom. 12, 39-45; inversion "
        "below.",
        r_call="rpois(n, lambda)",
        examples=(Example((3, 0.0), {}, "rpois(3, 0)", (0.0, 0.0, 0.0)),),
        stream_args=(4.5,)),
    RFn("rbinom", "rbinom", ("size", "prob"), "Binomial variates.",
        "Hormann (1993) BTRS for n min(p, 1 - p) >= 10, J. Statist. Comput. Simul. 46, "
        "101-110; inversion (BINV) below.",
        r_call="rbinom(n, size, prob)",
        examples=(Example((3, 10.0, 1.0), {}, "rbinom(3, 10, 1)", (10.0, 10.0, 10.0)),),
        stream_args=(10.0, 0.3)),
    RFn("rgeom", "rgeom", ("prob",), "Geometric variates (failures before the first success).",
        "Poisson(E (1 - prob) / prob), E exponential, as R.",
        r_call="rgeom(n, prob)",
        examples=(Example((3, 1.0), {}, "rgeom(3, 1)", (0.0, 0.0, 0.0)),),
        stream_args=(0.2,)),
    RFn("rnbinom", "rnbinom", ("size", "prob"), "Negative binomial variates.",
        "Poisson(Gamma(size, (1 - prob) / prob)), as R.",
        r_call="rnbinom(n, size, prob, mu)",
        examples=(Example((3, 5.0, 1.0), {}, "rnbinom(3, 5, 1)", (0.0, 0.0, 0.0)),),
        stream_args=(3.0, 0.4)),
    RFn("rnbinom_mu", "rnbinom_mu", ("size", "mu"),
        "Negative binomial variates, parametrised by the mean.",
        "Poisson(Gamma(size, mu / size)), as R.",
        r_call="rnbinom(n, size, mu = mu)",
        examples=(Example((3, 5.0, 0.0), {}, "rnbinom(3, 5, mu = 0)", (0.0, 0.0, 0.0)),),
        stream_args=(3.0, 4.0)),
    RFn("rhyper", "rhyper", ("m", "n", "k"),
        "Hypergeometric variates (white balls among k drawn from m white, n black).",
        "Inversion by search from the mode, Kemp (1986), Commun. Statist. 15, 805-813.",
        limit="m + n above RHYPER_MAX_N = 2**45",
        cost=lambda m, n, k: 4.0 * math.sqrt(min(m, n, k, RHYPER_MAX_N)),
        r_call="rhyper(nn, m, n, k)",
        r_note="R names the count ``nn`` (``n`` is the number of black balls); here it is "
               "``size``, the output shape.",
        examples=(Example((3, 5.0, 0.0, 2.0), {}, "rhyper(3, 5, 0, 2)", (2.0, 2.0, 2.0)),),
        stream_args=(10.0, 7.0, 8.0)),
    RFn("rwilcox", "rwilcox", ("m", "n"), "Wilcoxon rank sum statistic variates.",
        "Rank sum of a random n-subset of m + n by selection sampling (Knuth's Algorithm S).",
        limit="m + n above RWILCOX_MAX_N = 2**22",
        cost=lambda m, n: min(m + n, RWILCOX_MAX_N),
        r_call="rwilcox(nn, m, n)",
        r_note="R names the count ``nn`` (``n`` is the second sample's size); here it is "
               "``size``, the output shape.",
        examples=(Example((3, 4.0, 0.0), {}, "rwilcox(3, 4, 0)", (0.0, 0.0, 0.0)),),
        stream_args=(4.0, 6.0)),
    RFn("rsignrank", "rsignrank", ("n",), "Wilcoxon signed rank statistic variates.",
        "sum of i B_i over i = 1..n with fair bits B_i, as R (64 bits per word drawn).",
        limit="n above RSIGNRANK_MAX_N = 2**28",
        cost=lambda n: min(n, RSIGNRANK_MAX_N) / 64.0,
        r_call="rsignrank(nn, n)",
        r_note="R names the count ``nn`` (``n`` is the number of observations); here it is "
               "``size``, the output shape.",
        examples=(Example((3, 0.0), {}, "rsignrank(3, 0)", (0.0, 0.0, 0.0)),),
        stream_args=(10.0,)),
)


# -- the kernel -------------------------------------------------------------------------------


class RandomKernel(ElementwiseKernel):
    """A random generator of :mod:`daskcl.nmath`: the elementwise kernel of one r-function row,
    whose element ``k`` draws from the Philox stream of counter ``offset + k`` under key
    ``seed``.  It pickles by its name."""

    def __init__(self, fn: RFn) -> None:
        Kernel.__init__(self, fn.name)
        self.fn = fn
        #: R's keyword names this generator also takes (``rate=``, ``ncp=``, ``mu=``)
        self.aliases: dict[str, Any] = {}
        inputs = tuple(f"a{j}" for j in range(len(fn.args)))
        call = f"{fn.csym}(&rng_{''.join(', ' + a for a in inputs)})"
        self._setup(ElementwiseDef(
            name=fn.name, inputs=inputs, outputs=("r",), counter=True,
            operation=f"rng_stream rng_; rng_init(&rng_, dk_seed, dk_oc); r = {call};",
            depends=("philox", *fn.depends), quiet_nan=fn.quiet_nan))
        self.input_names = fn.arg_names

    def __reduce__(self) -> str:
        # a global of daskcl.nmath (``__module__``): unpickling imports it and takes the name
        return self.fn.name

    def extend(self, call: Call) -> None:
        """Launches of the generators whose work grows with a parameter (:attr:`RFn.cost`)
        draw about ``_WORK_*`` words per compute unit each."""
        if self.fn.cost is None:
            return
        bound = _device.current()
        top = []
        for o in call.operands:
            x = np.asarray(o.scalar if o.array is None else o.array, dtype=np.float64)
            x = x[np.isfinite(x)]          # NaN and infinite parameters give NaN at once
            top.append(max(0.0, float(x.max())) if x.size else 0.0)
        cost = 1.0 + self.fn.cost(*top)
        units = max(1, bound.info.compute_units)
        work = (_WORK_CPU if bound.info.type == "CPU" else _WORK_OTHER) * units
        call.cap = max(1, max(units, int(work // cost)))

    def warn(self, counts: np.ndarray, stacklevel: int | None = None) -> None:
        """One ``RuntimeWarning`` for the NaNs produced, naming the generator's limit, at the
        caller's line outside daskcl unless ``stacklevel`` says otherwise."""
        if stacklevel is None:
            stacklevel = outside_stacklevel()
        if counts[0]:
            note = f" (invalid parameters, or {self.fn.limit})" if self.fn.limit else ""
            warn_r(f"{warning_name(self.fn.name)}: {counts[0]} NaN(s) produced{note}",
                   stacklevel=stacklevel)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.fn
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as exc:    # inspect's bare "too many positional arguments"
            raise TypeError(f"{fn.name}{self.__signature__}: {exc}"
                            + misspelt(kwargs, list(self.__signature__.parameters))) from None
        first = next(iter(self.__signature__.parameters))
        if self.aliases:
            target = _docs.apply_aliases(fn.name, bound.arguments)
            if target != fn.name:
                given = dict(bound.arguments)
                with called_as(fn.name):
                    return FUNCTIONS[target](given.pop(first), **given)
        bound.apply_defaults()
        a = bound.arguments
        shape = _shape(fn, a[first])
        seed = _seed(fn, a["seed"])
        offset = a["offset"]
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral) or offset < 0:
            raise ValueError(f"{fn.name}: offset must be a non-negative int, not {offset!r}")
        offset = int(offset)
        if offset + math.prod(shape) > _U64:
            raise ValueError(f"{fn.name}: offset + size exceeds the 2**64 elements of a stream")
        device = a["device"]
        if not isinstance(device, (bool, np.bool_)):
            raise TypeError(f"{fn.name}: device must be True or False, not {device!r}")
        values = [_param(fn, p, a[p], shape) for p in fn.arg_names]
        chunks = a["chunks"]
        if chunks is not None or any(is_dask_array(v) for v in values):
            if device:
                raise ValueError(f"{fn.name}: device=True gives a device array, chunks= a dask "
                                 "array: choose one")
            return _dask_call(self, shape, values, seed, offset,
                              "auto" if chunks is None else chunks)
        return self.compute(values, (), shape, bool(device), (seed, offset, None))[0]


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
    c = np.ascontiguousarray(np.asarray(ctr, dtype=np.uint32).reshape(-1, 4))
    k = np.ascontiguousarray(np.asarray(key, dtype=np.uint32).reshape(-1, 2))
    if len(c) != len(k):
        raise ValueError(f"philox4x32_10: {len(c)} counters but {len(k)} keys")
    out = np.empty_like(c)
    if len(c) == 0:
        return out
    _philox_raw()((len(c),), None, len(c), c, k, out)
    return out


@functools.cache
def _philox_raw() -> RawKernel:
    """The raw Philox kernel of ``cl/kernels/philox_raw.cl``."""
    return RawKernel(get_library().read("kernels/philox_raw.cl"), "philox4x32_10_raw")


# -- the public functions ---------------------------------------------------------------------


def _shape(fn: RFn, size: Any) -> tuple[int, ...]:
    given = size
    if isinstance(size, numbers.Integral):
        size = (size,)
    try:
        if any(isinstance(s, (bool, np.bool_)) for s in size):   # True is not a length
            raise TypeError
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{fn.name}: size must be an int or a tuple of ints, not {given!r}") from None
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
    """A float, a NumPy array broadcastable to ``shape``, a dask array or a device array."""
    if is_dask_array(value) or _transfer.is_device_array(value):
        arr = value
    elif isinstance(value, numbers.Real) and not isinstance(value, np.ndarray):
        try:
            return float(value)
        except OverflowError:     # a Python int beyond the doubles (10**400)
            raise OverflowError(f"{fn.name}: parameter {name!r} is an integer too large for a "
                                "double (beyond 1.8e308); pass float('inf') for infinity"
                                ) from None
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
    if is_dask_array(arr) and any(math.isnan(n) for n in arr.shape):
        raise ValueError(f"{fn.name}: parameter {name!r} is a dask array of unknown size "
                         f"{arr.shape}: call its compute_chunk_sizes() first")
    try:
        ok = np.broadcast_shapes(arr.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{fn.name}: parameter {name!r} of shape {arr.shape} does not broadcast to size {shape}"
        )
    if is_dask_array(arr) or _transfer.is_device_array(arr):
        return arr
    return np.asarray(arr, dtype=np.float64)


def _block(*blocks: np.ndarray, fname: str, scalars: tuple[float | None, ...], seed: int,
           offset: int, cstrides: tuple[int, ...], block_info: Any = None,
           called: str | None = None) -> np.ndarray:
    """One chunk of a dask array of variates (runs on the worker that owns the chunk);
    ``called`` names its warnings where R's keywords sent the call here (:func:`called_as`)."""
    info = block_info[None]
    shape = tuple(info["chunk-shape"])
    cbase = offset + sum(lo * c for (lo, _), c in zip(info["array-location"], cstrides))
    it = iter(blocks)
    values = [next(it) if s is None else s for s in scalars]
    with called_as(called):
        return np.asarray(FUNCTIONS[fname].compute(values, (), shape, False,
                                                   (seed, cbase, cstrides))[0])


def _dask_call(kernel: RandomKernel, shape: tuple[int, ...], values: list[Any], seed: int,
               offset: int, chunks: Any) -> Any:
    import dask.array as da
    from dask.base import tokenize

    try:
        chunks = da.core.normalize_chunks(chunks, shape, dtype=np.float64)
    except (ValueError, TypeError, ZeroDivisionError) as exc:  # dask divides by a chunk of 0
        raise ValueError(f"{kernel.fn.name}: chunks={chunks!r} do not cut size {shape} into "
                         "chunks: give 'auto', positive chunk lengths (-1: the whole axis) or "
                         f"each axis's chunk sizes ({type(exc).__name__}: {exc})") from None
    arrays = []
    scalars: list[float | None] = []
    for v in values:
        if isinstance(v, float):
            scalars.append(v)
            continue
        scalars.append(None)
        d = v if is_dask_array(v) else da.from_array(v, chunks=v.shape or ())
        arrays.append(da.broadcast_to(d, shape).rechunk(chunks))
    fname = kernel.fn.name
    name = f"daskcl-{fname}-" + tokenize(fname, shape, chunks, seed, offset, scalars, *arrays)
    return da.map_blocks(
        _block, *arrays, chunks=chunks, dtype=np.float64,
        meta=np.empty((0,) * len(shape), dtype=np.float64), name=name,
        fname=fname, scalars=tuple(scalars), seed=seed, offset=offset,
        cstrides=_c_strides(shape), called=called_name(),
    )


def _make(fn: RFn) -> RandomKernel:
    kernel = RandomKernel(fn)
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
               for k, d in (("seed", None), ("offset", 0), ("chunks", None), ("device", False))]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None) for a in aliases]
    kernel.__signature__ = inspect.Signature(params)
    kernel.aliases = aliases
    kernel.__name__ = kernel.__qualname__ = fn.name
    kernel.__module__ = PUBLIC_MODULE
    kernel.__doc__ = _docs.docstring(fn)
    return kernel


#: the generators by name (public as ``daskcl.nmath.r<name>``)
FUNCTIONS: dict[str, RandomKernel] = {fn.name: _make(fn) for fn in ROWS}
