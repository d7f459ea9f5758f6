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
