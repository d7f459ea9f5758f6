# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl.glm.f2_f3 against a NumPy reference of the mathematics in f2_f3's docstring.

The reference (``reference`` below) is the specification written out in NumPy/SciPy for
clarity, not speed: eta as an (m1, l1) matrix, each family's l and g elementwise from the table
of the specification, the prior term and the matrix products.  Tail cases (extreme eta, large
counts) are checked against the same formulas evaluated in 50-digit arithmetic with mpmath.

Tolerances: qf to 1e-12 relative; grad to 1e-10 relative to the magnitude of what it sums,
|P||d| + sum_i |x_i||g_i| per component (so "absolute near zero", where the sum cancels).
"""

from __future__ import annotations

import itertools
import pickle
import warnings
from dataclasses import replace

import dask.array as da
import numpy as np
import pytest
from scipy import special, stats
from support import queues

import daskcl.glm as glm
from daskcl.glm import FactorialGrid, Posterior, Tuning, f2_f3

PAIRS = list(glm.FAMILIES)
IDS = [f"{f}-{lk}" for f, lk in PAIRS]


# -- the reference ------------------------------------------------------------------------------


def lchoose(n, s):
    return special.gammaln(n + 1) - special.gammaln(s + 1) - special.gammaln(n - s + 1)


#: the binomial data of :func:`data` round some weights by design (the counts of the likelihood
#: are round(y * wt) of round(wt)), which R's glm warns of; the warning's own test asks for it
pytestmark = pytest.mark.filterwarnings("ignore:f2_f3. non-integer #successes")


def terms(family, link, eta, y, wt):
    """l (negative log-likelihood) and g = dl/deta, elementwise, as the specification's table.

    For the binomial, p and 1 - p are both formed without cancellation as the specification
    asks (on the log scale through scipy's log_expit / log_ndtr, or exp(-exp(eta)) for
    cloglog), and -log dbinom(s; n, p) = -log choose(n, s) - s log p - (n - s) log(1 - p).
    """
    family = {"quasibinomial": "binomial", "quasipoisson": "poisson"}.get(family, family)
    if family == "binomial":
        n, s = np.round(wt), np.round(y * wt)
        if link == "logit":
            log_p, log_q = special.log_expit(eta), special.log_expit(-eta)
            g = wt * (special.expit(eta) - y)
        elif link == "probit":
            log_p, log_q = special.log_ndtr(eta), special.log_ndtr(-eta)
            log_phi = stats.norm.logpdf(eta)
            g = -wt * (y * np.exp(log_phi - log_p) - (1 - y) * np.exp(log_phi - log_q))
        else:  # cloglog
            m = np.exp(eta)
            p, q = -np.expm1(-m), np.exp(-m)
            log_p, log_q = np.log(p), -m
            a = np.exp(eta - m)
            g = -wt * (y * a / p - (1 - y) * a / q)
        nll = -(lchoose(n, s) + s * log_p + (n - s) * log_q)
    elif family == "poisson":
        m = np.exp(eta)
        nll = wt * (m - y * eta + special.gammaln(y + 1))
        g = wt * (m - y)
    elif family == "Gamma":
        m = np.exp(eta)
        nll = -stats.gamma.logpdf(y, a=wt, scale=m / wt)
        g = wt * (1 - y / m)
    elif family == "gaussian":
        nll = 0.5 * np.log(2 * np.pi) - 0.5 * np.log(wt) + 0.5 * wt * (y - eta) ** 2
        g = wt * (eta - y)
    else:
        raise AssertionError(family)
    return nll, g


def reference(family, link, b, y, x, mu, P, alpha, wt):
    """qf, grad and the per-component magnitude of the sums behind grad."""
    eta = alpha + b @ x.T
    nll, g = terms(family, link, eta, y, wt)
    d = b - mu
    qf = 0.5 * np.einsum("jk,kl,jl->j", d, P, d) + nll.sum(axis=1)
    grad = d @ P.T + g @ x
    scale = np.abs(d) @ np.abs(P).T + np.abs(g) @ np.abs(x)
    return qf, grad, scale


def data(family, l1, rng):
    """y and wt of l1 observations typical of the family."""
    if family in ("binomial", "quasibinomial"):
        wt = rng.integers(1, 20, l1).astype(float)
        y = rng.integers(0, 1000, l1) % (wt + 1) / wt
        wt[::7] = np.round(wt[::7] * 0.9 + 0.3, 1)   # non-integer weights: rounded counts
        return y, wt
    if family in ("poisson", "quasipoisson"):
        y = rng.poisson(3.0, l1).astype(float)
        if family == "quasipoisson":
            y = y + rng.uniform(0, 1, l1).round(2)
        return y, rng.uniform(0.5, 2.0, l1)
    if family == "Gamma":
        return rng.gamma(2.0, 1.0, l1), rng.uniform(0.5, 5.0, l1)
    return rng.normal(0, 1, l1), rng.uniform(0.5, 2.0, l1)


def problem(family, l1, l2, m1, seed=0, eta_sd=1.0):
    """A random problem: (b, y, x, mu, P, alpha, wt) with eta of standard deviation ~eta_sd."""
    rng = np.random.default_rng(seed)
    y, wt = data(family, l1, rng)
    x = rng.normal(size=(l1, l2)) / np.sqrt(l2)
    alpha = rng.normal(0, 0.5, l1)
    b = rng.normal(0, eta_sd, size=(m1, l2))
    mu = rng.normal(0, 0.5, l2)
    a = rng.normal(size=(l2, l2))
    P = a @ a.T / l2 + np.eye(l2)
    return b, y, x, mu, P, alpha, wt


def assert_matches(got, ref, rtol_qf=1e-12, rtol_grad=1e-10):
    qf, grad = got
    qf_ref, grad_ref, scale = ref
    assert qf.shape == qf_ref.shape and grad.shape == grad_ref.shape
    rel = np.abs(qf - qf_ref) / np.abs(qf_ref)
    worst = int(np.argmax(rel))
    assert rel[worst] <= rtol_qf, f"qf[{worst}] = {qf[worst]!r}, reference {qf_ref[worst]!r}"
    err = np.abs(grad - grad_ref) / (np.abs(grad_ref) + scale)
    j, k = np.unravel_index(int(np.argmax(err)), err.shape)
    assert err[j, k] <= rtol_grad, (
        f"grad[{j}, {k}] = {grad[j, k]!r}, reference {grad_ref[j, k]!r} "
        f"(relative to the sum's magnitude {err[j, k]:.3g})"
    )


# -- random problems ----------------------------------------------------------------------------

SHAPES = {  # (l1, l2, m1)
    "small": (20, 3, 40),
    "l2=1": (25, 1, 30),
    "l1=1": (1, 3, 30),
    "l2=100": (40, 100, 6),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize(("family", "link"), PAIRS, ids=IDS)
def test_matches_reference(family, link, shape):
    l1, l2, m1 = SHAPES[shape]
    args = problem(family, l1, l2, m1, seed=l1 + l2)
    assert_matches(f2_f3(family, link, *args), reference(family, link, *args))


@pytest.mark.parametrize(("family", "link"), [("quasibinomial", "logit"), ("quasipoisson", "log")])
def test_quasi_families(family, link):
    args = problem(family, 30, 3, 20, seed=5)
    got = f2_f3(family, link, *args)
    assert_matches(got, reference(family, link, *args))
    base = {"quasibinomial": "binomial", "quasipoisson": "poisson"}[family]
    same = f2_f3(base, link, *args)
    np.testing.assert_array_equal(got[0], same[0])
    np.testing.assert_array_equal(got[1], same[1])


@pytest.mark.parametrize(("family", "link"), PAIRS, ids=IDS)
def test_item_tile_and_group_kernels_agree(family, link):
    args = problem(family, 37, 3, 50, seed=3)
    ref = reference(family, link, *args)
    # tile: 16 points per work-group of 32 (the last one partly idle), tiles of 8 observations
    # (the last one partial), l2 = 3 padded to 16
    for tuning in (Tuning(path="item"), Tuning(path="group"),
                   Tuning(path="tile", work_group=32, points_per_group=16, tile_rows=8, mma=0)):
        assert_matches(f2_f3(family, link, *args, tuning=tuning), ref)


@pytest.mark.parametrize(
    "tuning",
    [
        # tiles of 4 over l1 = 37: a partial tile
        Tuning(path="item", work_group=16, tile_rows=4, points_per_item=2, rows_unrolled=2),
        # 3 points and 3 rows per step
        Tuning(path="item", work_group=8, tile_rows=6, points_per_item=3, rows_unrolled=3),
        Tuning(path="item", work_group=32, tile_rows=64, points_per_item=1, rows_unrolled=1),
        # l2 = 5 > work_group: two coefficients per item
        Tuning(path="group", work_group=4),
        # one work-group, m1 = 45 < points_per_group
        Tuning(path="tile", work_group=64, points_per_group=64, tile_rows=4, mma=0),
        # one point quad, 16 work-items on it
        Tuning(path="tile", work_group=16, points_per_group=4, tile_rows=48, mma=0),
    ],
    ids=["ppw2-ru2-tile4", "ppw3-ru3-tile6", "ppw1-ru1", "group-wg4", "tile-pb64", "tile-pb4"],
)
@pytest.mark.parametrize(("family", "link"), [("binomial", "logit"), ("gaussian", "identity")])
def test_launch_configurations(family, link, tuning):
    # m1 = 45 leaves the last work-group partly idle in every configuration
    args = problem(family, 37, 5, 45, seed=11)
    assert_matches(f2_f3(family, link, *args, tuning=tuning), reference(family, link, *args))


@pytest.mark.parametrize("path", ["item", "tile"])
def test_kernels_at_l2_32(path):
    """The size of the benchmark's second case, through the item kernel (registers) and the
    tile kernel (on fp64 tensor cores where the device has them): 130 points, 70 observations."""
    args = problem("binomial", 70, 32, 130, seed=2)
    post = Posterior("binomial", "logit", *args[1:])
    assert post.resolve_tuning(Tuning(path=path)).path == path
    assert_matches(post.f2_f3(args[0], tuning=Tuning(path=path)),
                   reference("binomial", "logit", *args))


def test_offsets_shift_eta():
    """An offset alpha = x v is the same likelihood as coefficients b + v (flat prior)."""
    b, y, x, mu, _, _, wt = problem("poisson", 30, 3, 20, seed=7)
    v = np.array([0.3, -0.2, 0.5])
    flat = np.zeros((3, 3))
    qf1, g1 = f2_f3("poisson", "log", b, y, x, mu, flat, x @ v, wt)
    qf2, g2 = f2_f3("poisson", "log", b + v, y, x, mu, flat, 0.0, wt)
    np.testing.assert_allclose(qf1, qf2, rtol=1e-13)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12 * np.abs(g2).max())


# -- gradient against finite differences ---------------------------------------------------------


@pytest.mark.parametrize(("family", "link"), PAIRS, ids=IDS)
def test_gradient_is_derivative_of_qf(family, link):
    b, y, x, mu, P, alpha, wt = problem(family, 25, 3, 4, seed=13, eta_sd=0.7)
    if family == "binomial":
        # whole counts: otherwise the objective (rounded counts) and the gradient (unrounded y,
        # wt) differ by design
        wt = np.round(wt)
        y = np.round(y * wt) / wt
    post = Posterior(family, link, y, x, mu, P, alpha, wt)
    h = 1e-5
    steps = np.eye(3) * h
    pts = np.concatenate([b] + [b + s for s in steps] + [b - s for s in steps])
    qf, grad = post.f2_f3(pts)
    m = len(b)
    fd = np.stack(
        [(qf[(1 + k) * m:(2 + k) * m] - qf[(4 + k) * m:(5 + k) * m]) / (2 * h) for k in range(3)],
        axis=1,
    )
    np.testing.assert_allclose(grad[:m], fd, rtol=1e-6, atol=1e-6 * np.abs(qf[:m]).max())


# -- factorial grids ----------------------------------------------------------------------------


def test_factorial_grid_order_is_itertools_product():
    values = [[1.0, 2.0], [10.0, 20.0, 30.0], [-5.0, 5.0]]
    grid = FactorialGrid(values)
    assert grid.shape == (12, 3) and len(grid) == 12
    np.testing.assert_array_equal(np.asarray(grid), np.array(list(itertools.product(*values))))
    np.testing.assert_array_equal(np.asarray(grid[5:9]), np.asarray(grid)[5:9])
    np.testing.assert_array_equal(np.asarray(grid[5:9][1:3]), np.asarray(grid)[6:8])


@pytest.mark.parametrize("path", ["item", "group", "tile"])
@pytest.mark.parametrize(("family", "link"), [("binomial", "probit"), ("Gamma", "log")])
def test_factorial_equals_materialised(family, link, path):
    _, y, x, mu, P, alpha, wt = problem(family, 23, 4, 1, seed=17)
    grid = FactorialGrid([np.linspace(-1, 1, 3), [0.5, -0.5], np.linspace(-2, 2, 5), [0.0, 0.1, 0.2]])
    post = Posterior(family, link, y, x, mu, P, alpha, wt)
    tuning = Tuning(path=path)
    qf, grad = post.f2_f3(grid, tuning=tuning)
    qf_m, grad_m = post.f2_f3(np.asarray(grid), tuning=tuning)
    np.testing.assert_array_equal(qf, qf_m)
    np.testing.assert_array_equal(grad, grad_m)
    assert_matches((qf, grad), reference(family, link, np.asarray(grid), y, x, mu, P, alpha, wt))
    part = post.f2_f3(grid[37:101], tuning=tuning)
    np.testing.assert_array_equal(part[0], qf[37:101])
    np.testing.assert_array_equal(part[1], grad[37:101])


# -- dask -----------------------------------------------------------------------------------------


def test_dask_b_equals_numpy():
    import dask
    import dask.array as da

    b, *rest = problem("binomial", 30, 4, 103, seed=19)
    want = f2_f3("binomial", "logit", b, *rest)
    bd = da.from_array(b, chunks=(25, 2))          # chunked along both axes: axis 1 is merged
    qf, grad = f2_f3("binomial", "logit", bd, *rest)
    assert isinstance(qf, da.Array) and isinstance(grad, da.Array)
    assert qf.chunks == ((25, 25, 25, 25, 3),) and grad.chunks == (qf.chunks[0], (4,))
    assert qf.dtype == np.float64 and grad.dtype == np.float64
    assert type(qf._meta) is np.ndarray
    qf_c, grad_c = dask.compute(qf, grad, scheduler="threads")
    np.testing.assert_array_equal(qf_c, want[0])
    np.testing.assert_array_equal(grad_c, want[1])
    qf_n, _ = f2_f3("binomial", "logit", b, *rest, chunks=40)
    assert qf_n.chunks == ((40, 40, 23),)
    np.testing.assert_array_equal(qf_n.compute(scheduler="sync"), want[0])


def test_dask_factorial_grid():
    import dask

    _, y, x, mu, P, alpha, wt = problem("gaussian", 20, 3, 1, seed=23)
    grid = FactorialGrid([np.linspace(-1, 1, 7), np.linspace(0, 1, 6), [-1.0, 0.0, 1.0]])
    qf, grad = f2_f3("gaussian", "identity", grid, y, x, mu, P, alpha, wt, chunks=50)
    assert qf.chunks == ((50, 50, 26),) and grad.shape == (126, 3)
    qf_c, grad_c = dask.compute(qf, grad, scheduler="threads")
    want = f2_f3("gaussian", "identity", np.asarray(grid), y, x, mu, P, alpha, wt)
    np.testing.assert_array_equal(qf_c, want[0])
    np.testing.assert_array_equal(grad_c, want[1])


@pytest.mark.parametrize("chunks", ["5", "big", "Auto", ""])
def test_a_chunks_string_other_than_auto_is_a_type_error(chunks):
    """f2_f3's docs promise a TypeError for chunks of another type; a string other than
    "auto" was a ValueError.  "auto" itself is dask's choice, for an array and a grid."""
    b, *rest = problem("binomial", 30, 4, 103, seed=19)
    grid = FactorialGrid([np.linspace(-1, 1, 7), np.linspace(0, 1, 6), [-1.0, 0.0, 1.0],
                          [0.5]])
    for grid_or_b in (b, grid):
        with pytest.raises(TypeError) as err:
            f2_f3("binomial", "logit", grid_or_b, *rest, chunks=chunks)
        assert str(err.value) == ("f2_f3: chunks must be 'auto', a positive int or a sequence "
                                  f"of ints, not {chunks!r}")
    want = f2_f3("binomial", "logit", b, *rest)
    qf, grad = f2_f3("binomial", "logit", b, *rest, chunks="auto")
    assert isinstance(qf, da.Array) and qf.chunks == ((103,),) and grad.shape == (103, 4)
    np.testing.assert_array_equal(qf.compute(scheduler="sync"), want[0])
    qf_g, _ = f2_f3("binomial", "logit", grid, *rest, chunks="auto")
    assert qf_g.chunks == ((126,),)
    np.testing.assert_array_equal(
        qf_g.compute(scheduler="sync"),
        f2_f3("binomial", "logit", np.asarray(grid), *rest)[0])


def test_posterior_pickles_without_device_state():
    b, *rest = problem("Gamma", 15, 2, 10, seed=29)
    post = Posterior("Gamma", "log", *rest)
    want = post.f2_f3(b)
    clone = pickle.loads(pickle.dumps(post))
    assert clone._devices == {}
    got = clone.f2_f3(b)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


# -- tails: extreme eta, large counts, against 50-digit arithmetic ------------------------------


def mp_term(family, link, eta, y, wt):
    """l and g of one observation in 50-digit arithmetic (the specification's formulas)."""
    import mpmath
    with mpmath.workdps(50):
        e, y_, w = mpmath.mpf(eta), mpmath.mpf(y), mpmath.mpf(wt)
        if family == "binomial":
            n, s = mpmath.mpf(round(wt)), mpmath.mpf(round(y * wt))
            # log p and log q through log1p where p or q is near 1 (50 digits do not hold 1 - 1e-87)
            if link == "logit":
                p, q = 1 / (1 + mpmath.exp(-e)), 1 / (1 + mpmath.exp(e))
                log_p, log_q = -mpmath.log1p(mpmath.exp(-e)), -mpmath.log1p(mpmath.exp(e))
                g = w * (p - y_)
            elif link == "probit":
                p, q = mpmath.ncdf(e), mpmath.ncdf(-e)
                log_p = mpmath.log(p) if e < 0 else mpmath.log1p(-q)
                log_q = mpmath.log(q) if e > 0 else mpmath.log1p(-p)
                phi = mpmath.npdf(e)
                g = -w * (y_ * phi / p - (1 - y_) * phi / q)
            else:
                m = mpmath.exp(e)
                p, q = -mpmath.expm1(-m), mpmath.exp(-m)
                log_p, log_q = (mpmath.log1p(-q) if m > 1 else mpmath.log(p)), -m
                a = mpmath.exp(e - m)
                # a / q = exp(eta - m + m) = exp(eta): e - m loses eta once m has 50 digits
                g = -w * (y_ * a / p - (1 - y_) * mpmath.exp(e))
            nll = -(mpmath.log(mpmath.binomial(n, s)) + s * log_p + (n - s) * log_q)
        elif family == "poisson":
            m = mpmath.exp(e)
            nll = w * (m - y_ * e + mpmath.loggamma(y_ + 1))
            g = w * (m - y_)
        elif family == "Gamma":
            m = mpmath.exp(e)
            scale = m / w
            nll = -(-mpmath.loggamma(w) - w * mpmath.log(scale) + (w - 1) * mpmath.log(y_) - y_ / scale)
            g = w * (1 - y_ / m)
        else:
            nll = mpmath.log(2 * mpmath.pi) / 2 - mpmath.log(w) / 2 + w * (y_ - e) ** 2 / 2
            g = w * (e - y_)
        return float(nll), float(g)


# (y, wt) per family: interior and boundary responses
TAIL_DATA = {
    "binomial": [(0.0, 1.0), (1.0, 1.0), (0.3, 10.0), (1.0, 7.0), (0.0, 4.0)],
    "poisson": [(0.0, 1.0), (3.0, 0.7), (12.5, 2.0)],
    "Gamma": [(0.5, 1.5), (4.0, 3.0)],
    "gaussian": [(-1.0, 2.0)],
}
ETAS = [-800.0, -200.0, -40.0, -8.0, 8.0, 40.0, 200.0, 700.0, 800.0]


@pytest.mark.parametrize(("family", "link"), PAIRS, ids=IDS)
def test_extreme_eta(family, link):
    x, b, zero = np.ones((1, 1)), np.zeros((1, 1)), np.zeros(1)
    for (y, wt), eta in itertools.product(TAIL_DATA[family], ETAS):
        qf, grad = f2_f3(family, link, b, [y], x, zero, [[0.0]], [eta], [wt])
        nll, g = mp_term(family, link, eta, y, wt)
        where = f"{family}/{link} y={y} wt={wt} eta={eta}"
        assert not np.isnan(qf[0]) and not np.isnan(grad[0, 0]), where
        np.testing.assert_allclose(qf[0], nll, rtol=1e-12, err_msg=where)
        np.testing.assert_allclose(grad[0, 0], g, rtol=1e-10, atol=1e-13 * wt, err_msg=where)


@pytest.mark.parametrize(
    ("family", "link", "y", "wt", "rtol"),
    [
        ("binomial", "logit", 0.3, 1e6, 1e-13),     # Loader's split: accurate at the mode
        ("poisson", "log", 2.5e5, 1.0, 1e-13),
        ("Gamma", "log", 3.0, 1e5, 1e-13),
        # log-scale forms: the error is a few ulp of n |log p|, relative to a term of size log n
        ("binomial", "probit", 0.3, 1e6, 1e-9),
        ("binomial", "cloglog", 0.3, 1e6, 1e-9),
    ],
)
def test_large_counts_near_the_mode(family, link, y, wt, rtol):
    if family == "binomial":
        p0 = y
        mode = {"logit": special.logit(p0), "probit": special.ndtri(p0),
                "cloglog": np.log(-np.log1p(-p0))}[link]
    else:
        mode = np.log(y)
    x, b, zero = np.ones((1, 1)), np.zeros((1, 1)), np.zeros(1)
    for dt in (0.0, 1e-6, -1e-4, 3e-3):
        qf, grad = f2_f3(family, link, b, [y], x, zero, [[0.0]], [mode + dt], [wt])
        nll, g = mp_term(family, link, mode + dt, y, wt)
        where = f"{family}/{link} eta = mode + {dt}"
        np.testing.assert_allclose(qf[0], nll, rtol=rtol, err_msg=where)
        # g cancels at the mode: absolute error relative to the size of its terms, wt max(y, 1)
        np.testing.assert_allclose(grad[0, 0], g, rtol=1e-9, atol=1e-13 * wt * max(y, 1.0),
                                   err_msg=where)


# -- the edges of the support, zero weights, NaN ------------------------------------------------


def one(family, link, y, wt, eta=0.3):
    qf, grad = f2_f3(family, link, np.zeros((1, 1)), [y], np.ones((1, 1)), [0.0], [[0.0]], [eta], [wt])
    return qf[0], grad[0, 0]


@pytest.mark.parametrize(
    ("family", "link", "y", "wt", "want"),
    [
        ("binomial", "logit", 1.5, 4.0, np.inf),     # s > n: dbinom = 0
        ("binomial", "probit", -0.25, 4.0, np.inf),  # s < 0
        ("binomial", "cloglog", 1.5, 4.0, np.inf),
        ("binomial", "logit", 0.5, -2.0, np.nan),    # negative size: NaN, as R's dbinom
        ("poisson", "log", -1.0, 1.0, np.inf),
        ("poisson", "log", 2.0, -1.0, np.nan),
        ("Gamma", "log", -1.0, 2.0, np.inf),
        ("Gamma", "log", 0.0, 2.0, np.inf),          # y = 0, shape > 1: density 0
        ("Gamma", "log", 0.0, 0.5, -np.inf),         # y = 0, shape < 1: density +Inf
        ("Gamma", "log", 1.0, -1.0, np.nan),
        ("gaussian", "identity", 1.0, -1.0, np.nan),
    ],
)
def test_outside_the_support(family, link, y, wt, want):
    if family == "binomial" and not 0 <= y <= 1:
        with pytest.warns(RuntimeWarning, match=rf"binomial y must lie in \[0, 1\].*1 row\(s\) "
                          rf"outside, the first y\[0\] = {y!r}, where qf is \+Inf"):
            qf, _ = one(family, link, y, wt)
    else:
        qf, _ = one(family, link, y, wt)
    if np.isnan(want):
        assert np.isnan(qf)
    else:
        assert qf == want


def test_non_integer_binomial_counts_warn_as_rs_glm_does():
    """R's glm warns "non-integer #successes in a binomial glm!" where y * wt is more than
    1e-3 from an integer; the likelihood here counts round(y * wt) of round(wt), so such data
    change the model silently.  f2_f3 and Posterior warn (the first row named); whole counts,
    rounding noise within 1e-3 and quasibinomial do not."""
    x, mu, P = np.ones((3, 1)), np.zeros(1), np.eye(1)
    b = np.zeros((2, 1))
    with pytest.warns(RuntimeWarning, match=r"f2_f3: non-integer #successes in a binomial "
                      r"model: 1 row\(s\), the first y\[1\] \* wt\[1\] = 0\.3 \* 2\.0; the "
                      r"likelihood counts round\(y \* wt\) successes of round\(wt\) trials") as got:
        f2_f3("binomial", "logit", b, [0.5, 0.3, 1.0], x, mu, P, 0.0, 2.0)
    assert got[0].filename == __file__
    with pytest.warns(RuntimeWarning, match=r"2 row\(s\), the first y\[0\] \* wt\[0\] = "
                      r"0\.4 \* 2\.5"):
        Posterior("binomial", "probit", [0.4, 1 / 3, 0.0], x, mu, P, 0.0, [2.5, 3.0, 1.2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f2_f3("binomial", "logit", b, [0.5, 1 / 3, 1.0], x, mu, P, 0.0, [2.0, 3.0, 1.0005])
        f2_f3("quasibinomial", "logit", b, [0.5, 0.3, 1.0], x, mu, P, 0.0, 2.0)
        f2_f3("binomial", "logit", b, [0.5, np.nan, 1.0], x, mu, P, 0.0, 2.0)
        f2_f3("poisson", "log", b, [0.5, 0.3, 1.0], x, mu, P, 0.0, 2.0)


def test_binomial_proportions_outside_0_1_warn():
    """R's glm stops at binomial y outside [0, 1]; here qf is +Inf at every b, which counts
    passed as y (not proportions) met silently: a warning naming the first row, for
    quasibinomial too; y in [0, 1] and NaN do not warn."""
    x, mu, P = np.ones((3, 1)), np.zeros(1), np.eye(1)
    b = np.zeros((2, 1))
    with pytest.warns(RuntimeWarning, match=r"f2_f3: quasibinomial y must lie in \[0, 1\].*: "
                      r"2 row\(s\) outside, the first y\[1\] = 3\.0") as got:
        qf, _ = f2_f3("quasibinomial", "logit", b, [0.5, 3.0, -1.0], x, mu, P, 0.0, 4.0)
    assert got[0].filename == __file__ and (qf == np.inf).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f2_f3("binomial", "logit", b, [0.0, np.nan, 1.0], x, mu, P, 0.0, 4.0)


def test_gamma_y0_shape1_is_eta():
    # -log dgamma(0; 1, scale = e^eta) = log(scale) = eta; g = wt (1 - 0) = 1
    assert one("Gamma", "log", 0.0, 1.0, eta=0.7) == (0.7, 1.0)


@pytest.mark.parametrize(("family", "link"), PAIRS, ids=IDS)
def test_zero_weights(family, link):
    b, y, x, mu, P, alpha, wt = problem(family, 30, 3, 20, seed=31)
    wt0 = wt.copy()
    wt0[[2, 17]] = 0.0
    qf, grad = f2_f3(family, link, b, y, x, mu, P, alpha, wt0)
    if family in ("gaussian", "Gamma"):
        # -log dnorm with infinite sd, -log dgamma's point mass at 0: +Inf (y != 0)
        assert np.all(qf == np.inf)
        keep = np.ones(30, bool)
        keep[[2, 17]] = False
        _, g_drop = f2_f3(family, link, b, y[keep], x[keep], mu, P, alpha[keep], wt[keep])
        np.testing.assert_allclose(grad, g_drop, rtol=1e-12, atol=1e-12)
        return
    keep = np.ones(30, bool)
    keep[[2, 17]] = False
    want = f2_f3(family, link, b, y[keep], x[keep], mu, P, alpha[keep], wt[keep])
    np.testing.assert_allclose(qf, want[0], rtol=1e-13)
    np.testing.assert_allclose(grad, want[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["item", "group", "tile"])
def test_nan_reaches_only_the_outputs_that_depend_on_it(path):
    tuning = Tuning(path=path)
    b, y, x, mu, P, alpha, wt = problem("binomial", 30, 3, 20, seed=37)
    clean = f2_f3("binomial", "logit", b, y, x, mu, P, alpha, wt, tuning=tuning)
    assert np.isfinite(clean[0]).all() and np.isfinite(clean[1]).all()

    b1 = b.copy()
    b1[4, 1] = np.nan                                  # one grid point
    qf, grad = f2_f3("binomial", "logit", b1, y, x, mu, P, alpha, wt, tuning=tuning)
    rows = np.arange(20) != 4
    assert np.isnan(qf[4]) and np.isnan(grad[4]).all()
    np.testing.assert_array_equal(qf[rows], clean[0][rows])
    np.testing.assert_array_equal(grad[rows], clean[1][rows])

    P1 = P.copy()
    P1[0, 2] = P1[2, 0] = np.nan                       # prior precision: qf, and grad[:, 0], [:, 2]
    qf, grad = f2_f3("binomial", "logit", b, y, x, mu, P1, alpha, wt, tuning=tuning)
    assert np.isnan(qf).all() and np.isnan(grad[:, [0, 2]]).all()
    np.testing.assert_array_equal(grad[:, 1], clean[1][:, 1])

    for name in ("y", "alpha", "wt"):                   # one observation: everything
        arrays = {"y": y.copy(), "alpha": alpha.copy(), "wt": wt.copy()}
        arrays[name][5] = np.nan
        qf, grad = f2_f3("binomial", "logit", b, arrays["y"], x, mu, P, arrays["alpha"],
                         arrays["wt"], tuning=tuning)
        assert np.isnan(qf).all() and np.isnan(grad).all(), name

    grid = FactorialGrid([[0.1, np.nan, 0.3], [0.0, 1.0], [-1.0, 1.0]])
    qf, grad = f2_f3("binomial", "logit", grid, y, x, mu, P, alpha, wt, tuning=tuning)
    bad = np.isnan(np.asarray(grid)).any(axis=1)
    assert np.isnan(qf[bad]).all() and np.isfinite(qf[~bad]).all()
    assert np.isnan(grad[bad]).all() and np.isfinite(grad[~bad]).all()


# -- errors ----------------------------------------------------------------------------------------


def args_ok(l1=5, l2=2, m1=3):
    return problem("gaussian", l1, l2, m1, seed=41)


def test_unsupported_family_lists_the_supported():
    b, y, x, mu, P, alpha, wt = args_ok()
    with pytest.raises(ValueError, match=r"'binomial'.*'identity'.*supported.*binomial/logit.*"
                                         r"poisson/log.*Gamma/log.*gaussian/identity"):
        f2_f3("binomial", "identity", b, y, x, mu, P, alpha, wt)
    with pytest.raises(ValueError, match="quasipoisson/log"):
        f2_f3("negbin", "log", b, y, x, mu, P, alpha, wt)
    with pytest.raises(TypeError, match="family and link must be strings"):
        f2_f3(None, "log", b, y, x, mu, P, alpha, wt)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (dict(y=np.zeros(4)), r"y has shape \(4,\) but x has shape \(5, 2\).*\(l1,\) = \(5,\)"),
        (dict(alpha=np.zeros((5, 1))), r"alpha has shape \(5, 1\) but x has shape \(5, 2\)"),
        (dict(wt=np.zeros(6)), r"wt has shape \(6,\)"),
        (dict(x=np.zeros(5)), r"x must be the \(l1, l2\) design matrix.*shape \(5,\)"),
        (dict(mu=np.zeros(3)), r"mu has shape \(3,\) but x has shape \(5, 2\).*\(l2,\) = \(2,\)"),
        (dict(P=np.eye(3)), r"P has shape \(3, 3\) but x has shape \(5, 2\).*\(2, 2\)"),
        (dict(b=np.zeros((3, 3))), r"b has shape \(3, 3\) but x has shape \(5, 2\).*\(m1, 2\)"),
        (dict(b=np.zeros(2)), r"b has shape \(2,\)"),
        (dict(P=np.array([[1.0, 0.5], [0.2, 1.0]])), r"P must be symmetric.*P\[0, 1\] = 0.5"),
        # an infinite precision must equal its mirror (inf against 0 passed: inf > 1e-10 inf
        # is false)
        (dict(P=np.array([[1.0, np.inf], [0.0, 1.0]])), r"P must be symmetric.*P\[0, 1\] = inf"),
        (dict(x=np.zeros((5, 0))), "at least one coefficient"),
    ],
)
def test_bad_shapes_name_the_arrays(change, match):
    b, y, x, mu, P, alpha, wt = args_ok()
    kw = dict(b=b, y=y, x=x, mu=mu, P=P, alpha=alpha, wt=wt)
    kw.update(change)
    with pytest.raises(ValueError, match=match):
        f2_f3("gaussian", "identity", **kw)


def test_an_infinite_or_nan_precision_is_taken_without_numpy_warnings():
    """A symmetric P holding inf (a coefficient held at its prior mean) or NaN is accepted and
    reaches qf as such; checking it raised NumPy's "invalid value encountered in subtract"
    (inf - inf)."""
    _, y, x, mu, P, alpha, wt = args_ok()
    d = (mu + 0.25)[None, :]                  # b - mu > 0 in both coefficients
    for bad, want in ((np.inf, np.inf), (np.nan, np.nan)):
        Q = P.copy()
        Q[0, 1] = Q[1, 0] = bad
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            post = Posterior("gaussian", "identity", y, x, mu, Q, alpha, wt)
        np.testing.assert_array_equal(post.f2_f3(d)[0], [want])


def test_bad_types_and_grids():
    b, y, x, mu, P, alpha, wt = args_ok()
    with pytest.raises(TypeError, match="y must be real numbers"):
        f2_f3("gaussian", "identity", b, np.array(["a"] * 5), x, mu, P, alpha, wt)
    # a mask would be lost: refused, as nmath refuses one, for the data and for the grid
    for name, value in (("y", y), ("x", x), ("wt", wt), ("b", b)):
        kw = dict(b=b, y=y, x=x, mu=mu, P=P, alpha=alpha, wt=wt)
        kw[name] = np.ma.masked_array(value, np.zeros(np.shape(value), bool))
        with pytest.raises(TypeError, match=f"{name} is a masked array; its mask would be lost"):
            f2_f3("gaussian", "identity", **kw)
    with pytest.raises(TypeError, match=r"y is a dask array.*pass y.compute\(\)"):
        f2_f3("gaussian", "identity", b, da.from_array(y, chunks=2), x, mu, P, alpha, wt)
    with pytest.raises(ValueError, match="device=True gives device arrays"):
        f2_f3("gaussian", "identity", da.from_array(b, chunks=2), y, x, mu, P, alpha, wt,
              device=True)
    with pytest.raises(ValueError, match=r"factorial grid has 3 coefficients.*\(5, 2\)"):
        f2_f3("gaussian", "identity", FactorialGrid([[0.0], [1.0], [2.0]]), y, x, mu, P, alpha, wt)
    with pytest.raises(ValueError, match=r"values\[1\] must be a non-empty 1-D array"):
        FactorialGrid([[0.0], []])
    with pytest.raises(ValueError, match="do not fit a 64-bit index"):
        FactorialGrid([np.arange(100.0)] * 10)




class FakeDevice:
    local_mem_size = 49152
    max_work_group_size = 1024
    extensions = "cl_khr_fp64"


class FakeNvidia(FakeDevice):
    extensions = "cl_khr_fp64 cl_nv_device_attribute_query cl_nv_compiler_options"
    compute_capability_major_nv = 9


def test_l2_limit_is_stated():
    t = Tuning().resolve(4000, 8, FakeDevice(), gpu=True)
    assert t.path == "group"
    with pytest.raises(ValueError, match=r"l2 = 7000 coefficients exceed the largest this device "
                                         r"supports, 6016"):
        Tuning().resolve(7000, 8, FakeDevice(), gpu=True)


def test_tile_path_choice_and_limits():
    def shape(t):
        return (t.path, t.work_group, t.points_per_group, t.tile_rows, t.mma)

    # on GPUs the tile kernel from l2 = 8 on, on fp64 tensor cores where there are (pb = wg / 2)
    assert Tuning().resolve(4, 8, FakeNvidia(), gpu=True).path == "item"
    t = Tuning().resolve(16, 8, FakeNvidia(), gpu=True)
    assert shape(t) == ("tile", 128, 64, 16, 1)
    t = Tuning().resolve(32, 8, FakeNvidia(), gpu=True)      # tiles of 16 do not fit: 8
    assert shape(t) == ("tile", 256, 128, 8, 1)
    assert t.l2q(32) == 32 and t.l2q(33) == 40
    assert "-DF2F3_MMA=1" in t.options(32, 8, False)
    assert t.local_bytes(32, 8) == 8 * (128 * 36 + 8 * 36 + 8 * 132 + 8 * 8) <= 49152
    assert replace(t, tile_rows=16).local_bytes(32, 8) > 49152
    t = Tuning().resolve(32, 8, FakeDevice(), gpu=True)
    assert (t.path, t.points_per_group, t.mma) == ("tile", 64, 0)
    assert t.l2q(32) == 32 and t.l2q(17) == 32          # multiples of 2 wg / (pb / 4) = 16
    # on CPUs the item kernel; the tile kernel on request
    assert Tuning().resolve(32, 8, FakeDevice(), gpu=False).path == "item"
    # local memory: the tile shrinks, then the kernel is refused with the sizes stated
    t = Tuning(path="tile", mma=0).resolve(40, 8, FakeDevice(), gpu=True)
    assert t.tile_rows == 16
    assert t.local_bytes(40, 8) == 8 * (64 * 50 + 16 * 50 + 16 * 66 + 8 * 16)
    with pytest.raises(ValueError, match=r"l2 = 300 is too large for the tile kernel.*bytes of "
                                         r"local memory are needed, it has 49152"):
        Tuning(path="tile").resolve(300, 8, FakeDevice(), gpu=True)
    t = Tuning().resolve(60, 8, FakeNvidia(), gpu=True)      # 128 points do not fit: 64
    assert shape(t) == ("tile", 128, 64, 8, 1)
    assert Tuning().resolve(300, 8, FakeNvidia(), gpu=True).path == "group"
    with pytest.raises(ValueError, match="4 <= points_per_group <= work_group"):
        Tuning(path="tile", work_group=32, points_per_group=64, mma=0).resolve(
            10, 8, FakeDevice(), gpu=True)
    with pytest.raises(ValueError, match="no fp64 tensor cores"):
        Tuning(path="tile", mma=1).resolve(10, 8, FakeDevice(), gpu=True)


def test_empty_grid_and_empty_data():
    b, y, x, mu, P, alpha, wt = args_ok()
    qf, grad = f2_f3("gaussian", "identity", b[:0], y, x, mu, P, alpha, wt)
    assert qf.shape == (0,) and grad.shape == (0, 2)
    # no observations: the prior alone
    qf, grad = f2_f3("gaussian", "identity", b, y[:0], x[:0], mu, P, alpha[:0], wt[:0])
    d = b - mu
    np.testing.assert_allclose(qf, 0.5 * np.einsum("jk,kl,jl->j", d, P, d), rtol=1e-14)
    np.testing.assert_allclose(grad, d @ P, rtol=1e-14)


@pytest.mark.slow
def test_distributed_cluster_factorial_grid():
    """Posterior and FactorialGrid travel to worker processes, which upload and decode there."""
    import dask
    from distributed import Client, LocalCluster

    _, y, x, mu, P, alpha, wt = problem("poisson", 20, 3, 1, seed=43)
    grid = FactorialGrid([np.linspace(-1, 1, 5)] * 3)
    want = f2_f3("poisson", "log", np.asarray(grid), y, x, mu, P, alpha, wt)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        qf, grad = f2_f3("poisson", "log", grid, y, x, mu, P, alpha, wt, chunks=40)
        qf_c, grad_c = dask.compute(qf, grad)
    np.testing.assert_array_equal(qf_c, want[0])
    np.testing.assert_array_equal(grad_c, want[1])


def test_first_call_waits_for_the_data_on_the_devices_queue(monkeypatch):
    """A posterior's per-observation data are prepared by a kernel on the device's queue at its
    first call; the grid's pieces then launch on the slots' queues, which that queue does not
    order: they must not read the data before the kernel has written them.  Here the device's
    queue is busy with a long kernel when the first call comes (the pieces streamed through
    the slots, as on a GPU)."""
    from daskcl.glm import posterior
    from daskcl.kernels import _transfer
    from daskcl.runtime import device

    args = problem("binomial", 30, 3, 64, seed=5)
    want = reference("binomial", "logit", *args)
    monkeypatch.setattr(_transfer, "mode", lambda bound: "pinned")
    monkeypatch.setattr(posterior, "SMALL_DOUBLES", 0)       # streamed, not one launch
    bound = device.current()
    post = Posterior("binomial", "logit", *args[1:])
    queues.hold(bound.queue)
    try:
        got = post.f2_f3(args[0])
    finally:
        bound.queue.finish()
    assert_matches(got, want)


def test_a_grid_streamed_in_many_pieces_gives_the_bits_of_one_launch(monkeypatch):
    """A grid streamed through the slots in many pieces of uneven sizes (as on a GPU, the grid
    by pageable copies) gives the bits of one launch over the whole grid (the device-array
    path)."""
    import pyopencl.array as cla

    from daskcl.glm import posterior
    from daskcl.kernels import _transfer
    from daskcl.runtime import device

    args = problem("binomial", 40, 4, 5000, seed=11)
    post = Posterior("binomial", "logit", *args[1:])
    bound = device.current()
    qd, gd = post.f2_f3(cla.to_device(bound.queue, np.ascontiguousarray(args[0])))
    whole = (qd.get(), gd.get())
    assert_matches(whole, reference("binomial", "logit", *args))
    monkeypatch.setattr(_transfer, "mode", lambda bound: "pinned")
    monkeypatch.setattr(posterior, "MIN_ROWS", 256)
    monkeypatch.setattr(posterior, "PIECES", 7)          # more pieces than slots, sizes uneven
    got = post.f2_f3(args[0])
    np.testing.assert_array_equal(got[0].view(np.int64), whole[0].view(np.int64))
    np.testing.assert_array_equal(got[1].view(np.int64), whole[1].view(np.int64))


@pytest.mark.parametrize("family, link", [("binomial", "logit"), ("Gamma", "log")])
def test_a_small_call_is_one_prepared_launch_with_the_bits_of_a_streamed_one(
        family, link, monkeypatch):
    """A small grid from NumPy (an optimiser's step) is one write, one launch and one read, in
    at most 80 Python calls, with the bits of the streamed path, from any thread; its
    preparation is made again after a configuration change."""
    import sys
    import threading

    import daskcl
    from daskcl.glm import posterior

    args = problem(family, 50, 3, 16, seed=3)
    post = Posterior(family, link, *args[1:])
    small = post.f2_f3(args[0])
    assert_matches(small, reference(family, link, *args))
    (prep,) = post._prepared.values()
    count = [0]

    def seen(frame, event, arg):
        count[0] += event in ("call", "c_call")

    sys.setprofile(seen)
    try:
        post.f2_f3(args[0])
    finally:
        sys.setprofile(None)
    assert count[0] <= 80
    other: list = []
    t = threading.Thread(target=lambda: other.append(post.f2_f3(args[0])))
    t.start()
    t.join()
    with daskcl.config.set(transfer={"threads": 1}):
        post.f2_f3(args[0])
        assert next(iter(post._prepared.values())) is not prep
    monkeypatch.setattr(posterior, "SMALL_DOUBLES", 0)
    streamed = post.f2_f3(args[0])
    for got in (other[0], streamed):
        for a, b in zip(got, small):
            np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))


def test_posterior_mode_finds_a_zero_of_the_gradient_and_checks_its_arguments():
    """posterior_mode's result is where f2_f3's gradient vanishes (to the iteration's
    tolerance), and its Hessian is the gradient's derivative there; its arguments are checked
    against the data set's l2 (a start of the wrong length was reported as f2_f3's b of an
    internal shape, and tol=-1 ran to 'did not converge')."""
    x = np.column_stack([np.ones(6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]])
    post = Posterior("binomial", "logit", np.array([0.0, 0.2, 0.4, 0.5, 0.8, 0.9]), x,
                     np.zeros(2), 0.1 * np.eye(2), 0.0, 10.0)
    mode, hess = glm.posterior_mode(post)
    _, grad = post.f2_f3(mode[None, :])
    assert np.abs(grad[0]).max() < 1e-8 * np.abs(hess).max()
    h = 1e-5
    e0 = np.array([h, 0.0])
    _, g2 = post.f2_f3(np.vstack([mode + e0, mode - e0]))
    np.testing.assert_allclose(hess[0], (g2[0] - g2[1]) / (2 * h), rtol=1e-6)
    assert mode[1] > 0.5                                   # the proportions rise with x
    for kw, err, match in [
            (dict(start=np.zeros(3)), ValueError, r"start has shape \(3,\).*\(l2,\) = \(2,\)"),
            (dict(start=[0.0, np.nan]), ValueError, "start must be finite"),
            (dict(start="ab"), TypeError, "start must be 2 real numbers"),
            (dict(tol=-1.0), ValueError, "tol must be a positive number"),
            (dict(max_iter=0), ValueError, "max_iter must be a positive int")]:
        with pytest.raises(err, match=match):
            glm.posterior_mode(post, **kw)
    with pytest.raises(TypeError, match=r"post must be a daskcl\.glm\.Posterior"):
        glm.posterior_mode(x)
