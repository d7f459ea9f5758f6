# SPDX-License-Identifier: GPL-2.0-or-later
"""Dask arrays in, lazy dask arrays out: every ``daskcl.nmath`` function and ``glm.f2_f3``.

The requirement: each function accepts dask arrays and returns a lazy dask array (dtype float64,
a NumPy ``_meta``), chunked as dask's broadcasting rules give, broadcasting as NumPy, and
``.compute()`` gives exactly (bit for bit) the result of the same call with NumPy arrays.

The arguments are points of the R agreement cases (``tests/rcases``): for each function a seeded
sample of about 20 grid points whose results are finite, plus a NaN, an infinity and (where the
sample has one) a point where R gives NaN for NaN-free arguments.  The "NaN(s) produced" and
"non-integer" warnings come per block at compute time; their counts must add up to the counts of
the NumPy call.

Regressions guarded here: distinct calls of one function get distinct keys; full-size NumPy
arguments, differently chunked dask arguments and 2-D broadcasts against single-chunk axes give
dask's chunks and the NumPy values.
"""

from __future__ import annotations

import functools
import re
import warnings
import zlib
from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from rcases import all_cases

import daskcl.kernels._elementwise as ew
from daskcl import nmath
from daskcl.glm import f2_f3
from daskcl.kernels import _random as drandom

CASES = all_cases()
NAMES = sorted(n for n in nmath.FUNCTIONS if n not in drandom.FUNCTIONS)
KIND = {n: nmath.FUNCTIONS[n].fn.kind for n in NAMES}
NARGS = {n: len(nmath.FUNCTIONS[n].fn.args) for n in NAMES}
MULTI = [n for n in NAMES if NARGS[n] > 1]
FLAGGED = [n for n in NAMES if KIND[n] in "dpq"]

CHUNK = 7          # 20 points: blocks of 7, 7 and 6
NPTS = 20

#: representatives for the broadcasting cases: the generic kernel with 2, 3 and 4 arguments,
#: one with R's non-integer warning, and the count-table implementation (daskcl/_counts.py)
REPS = ["pnorm", "dbinom", "qgamma", "logspace_add", "pnbeta", "pwilcox"]


# -- helpers --------------------------------------------------------------------------------------


def _is_dask(x: Any) -> bool:
    return type(x).__module__.startswith("dask")


def _call_numpy(fn: Callable[..., Any], *args: Any, **flags: bool) -> tuple[np.ndarray, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = np.asarray(fn(*args, **flags), dtype=np.float64)
    return out, [str(w.message) for w in caught]


def _counts(name: str, messages: list[str]) -> dict[str, int]:
    """Totals of the NaN, non-integer and out-of-range warnings (one per call, or one per dask
    block)."""
    total = {"NaN": 0, "non-integer": 0, "range": 0}
    for msg in messages:
        m = re.match(rf"{re.escape(name)}: (\d+) (NaN\(s\) produced|non-integer \w+"
                     r"|value\(s\) out of range in '\w+'.*)$", msg)
        assert m, f"unexpected warning {msg!r}"
        kind = m.group(2)
        total["NaN" if kind.startswith("NaN") else "range" if kind.startswith("value") else
              "non-integer"] += int(m.group(1))
    return total


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit for bit, signed zeros included; NaN matches NaN of any sign and payload (the sign of
    a NaN from a NaN argument may depend on the length of the call on PoCL, with or without
    dask: ``logspace_sub(nan, -1)`` is -NaN in a call of 7 elements and +NaN in one of 20)."""
    nan = np.isnan(want)
    return bool(np.array_equal(np.isnan(got), nan)
                and np.array_equal(got[~nan].view(np.uint64), want[~nan].view(np.uint64)))


def _expected_chunks(args: tuple[Any, ...]) -> tuple[tuple[int, ...], ...]:
    """The chunks dask's own broadcasting (as in elementwise arithmetic) gives these arguments."""
    arrays = [a if _is_dask(a) else da.asarray(np.asarray(a, dtype=np.float64)) for a in args]
    return da.broadcast_arrays(*arrays)[0].chunks


@functools.cache
def _points(name: str) -> tuple[np.ndarray, ...]:
    """About 20 points of ``name``'s R agreement case, one array per argument.

    A seeded sample of grid points with finite arguments of moderate size whose results are
    finite, then a NaN and +Inf in the first argument, and a point where the function gives NaN
    for NaN-free arguments (R's "NaNs produced") if the sample has one, else -Inf.  Shuffled so
    that the special points fall into different blocks.
    """
    case = min((c for c in CASES if c.name == name), key=lambda c: c.label != "")
    flat = [np.ascontiguousarray(a).ravel() for a in np.broadcast_arrays(*case.axes())]
    ok = np.logical_and.reduce([np.isfinite(a) & (np.abs(a) <= 1e4) for a in flat])
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    idx = np.flatnonzero(ok)
    cand = rng.choice(idx, size=min(idx.size, 150), replace=False)
    vals, _ = _call_numpy(nmath.FUNCTIONS[name], *[a[cand] for a in flat])
    good = cand[np.isfinite(vals)]
    bad = cand[np.isnan(vals)]
    assert good.size >= NPTS - 3, f"{name}: {good.size} of {cand.size} case points give finite values"
    base = [a[good[: NPTS - 3]] for a in flat]
    extra_first = [np.nan, np.inf]
    extra_rest = [[a[good[0]]] * 2 for a in flat[1:]]
    if bad.size:
        pts = [np.concatenate([b, [a[bad[0]]]]) for a, b in zip(flat, base)]
    else:
        extra_first.append(-np.inf)
        extra_rest = [r + r[:1] for r in extra_rest]
        pts = base
    pts = [np.concatenate([pts[0], extra_first])] + [
        np.concatenate([p, r]) for p, r in zip(pts[1:], extra_rest)
    ]
    order = rng.permutation(pts[0].size)
    return tuple(np.ascontiguousarray(p[order]) for p in pts)


@pytest.fixture
def kernel_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the evaluations (``ElementwiseKernel.compute``: one per NumPy call or dask
    block)."""
    calls: list[int] = []
    real = ew.ElementwiseKernel.compute

    def counted(self: ew.ElementwiseKernel, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ew.ElementwiseKernel, "compute", counted)
    return calls


def check_lazy_equal(
    name: str, args: tuple[Any, ...], np_args: tuple[Any, ...], calls: list[int],
    flags: dict[str, bool] | None = None, min_finite: int = 0,
) -> None:
    """``nmath.<name>(*args)`` with dask arguments: lazy, float64, NumPy meta, the chunks dask's
    broadcasting gives, and computed equal bit for bit to the call with ``np_args``, with the
    same warning counts (summed over the blocks)."""
    fn = nmath.FUNCTIONS[name]
    flags = flags or {}
    want, want_msgs = _call_numpy(fn, *np_args, **flags)

    del calls[:]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = fn(*args, **flags)
    assert not caught, f"{name}: warnings while building the graph: {[str(w.message) for w in caught]}"
    assert not calls, f"{name}: evaluated {len(calls)} time(s) while building the graph (not lazy)"
    assert type(r).__module__.startswith("dask"), f"{name}: returned {type(r)}, not a dask array"
    assert r.dtype == np.float64
    assert type(r._meta) is np.ndarray and r._meta.ndim == want.ndim, repr(r._meta)
    assert r._meta.dtype == np.float64
    assert r.shape == want.shape, f"{name}: shape {r.shape}, NumPy gives {want.shape}"
    assert r.chunks == _expected_chunks(args), (
        f"{name}: chunks {r.chunks}, dask's broadcasting gives {_expected_chunks(args)}"
    )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.asarray(r.compute())
    got_msgs = [str(w.message) for w in caught]
    assert len(calls) == r.npartitions, f"{name}: {len(calls)} evaluations for {r.npartitions} blocks"
    for kind in ("NaN", "non-integer"):      # at most one warning of each kind per block
        assert sum(kind in m for m in got_msgs) <= r.npartitions, got_msgs
    assert got.dtype == np.float64 and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True), (
        f"{name}: dask {got!r}\n != NumPy {want!r}"
    )
    assert same_bits(got, want), f"{name}: equal values but different bits (signed zeros)"
    assert _counts(name, got_msgs) == _counts(name, want_msgs), (
        f"{name}: warnings per block {got_msgs}, NumPy call {want_msgs}"
    )
    assert np.isfinite(want).sum() >= min_finite, f"{name}: inputs mostly outside the domain"


# -- every function ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_dask_arguments(name: str, kernel_calls: list[int]) -> None:
    """All arguments dask arrays of the same chunking (20 case points)."""
    pts = _points(name)
    args = tuple(da.from_array(p, chunks=CHUNK) for p in pts)
    assert args[0].numblocks == (3,)
    check_lazy_equal(name, args, pts, kernel_calls, min_finite=NPTS - 5)


@pytest.mark.parametrize("name", MULTI)
def test_dask_first_argument_numpy_and_scalars_broadcast(name: str, kernel_calls: list[int]) -> None:
    """A dask first argument; the others a NumPy (1,) array, a float, a 0-d NumPy array."""
    pts = _points(name)
    x = da.from_array(pts[0], chunks=CHUNK)
    i = int(np.flatnonzero(np.isfinite(pts[0]))[0])
    kinds = [lambda v: np.array([v]), float, np.array]
    rest = tuple(kinds[k % 3](float(p[i])) for k, p in enumerate(pts[1:]))
    check_lazy_equal(name, (x, *rest), (pts[0], *rest), kernel_calls)
    assert nmath.FUNCTIONS[name](x, *rest).chunks == x.chunks == ((7, 7, 6),)


def _flag_args(name: str) -> tuple[dict[str, bool], np.ndarray]:
    """R's non-default flags for ``name`` and its first argument (log(p) for quantiles)."""
    pts = _points(name)
    if KIND[name] == "d":
        return {"log": True}, pts[0]
    first = pts[0]
    if KIND[name] == "q":
        with np.errstate(divide="ignore", invalid="ignore"):
            first = np.where(pts[0] >= 0, np.log(pts[0]), pts[0])
    return {"lower_tail": False, "log_p": True}, first


@pytest.mark.parametrize("name", FLAGGED)
def test_flags_pass_through_dask(name: str, kernel_calls: list[int]) -> None:
    """``log=True`` for densities, ``lower_tail=False, log_p=True`` for p and q functions."""
    flags, first = _flag_args(name)
    pts = (first, *_points(name)[1:])
    args = tuple(da.from_array(p, chunks=CHUNK) for p in pts)
    check_lazy_equal(name, args, pts, kernel_calls, flags)
    # and the flags matter: the default flags give another result on the finite points
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        plain = np.asarray(nmath.FUNCTIONS[name](*pts))
        flagged = np.asarray(nmath.FUNCTIONS[name](*args, **flags).compute())
    assert not np.array_equal(plain, flagged, equal_nan=True)


# -- broadcasting and chunk alignment (representative functions) -------------------------------


def _rep_args(name: str, n: int = NPTS) -> tuple[np.ndarray, ...]:
    return tuple(p[:n] for p in _points(name))


@pytest.mark.parametrize("name", REPS)
def test_2d_broadcast_two_dask_arrays(name: str, kernel_calls: list[int]) -> None:
    """(n, 1) dask x (1, m) dask (m in several chunks): the (n, m) grid, chunks of both."""
    pts = _rep_args(name)
    col = pts[0].reshape(-1, 1)
    row = pts[1][:8].reshape(1, -1)
    rest = tuple(float(p[0]) for p in pts[2:])
    args = (da.from_array(col, chunks=(CHUNK, 1)), da.from_array(row, chunks=(1, 3)), *rest)
    check_lazy_equal(name, args, (col, row, *rest), kernel_calls)
    assert _expected_chunks(args) == ((7, 7, 6), (3, 3, 2))


@pytest.mark.parametrize("name", REPS)
def test_2d_broadcast_dask_column_numpy_row(name: str, kernel_calls: list[int]) -> None:
    pts = _rep_args(name)
    col = pts[0].reshape(-1, 1)
    row = pts[1][:5].reshape(1, -1)
    rest = tuple(float(p[0]) for p in pts[2:])
    check_lazy_equal(name, (da.from_array(col, chunks=(CHUNK, 1)), row, *rest),
                     (col, row, *rest), kernel_calls)


@pytest.mark.parametrize("name", REPS)
def test_dask_with_full_size_numpy_argument(name: str, kernel_calls: list[int]) -> None:
    pts = _rep_args(name)
    args = (da.from_array(pts[0], chunks=CHUNK), *pts[1:])
    check_lazy_equal(name, args, pts, kernel_calls)


@pytest.mark.parametrize("name", REPS)
def test_two_dask_arrays_different_numbers_of_chunks(name: str, kernel_calls: list[int]) -> None:
    pts = _rep_args(name)
    args = (da.from_array(pts[0], chunks=CHUNK), da.from_array(pts[1], chunks=5),
            *(da.from_array(p, chunks=CHUNK) for p in pts[2:]))
    check_lazy_equal(name, args, pts, kernel_calls)


@pytest.mark.parametrize("name", REPS)
def test_two_dask_arrays_same_number_of_chunks_different_sizes(
    name: str, kernel_calls: list[int]
) -> None:
    pts = _rep_args(name)
    args = (da.from_array(pts[0], chunks=CHUNK), da.from_array(pts[1], chunks=((6, 7, 7),)),
            *(da.from_array(p, chunks=CHUNK) for p in pts[2:]))
    check_lazy_equal(name, args, pts, kernel_calls)


@pytest.mark.parametrize("name", ["pnorm", "dbinom", "pwilcox"])
def test_two_calls_in_one_graph(name: str) -> None:
    pts = _rep_args(name)
    fn = nmath.FUNCTIONS[name]
    a = tuple(da.from_array(p, chunks=CHUNK) for p in pts)
    b = tuple(da.from_array(p[::-1].copy(), chunks=CHUNK) for p in pts)
    flags = {"log": True} if KIND[name] == "d" else {"lower_tail": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = [np.asarray(fn(*pts)), np.asarray(fn(*(p[::-1] for p in pts))),
                np.asarray(fn(*pts, **flags))]
        lazy = [fn(*a), fn(*b), fn(*a, **flags)]
        got = dask.compute(*lazy)
    assert len({x.name for x in lazy}) == 3, f"key names {[x.name for x in lazy]}"
    for g, w in zip(got, want):
        assert np.array_equal(g, w, equal_nan=True)


# -- random variates: one check (daskcl/random.py has its own dask tests) ------------------------


def test_rnorm_with_chunks_is_lazy_and_equal() -> None:
    r = nmath.rnorm(50, 1.0, np.array([2.0]), seed=3, chunks=CHUNK)
    assert type(r).__module__.startswith("dask")
    assert r.dtype == np.float64 and type(r._meta) is np.ndarray and r._meta.ndim == 1
    assert r.chunks == ((7,) * 7 + (1,),)
    want = nmath.rnorm(50, 1.0, np.array([2.0]), seed=3)
    got = r.compute()
    assert same_bits(got, want)


# -- glm.f2_f3 ------------------------------------------------------------------------------------


def _glm_problem(family: str, l1: int = 30, l2: int = 3, m1: int = 45, seed: int = 5):
    rng = np.random.default_rng(seed)
    if family == "binomial":
        wt = rng.integers(1, 12, l1).astype(float)
        y = rng.integers(0, 12, l1) / 12 * (wt > 0)
        y = np.round(y * wt) / wt
    elif family == "poisson":
        wt = np.ones(l1)
        y = rng.poisson(3.0, l1).astype(float)
    else:
        wt = rng.uniform(0.5, 2.0, l1)
        y = rng.normal(0, 1, l1)
    x = rng.normal(size=(l1, l2)) / np.sqrt(l2)
    alpha = rng.normal(0, 0.5, l1)
    b = rng.normal(0, 1, size=(m1, l2))
    b[7] = np.nan                                       # NaN stays in its own row
    mu = rng.normal(0, 0.5, l2)
    a = rng.normal(size=(l2, l2))
    P = a @ a.T / l2 + np.eye(l2)
    return b, y, x, mu, P, alpha, wt


@pytest.mark.parametrize(("family", "link"),
                         [("binomial", "logit"), ("poisson", "log"), ("gaussian", "identity")])
def test_f2_f3_dask_b(family: str, link: str) -> None:
    b, *rest = _glm_problem(family)
    want_qf, want_grad = f2_f3(family, link, b, *rest)
    bd = da.from_array(b, chunks=(CHUNK, -1))
    qf, grad = f2_f3(family, link, bd, *rest)
    for r, nd in ((qf, 1), (grad, 2)):
        assert type(r).__module__.startswith("dask")
        assert r.dtype == np.float64
        assert type(r._meta) is np.ndarray and r._meta.ndim == nd
    assert qf.chunks == (bd.chunks[0],) and grad.chunks == (bd.chunks[0], (b.shape[1],))
    got_qf, got_grad = dask.compute(qf, grad)
    assert np.isnan(got_qf[7]) and np.isfinite(np.delete(got_qf, 7)).all()
    assert same_bits(got_qf, want_qf) and same_bits(got_grad, want_grad)
    # two calls on other grids in one graph do not mix
    qf2, _ = f2_f3(family, link, bd[::-1], *rest)
    both = dask.compute(qf, qf2)
    assert np.array_equal(both[0], want_qf, equal_nan=True)
    assert np.array_equal(both[1], want_qf[::-1], equal_nan=True)


def test_the_index_i_is_the_whole_arrays_under_dask() -> None:
    """``i`` in an operation is the element's flat index in the C order of the whole result;
    under dask each chunk counted its elements from 0.  Chunks cut along any axis, broadcast
    inputs, several outputs: the NumPy call's values."""
    from daskcl import ElementwiseKernel

    idx = ElementwiseKernel("double x, double w", "double y", "y = x + i * w;", name="at_index")
    x = np.arange(35.0).reshape(5, 7) / 8
    w = np.linspace(1, 2, 7)
    want = idx(x, w)
    assert np.array_equal(want, x + np.arange(35).reshape(5, 7) * w)
    for chunks in ((2, 3), (5, 1), (1, 7), (3, 7)):
        got = idx(da.from_array(x, chunks=chunks), w).compute()
        assert np.array_equal(got, want), chunks
    col = da.from_array(x[:, :1], chunks=(2, 1))          # (5, 1) against (7,): (5, 7)
    assert np.array_equal(idx(col, da.from_array(w, chunks=3)).compute(), idx(x[:, :1], w))
    two = ElementwiseKernel("double x", "double a, double b", "a = i; b = x - i;", name="two_i")
    a, b = two(da.ones((4, 6), chunks=(3, 4)))
    assert np.array_equal(a.compute(), np.arange(24.0).reshape(4, 6))
    assert np.array_equal(b.compute(), 1 - np.arange(24.0).reshape(4, 6))
    # a comment or a name that only contains i does not count as reading it
    plain = ElementwiseKernel("double x", "double y", "y = x * 2; // i is not read", name="no_i")
    assert not plain.definition.index and idx.definition.index
    # unknown chunk sizes cannot give the indices
    x1 = da.arange(10, chunks=3).astype(float)
    with pytest.raises(ValueError, match=r"at_index: the operation reads i, the element's "
                       r"index in the whole array, which a dask array of unknown chunk sizes"):
        idx(x1[x1 > 2], 1.0)


def test_every_chunks_warning_shows_under_the_default_filter():
    """The chunks' warnings all come from one line of dask's, and the "default" action shows a
    text once per line: six chunks of one NaN each showed "qnorm: 1 NaN(s) produced" once in a
    script (and a distributed worker's log three lines for ten chunks), where the docs promise
    one for each chunk with its count.  "once" still shows it once; "ignore" none."""
    p = da.from_array(np.array([2.0, 0.5, 2.0, 0.5, 2.0, 0.5]), chunks=2)
    for action, shown in (("default", 6), ("once", 1), ("ignore", 0)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(action)
            for _ in range(2):
                nmath.qnorm(p).compute(scheduler="sync")
        assert [str(w.message) for w in caught] == ["qnorm: 1 NaN(s) produced"] * shown, action
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="qnorm: 1 NaN"):
            nmath.qnorm(p).compute(scheduler="sync")


def test_a_0d_dask_call_computes_to_a_numpy_scalar():
    """The NumPy call and dask's own arithmetic on a 0-d array give a NumPy scalar; daskcl's
    dask call gave a 0-d ndarray."""
    x = da.from_array(np.array(0.5))
    got = nmath.pnorm(x).compute()
    assert type(got) is np.float64 and got == nmath.pnorm(0.5)
    assert type((x + 1).compute()) is np.float64                  # dask's own
    got = nmath.pgamma(x, da.from_array(np.array(2.0)), rate=3.0).compute()
    assert type(got) is np.float64 and got == nmath.pgamma(0.5, 2.0, rate=3.0)
