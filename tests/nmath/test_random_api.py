# SPDX-License-Identifier: GPL-2.0-or-later
"""The r-functions as an API: chunk invariance, offsets, broadcasting, R's domain rules.

Element k of a result depends only on (seed, offset + k) and its parameters, so a dask array
equals the NumPy result for any chunking (also computed by several worker processes), a
stream can be produced in pieces with ``offset``, and every element can be recomputed alone.
R's domain rules are checked against libRmath itself: wherever R's r-function returns the same
value on every draw (NaN, or a degenerate distribution), daskcl must return exactly that value.
"""

from __future__ import annotations

import ctypes
import inspect
import math
import warnings
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest
from support.rmath_oracle import library

from daskcl import nmath
from daskcl.kernels import _plan
from daskcl.kernels import _random as drandom
from daskcl.kernels._docs import ALIASES

inf, nan = math.inf, math.nan

# one parameter set per function, valid and non-degenerate
PARAMS = {
    "runif": (-1.0, 2.0), "rnorm": (1.0, 2.0), "rexp": (2.0,), "rlnorm": (0.0, 1.0),
    "rcauchy": (0.0, 1.0), "rlogis": (0.0, 1.0), "rweibull": (1.5, 2.0), "rgamma": (0.7, 2.0),
    "rbeta": (0.5, 3.0), "rchisq": (3.0,), "rt": (4.0,), "rf": (3.0, 7.0),
    "rnchisq": (3.0, 2.0), "rnbeta": (2.0, 3.0, 1.5), "rpois": (12.0,), "rbinom": (40.0, 0.3),
    "rgeom": (0.3,), "rnbinom": (2.5, 0.4), "rnbinom_mu": (2.5, 6.0), "rhyper": (30.0, 20.0, 12.0),
    "rwilcox": (4.0, 6.0), "rsignrank": (12.0,),
}


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def test_every_r_row_is_exposed():
    text = (Path(__file__).resolve().parents[1] / "data" / "rmath_api.tsv").read_text()
    rows = [line.split("\t") for line in text.splitlines()
            if line.strip() and not line.startswith("#")]
    want = {r[0] for r in rows if len(r) > 1 and r[1] == "r"}
    assert want == set(PARAMS) == {fn.name for fn in drandom.ROWS}
    for name in want:
        assert name in nmath.__all__ and callable(getattr(nmath, name))
        row = next(r for r in rows if r[0] == name)
        params = [p.strip() for p in row[2].split(",")] if len(row) > 2 and row[2].strip() else []
        sig = inspect.signature(getattr(nmath, name))
        names = list(sig.parameters)
        assert names[1:1 + len(params)] == params, name
        # then the generators' keywords, then R's own keywords where R differs from Rmath.h
        aliases = list(ALIASES.get(name, {}))
        assert names[1 + len(params):] == ["seed", "offset", "chunks", "device", *aliases]


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_chunk_invariance_1d(name):
    params = PARAMS[name]
    ref = getattr(nmath, name)(600, *params, seed=11)
    assert ref.shape == (600,) and ref.dtype == np.float64 and np.isfinite(ref).all()
    for chunks in (1000, 1, 77, (100, 250, 1, 249)):
        d = getattr(nmath, name)(600, *params, seed=11, chunks=chunks)
        assert isinstance(d, da.Array)
        assert same(d.compute(scheduler="threads"), ref), (name, chunks)


@pytest.mark.parametrize("name", ["rnorm", "rgamma", "rbinom", "rhyper"])
def test_chunk_invariance_2d_with_array_parameters(name):
    params = list(PARAMS[name])
    rng = np.random.default_rng(3)
    # the first parameter varies along rows, the last along columns; both broadcast
    shape = (40, 30)
    p0 = np.full((40, 1), params[0])
    if name in ("rbinom", "rhyper"):
        p0 = p0 + rng.integers(0, 5, size=(40, 1))
    else:
        p0 = p0 * rng.uniform(0.5, 2.0, size=(40, 1))
    params[0] = p0
    ref = getattr(nmath, name)(shape, *params, seed=5)
    assert ref.shape == shape
    for chunks in ((7, 30), (40, 1), (13, 11), ((10, 30), (29, 1))):
        d = getattr(nmath, name)(shape, *params, seed=5, chunks=chunks)
        assert same(d.compute(scheduler="threads"), ref), chunks
    # a dask parameter: its chunks need not match the output's
    dp = da.from_array(p0, chunks=(9, 1))
    d = getattr(nmath, name)(shape, dp, *params[1:], seed=5, chunks=(16, 8))
    assert same(d.compute(scheduler="threads"), ref)
    d = getattr(nmath, name)(shape, dp, *params[1:], seed=5)          # chunks from "auto"
    assert isinstance(d, da.Array) and same(d.compute(scheduler="threads"), ref)


def test_broadcast_parameters_are_per_element():
    """An element's value depends on its own parameters only, not on its neighbours'."""
    sd = np.array([[1.0], [2.0], [4.0]])
    x = nmath.rnorm((3, 50), 0.0, sd, seed=9)
    for i in range(3):
        row = nmath.rnorm(50, 0.0, sd[i, 0], seed=9, offset=50 * i)
        assert same(x[i], row)
    z = nmath.rnorm(150, seed=9).reshape(3, 50)
    np.testing.assert_allclose(x, sd * z, rtol=0, atol=0)


def test_offset_continues_the_stream():
    for name in ("runif", "rgamma", "rpois", "rwilcox"):
        full = getattr(nmath, name)(1000, *PARAMS[name], seed=21)
        for m in (1, 333, 999):
            tail = getattr(nmath, name)(1000 - m, *PARAMS[name], seed=21, offset=m)
            assert same(tail, full[m:]), (name, m)
    # a shape counts its elements in C order
    grid = nmath.rbeta((4, 5), 0.5, 0.5, seed=2, offset=10)
    assert same(grid.ravel(), nmath.rbeta(30, 0.5, 0.5, seed=2)[10:])


def test_each_element_alone():
    full = nmath.rnbinom(500, 2.5, 0.4, seed=4)
    for k in (0, 1, 255, 256, 499):
        assert same(nmath.rnbinom(1, 2.5, 0.4, seed=4, offset=k)[0], full[k])


@pytest.mark.parametrize("mode", ["direct", "pinned", "staged"])
def test_launch_size_and_slabs_do_not_matter(monkeypatch, mode):
    """The path for devices with their own memory (pieces through slots of queues) and device
    results give the same values."""
    from daskcl.kernels import _transfer

    ref = {n: getattr(nmath, n)((37, 29), *PARAMS[n], seed=8) for n in ("rnorm", "rhyper")}
    monkeypatch.setattr(_transfer, "mode", lambda bound: mode)
    for n, want in ref.items():                      # one launch into a device buffer
        assert same(getattr(nmath, n)((37, 29), *PARAMS[n], seed=8), want), n
    monkeypatch.setattr(_transfer, "SLAB", 100)
    monkeypatch.setattr(_plan, "LAUNCH_CPU", 100)
    for n, want in ref.items():                      # 11 pieces through three slots
        assert same(getattr(nmath, n)((37, 29), *PARAMS[n], seed=8), want), n
        dev = getattr(nmath, n)((37, 29), *PARAMS[n], seed=8, device=True)
        assert same(dev.get(), want), n


def test_seeds():
    a = nmath.rnorm(100, seed=1)
    assert same(a, nmath.rnorm(100, seed=1))
    assert not np.any(a == nmath.rnorm(100, seed=2))
    assert not np.any(a == nmath.rnorm(100, seed=2**64 - 1))
    assert not np.any(nmath.rnorm(100) == nmath.rnorm(100))   # fresh seed each call
    d = nmath.rnorm(100, chunks=10)                           # one seed for all chunks
    assert same(d.compute(), d.compute())
    with pytest.raises(ValueError, match="seed"):
        nmath.rnorm(3, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        nmath.rnorm(3, seed=2**64)
    with pytest.raises(TypeError, match="seed"):
        nmath.rnorm(3, seed=1.5)


def test_sizes_and_arguments():
    assert nmath.runif((), seed=1).shape == ()
    assert isinstance(nmath.runif((), seed=1), np.float64)
    assert nmath.runif(0, seed=1).shape == (0,)
    assert nmath.runif((2, 0, 3), seed=1).shape == (2, 0, 3)
    assert nmath.runif(size=4, seed=1).shape == (4,)
    assert nmath.runif(np.int64(4), seed=1).shape == (4,)
    # rbinom's own `size` parameter: the shape comes first, positionally
    assert same(nmath.rbinom(5, size=10, prob=0.5, seed=3), nmath.rbinom(5, 10, 0.5, seed=3))
    assert list(inspect.signature(nmath.rbinom).parameters)[:3] == ["n", "size", "prob"]
    with pytest.raises(TypeError):
        nmath.rgamma(5, seed=1)                       # shape has no default
    with pytest.raises(ValueError, match="does not broadcast"):
        nmath.rnorm(5, np.zeros(4), seed=1)
    with pytest.raises(ValueError, match="does not broadcast"):
        nmath.rnorm((3, 5), np.zeros((3, 5, 1)), seed=1)
    with pytest.raises(TypeError, match="size"):
        nmath.rnorm(2.5, seed=1)
    with pytest.raises(ValueError, match="negative"):
        nmath.rnorm(-1, seed=1)
    with pytest.raises(ValueError, match="offset"):
        nmath.rnorm(3, seed=1, offset=-2)
    with pytest.raises(ValueError, match="offset"):
        nmath.rnorm(3, seed=1, offset=2**64 - 2)
    with pytest.raises(TypeError, match="real numbers"):
        nmath.rnorm(3, np.array(["a", "b", "c"]), seed=1)
    for size in (True, (2, False), np.bool_(True)):     # a bool is not a length, as for seed
        with pytest.raises(TypeError, match=r"rnorm: size must be an int"):
            nmath.rnorm(size, seed=1)
    # chunks that do not cut the shape: a ValueError that says so (dask divided by a 0)
    for chunks in (0, (3, 3), "x"):
        with pytest.raises(ValueError, match=r"rnorm: chunks=.* do not cut size \(10,\)"):
            nmath.rnorm(10, seed=1, chunks=chunks)
    assert nmath.rnorm(10, seed=1, chunks=-1).chunks == ((10,),)


def test_nan_warning_counts_produced_nans():
    sd = np.array([1.0, -1.0, nan, -2.0, 1.0])
    with pytest.warns(RuntimeWarning, match=r"^rnorm: 3 NaN\(s\) produced$"):
        x = nmath.rnorm(5, 0.0, sd, seed=1)
    assert np.isnan(x[1:4]).all() and np.isfinite(x[[0, 4]]).all()
    # NaN in, NaN out, counted as R counts it: rpois(3, NaN) warns "NAs produced"
    with pytest.warns(RuntimeWarning, match=r"^rpois: 3 NaN\(s\) produced"):
        assert np.isnan(nmath.rpois(3, nan, seed=1)).all()
    with pytest.warns(RuntimeWarning, match=r"^rnorm: 2 NaN\(s\) produced"):
        assert np.isnan(nmath.rnorm(2, nan, seed=1)).all()
    with pytest.warns(RuntimeWarning, match=r"^rbinom: 3 NaN\(s\) produced$"):
        nmath.rbinom(3, 2.5, 0.5, seed=1)                         # R: non-integer size is NaN
    # a dask array warns where each chunk is computed, one warning per chunk
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        da.compute(nmath.rgamma(40, -1.0, seed=1, chunks=(10, 30)), scheduler="sync")
    assert sorted(str(w.message) for w in caught) == [
        "rgamma: 10 NaN(s) produced", "rgamma: 30 NaN(s) produced"]


# -- R's domain rules, against libRmath -------------------------------------------------------

EDGES = {
    "runif": [(1, 1), (2, 1), (0, inf), (-inf, 0), (nan, 1)],
    "rnorm": [(inf, 1), (-inf, 0), (0, -1), (0, inf), (3, 0), (nan, 1)],
    "rexp": [(0,), (inf,), (-1,)],
    "rlnorm": [(0, 0), (inf, 1), (-inf, 1), (0, -1), (1, inf)],
    "rcauchy": [(0, -1), (inf, 1), (2, 0), (0, inf)],
    "rlogis": [(0, -1), (inf, 1), (0, 0), (0, inf)],
    "rweibull": [(1, 0), (0, 1), (inf, 1), (1, inf), (-1, 1)],
    "rgamma": [(0, 1), (1, 0), (inf, 1), (1, inf), (-1, 0), (-1, 1), (1, -1)],
    "rbeta": [(inf, inf), (inf, 1), (1, 0), (0, 1), (1, inf), (-1, 1), (1, -0.5)],
    "rchisq": [(0,), (inf,), (-1,)],
    "rt": [(0,), (-1,)],
    "rf": [(inf, inf), (0, 1), (1, -1)],
    "rnchisq": [(0, 0), (1, inf), (inf, 1), (inf, 0), (-1, 1), (1, -1), (nan, 1)],
    "rpois": [(0,), (inf,), (-1,)],
    "rbinom": [(0, 0.5), (5, 0), (5, 1), (2.5, 0.5), (inf, 0.5), (5, 1.5), (-1, 0.5), (5, nan)],
    "rgeom": [(1,), (0,), (1.5,), (inf,)],
    "rnbinom": [(0, 0.5), (1, 1), (inf, 1), (-1, 0.5), (2, 0), (2, 1.5)],
    "rnbinom_mu": [(0, 1), (1, 0), (-1, 1), (1, inf), (1, -1)],
    "rhyper": [(3, 4, 8), (0, 4, 2), (3, 0, 2), (3, 4, 0), (3, 4, 7), (inf, 1, 1), (-1, 2, 1)],
    "rwilcox": [(0, 3), (3, 0), (-1, 3)],
    "rsignrank": [(0,), (-1,), (0.4,)],
}


def r_draws(name: str, params: tuple[float, ...], k: int = 6) -> list[float]:
    f = getattr(library(), name)
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_double] * len(params)
    library().set_seed(ctypes.c_uint(1234), ctypes.c_uint(5678))
    return [f(*params) for _ in range(k)]


@pytest.mark.r
@pytest.mark.parametrize("name", sorted(EDGES))
def test_domain_rules_as_r(name):
    for params in EDGES[name]:
        rv = r_draws(name, params)
        ours_nan_counts = 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = getattr(nmath, name)(64, *params, seed=17)
        msgs = [str(w.message) for w in caught]
        if all(same(v, rv[0]) for v in rv):          # R is deterministic here
            assert np.all([same(v, rv[0]) for v in x]), (name, params, rv[0], x[:4])
            if math.isnan(rv[0]):      # R warns "NAs produced" for NaN parameters too
                ours_nan_counts = 64
        else:                                        # R draws: so do we, never NaN
            assert not np.isnan(x).any() and len(set(x.tolist())) > 1, (name, params)
        if ours_nan_counts:
            # generators with a parameter limit name it after the count, beside invalid
            # parameters (the NaN here comes from those)
            limit = drandom.ROWS[[r.name for r in drandom.ROWS].index(name)].limit
            note = f" (invalid parameters, or {limit})" if limit else ""
            assert msgs == [f"{name}: 64 NaN(s) produced{note}"], (name, params, msgs)
        else:
            assert msgs == [], (name, params, msgs)


def test_rbeta_zero_shapes_are_a_fair_coin():
    x = nmath.rbeta(4000, 0.0, 0.0, seed=3)
    assert set(np.unique(x)) == {0.0, 1.0}
    assert abs(x.mean() - 0.5) < 4 * 0.5 / math.sqrt(4000)


@pytest.mark.r
def test_infinite_size_negative_binomial_follows_r():
    """R replaces an infinite size by DBL_MAX / 2 (and so returns huge counts for prob < 1)."""
    x = nmath.rnbinom_mu(2000, inf, 3.0, seed=1)             # the Poisson(3) limit
    assert abs(x.mean() - 3.0) < 5 * math.sqrt(3 / 2000)
    assert np.all(x == np.round(x))
    y = nmath.rnbinom(8, inf, 0.5, seed=1)
    r = r_draws("rnbinom", (inf, 0.5), 3)
    np.testing.assert_allclose(y, r[0], rtol=1e-6)


@pytest.mark.slow
def test_distributed_workers_agree():
    """Chunks computed by two worker processes equal the local NumPy result."""
    from distributed import Client, LocalCluster

    ref = nmath.rgamma((300, 40), 0.5, 2.0, seed=77)
    with dask.config.set({"distributed.worker.daemon": False}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=":0") as cluster, Client(cluster) as client:
        d = client.persist(nmath.rgamma((300, 40), 0.5, 2.0, seed=77, chunks=(20, 40)))
        got = d.compute()
        holders = [w for w, keys in client.has_what().items() if keys]
    assert len(holders) == 2            # both workers computed chunks
    assert same(got, ref)


def test_docstring_examples_run():
    import doctest

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    tests = finder.find(drandom) + [t for name in PARAMS
                                    for t in finder.find(getattr(nmath, name), name)]
    assert sum(len(t.examples) for t in tests) > 22 * 3
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


def test_seed_takes_a_seed_sequence_or_a_generator():
    # a SeedSequence is its first 64-bit state word, every time
    ss = np.random.SeedSequence(2026)
    key = int(ss.generate_state(1, np.uint64)[0])
    x = nmath.rnorm(6, seed=ss)
    assert same(x, nmath.rnorm(6, seed=key))
    assert same(x, nmath.rnorm(6, seed=np.random.SeedSequence(2026)))
    # a Generator gives one 64-bit draw as the key, and advances
    g, h = np.random.default_rng(5), np.random.default_rng(5)
    y = nmath.rnorm(6, seed=g)
    assert same(y, nmath.rnorm(6, seed=int(h.integers(0, 2**64, dtype=np.uint64))))
    assert g.integers(0, 2**64, dtype=np.uint64) == h.integers(0, 2**64, dtype=np.uint64)
    assert not same(nmath.rnorm(6, seed=g), y)  # the next call gets the next key
    with pytest.raises(TypeError, match=r"rnorm: seed must be an int .*SeedSequence"):
        nmath.rnorm(3, seed=np.random.PCG64(1))
    with pytest.raises(TypeError, match="seed must be"):
        nmath.rnorm(3, seed=1.0)


def test_masked_parameters_are_refused():
    m = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    with pytest.raises(TypeError, match="rnorm: parameter 'mean' is a masked array"):
        nmath.rnorm(2, m)


def test_rbeta_with_ncp_warns_where_r_does():
    """R's rbeta(n, a, b, ncp) is R code, X / (X + Y) of rchisq(n, 2a, ncp) and rchisq(n, 2b):
    those two warn "NAs produced" for their invalid parameters (a NaN or < 0, ncp NaN, Inf or
    < 0; b NaN, Inf or < 0), but 0 / 0 (a = b = ncp = 0, or a = b = 1e-300 whose variates
    underflow) and Inf / Inf (a = Inf) are NaN in silence (R 4.2, each case checked with
    Rscript).  daskcl warned for every NaN."""
    inf, nan = np.inf, np.nan
    r_warns = {(1.0, inf, 1.0): True, (inf, 2.0, 1.0): False, (-1.0, 2.0, 1.0): True,
               (1.0, -1.0, 1.0): True, (1.0, 2.0, inf): True, (1.0, 2.0, -1.0): True,
               (nan, 2.0, 1.0): True, (1.0, nan, 1.0): True, (0.0, 0.0, 0.0): False,
               (inf, inf, 1.0): True, (1e-300, 1e-300, 0.0): False}
    for (a, b, ncp), warns in r_warns.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = nmath.rbeta(3, a, b, ncp=ncp, seed=5)
        assert np.isnan(got).all(), (a, b, ncp, got)
        assert [str(w.message) for w in caught] == (["rbeta: 3 NaN(s) produced"] if warns
                                                    else []), (a, b, ncp)
    # mixed: only the elements of invalid parameters are counted
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nmath.rbeta(4, np.array([0.0, -1.0, inf, 2.0]), np.array([0.0, 2.0, 2.0, 3.0]),
                          ncp=np.array([0.0, 1.0, 1.0, 1.0]), seed=5)
    assert np.isnan(got[:3]).all() and 0 < got[3] < 1
    assert [str(w.message) for w in caught] == ["rbeta: 1 NaN(s) produced"]
    assert nmath.rbeta(2, 0.0, 2.0, ncp=0.0, seed=1).tolist() == [0.0, 0.0]
