# SPDX-License-Identifier: GPL-2.0-or-later
"""Edges of the daskcl.glm API found by review: posterior_mode on a posterior that is not
finite, Tuning's fields, chunks= with a dask grid."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest

import daskcl.glm as glm
from daskcl.errors import PosteriorModeError
from daskcl.glm import Posterior, Tuning


def _x(l1=10, seed=1):
    return np.random.default_rng(seed).normal(size=(l1, 2))


@pytest.mark.parametrize(
    ("family", "y", "wt", "P", "want"),
    [
        # y = 0 under Gamma with shape wt = 2 > 1: density 0, qf = +Inf whatever b; a strong
        # prior makes the Newton step small, and the line search, rejecting every +Inf
        # candidate, moved b by 7e-9 of it: that passed for convergence
        ("Gamma", np.r_[1.0, 2.0, 0.5, 0.0, 3.0, 1.0, 2.0, 0.7, 1.1, 4.0], 2.0, 1e6, "qf = inf"),
        # a negative count under poisson: +Inf, the same
        ("poisson", np.r_[-1.0, 2.0, 0.0, 3.0, 1.0, 2.0, 4.0, 1.0, 0.0, 2.0], 1.0, 1e4, "qf = inf"),
        # NaN in the data: 100 Newton steps, then "did not converge"
        ("poisson", np.r_[np.nan, 2.0, 0.0, 3.0, 1.0, 2.0, 4.0, 1.0, 0.0, 2.0], 1.0, 1.0, "qf = nan"),
    ],
)
def test_posterior_mode_refuses_a_posterior_that_is_not_finite(family, y, wt, P, want):
    post = Posterior(family, "log", y, _x(), np.zeros(2), P * np.eye(2), 0.0, wt)
    qf, _ = post.f2_f3(np.zeros((1, 2)))
    assert not np.isfinite(qf[0])
    with pytest.raises(PosteriorModeError, match=rf"{want} and gradient .* at b = \[0\. 0\.\]: "
                       "the posterior must be finite to have a mode"):
        glm.posterior_mode(post)


def test_posterior_mode_refuses_an_infinite_precision_at_the_prior_mean():
    # P[0, 0] = inf: inf * (b_0 - mu_0) = inf * 0 is NaN in qf and grad[:, 0] at b = mu
    y = np.r_[1.0, 2.0, 0.0, 3.0, 1.0, 2.0, 4.0, 1.0, 0.0, 2.0]
    post = Posterior("poisson", "log", y, _x(), np.zeros(2), np.diag([np.inf, 1.0]), 0.0, 1.0)
    with pytest.raises(PosteriorModeError, match="qf = nan"):
        glm.posterior_mode(post)


def test_posterior_mode_still_finds_a_finite_mode():
    y = np.r_[1.0, 2.0, 0.0, 3.0, 1.0, 2.0, 4.0, 1.0, 0.0, 2.0]
    x = _x()
    post = Posterior("gaussian", "identity", y, x, np.zeros(2), np.eye(2), 0.0, 1.0)
    mode, hess = glm.posterior_mode(post)
    np.testing.assert_allclose(mode, np.linalg.solve(x.T @ x + np.eye(2), x.T @ y), rtol=1e-10)
    np.testing.assert_allclose(hess, x.T @ x + np.eye(2), rtol=1e-6)


@pytest.mark.parametrize(
    ("kw", "err", "match"),
    [
        (dict(tile_rows=-4), ValueError, r"Tuning\.tile_rows must be >= 0 .* not -4"),
        (dict(points_per_item=-1), ValueError, r"Tuning\.points_per_item must be >= 0"),
        (dict(work_group="64"), TypeError, r"Tuning\.work_group must be an int, not '64'"),
        (dict(rows_unrolled=2.0), TypeError, r"Tuning\.rows_unrolled must be an int"),
        (dict(points_per_group=True), TypeError, r"Tuning\.points_per_group must be an int"),
        (dict(mma=2), ValueError, r"Tuning\.mma must be -1, 0 or 1, not 2"),
        (dict(path=None), TypeError, r"Tuning\.path must be a string"),
    ],
)
def test_tuning_checks_its_fields_when_made(kw, err, match):
    # before: tile_rows=-4 ran the item kernel with 2 rows per tile, work_group="64" failed in
    # resolve() with "'<' not supported between instances of 'int' and 'str'"
    with pytest.raises(err, match=match):
        Tuning(**kw)
    assert Tuning(work_group=np.int64(64), mma=0).work_group == 64


def test_chunks_rechunk_a_dask_grid():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(10, 2))
    post = Posterior("poisson", "log", rng.poisson(2, 10).astype(float), x, np.zeros(2),
                     np.eye(2), 0.0, 1.0)
    b = rng.normal(size=(50, 2))
    want = post.f2_f3(b)
    qf, grad = post.f2_f3(da.from_array(b, chunks=(7, 1)), chunks=5)
    # chunks= was ignored for a dask b: the results kept b's chunks of 7
    assert qf.chunks == ((5,) * 10,) and grad.chunks == ((5,) * 10, (2,))
    got = dask.compute(qf, grad)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize(
    ("family", "eta", "y", "wt"),
    [
        # poisson/log: e^(eta - log y) overflowed for y < 1 where wt e^eta is finite
        ("poisson", 709.5, 0.5, 1.0),
        ("poisson", 20.0, 1e-300, 1.0),
        ("poisson", 709.7, 0.25, 0.5),
        # Gamma/log: wt e^(log y - eta) overflowed for a tiny wt
        ("Gamma", -710.0, 2.0, 1e-300),
        ("Gamma", -1000.0, 3.0, 1e-150),
    ],
)
def test_log_link_terms_beyond_the_exponential_range_stay_finite(family, eta, y, wt):
    """qf and grad where e^t of the term's split overflows but the term does not: +Inf before,
    now within a few ulp of the formulas in 50-digit arithmetic."""
    import mpmath

    mpmath.mp.dps = 50
    e, Y, W = mpmath.mpf(eta), mpmath.mpf(y), mpmath.mpf(wt)
    m = mpmath.exp(e)
    if family == "poisson":       # wt (m - y eta + lgamma(y + 1)),  wt (m - y)
        qf, g = W * (m - Y * e + mpmath.loggamma(Y + 1)), W * (m - Y)
    else:                         # -log dgamma(y; wt, m / wt),  wt (1 - y / m)
        qf = -((W - 1) * mpmath.log(Y) - Y * W / m - W * mpmath.log(m / W) - mpmath.loggamma(W))
        g = W * (1 - Y / m)
    got_qf, got_g = glm.f2_f3(family, "log", [[eta]], [y], [[1.0]], [0.0], [[0.0]], 0.0, wt)
    assert np.isfinite(got_qf).all() and np.isfinite(got_g).all()
    # the split's t = eta - log y (Gamma: its negative) is rounded to half an ulp of |t|, and
    # e^t carries that as a relative error of |t| 2^-53 (1.1e-13 at |t| = 1001), as it does
    # within the range
    t = abs(eta - np.log(y))
    rtol = 2 * t * 2.0**-53 + 1e-15
    np.testing.assert_allclose(got_qf, [float(qf)], rtol=rtol)
    np.testing.assert_allclose(got_g, [[float(g)]], rtol=rtol)


@pytest.mark.parametrize("eta", [5.5, 9.0, 15.0, 38.0, 1e4, 1e5, 1e150, -7.0, -1e4, -1e100])
def test_probit_gradient_in_the_far_tails(eta):
    """-wt [y phi / Phi(eta) - (1 - y) phi / Phi(-eta)] where one tail is far: the Mills ratio
    taken as exp(log phi - log Phi) kept |eta|^2 / 2 ulps (1.3e-9 relative at eta = 1e4,
    3.2e-7 at 1e5); now to a few ulps of the 50-digit value."""
    import mpmath

    mpmath.mp.dps = 60
    y, wt = 0.25, 4.0
    e = mpmath.mpf(eta)
    if abs(eta) < 1e8:
        phi = mpmath.npdf(e)
        want = -wt * (y * phi / mpmath.ncdf(e) - (1 - y) * phi / mpmath.ncdf(-e))
    else:   # mpmath's ncdf underflows there; phi / Phi(-x) = x + 1/x - 2/x^3 + ..., x = |eta|
        x = abs(e)
        want = wt * (1 - y) * (x + 1 / x) if eta > 0 else -wt * y * (x + 1 / x)
    _, g = glm.f2_f3("binomial", "probit", [[eta]], [y], [[1.0]], [0.0], [[0.0]], 0.0, wt)
    np.testing.assert_allclose(g, [[float(want)]], rtol=4e-16)
