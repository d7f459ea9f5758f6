# SPDX-License-Identifier: GPL-2.0-or-later
"""Goodness of fit of every r-function, with fixed seeds (so deterministic).

Continuous distributions: the Kolmogorov-Smirnov test against the distribution function;
discrete ones: the chi-squared test over bins of the support, each expecting at least 20
variates.  The reference is daskcl's own p- or d-function where daskcl has it (itself checked
against R), SciPy's where daskcl does not have it yet, and R's libRmath (the oracle of the
R-agreement tests) where SciPy has none (noncentral beta, Wilcoxon statistics).  Every case
also compares the sample mean and variance with their formulas, within five standard errors
(the variance's estimated from the sample's fourth moment).  Several parameter sets per
distribution include extreme ones: tiny and huge shapes, both branches of each method (Cheng's
BB and BC with the shapes either way round; PTRS and inversion; BTRS, inversion and the
reflection p > 1/2; n beyond 2^31), and point masses.
"""

from __future__ import annotations

import ctypes
import math
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import special, stats
from support.rmath_oracle import library

from daskcl import nmath

N = 20000
ALPHA = 1e-3           # a correct generator fails a case with this probability (seeds are fixed)


def daskcl_or(name: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
    """daskcl.nmath.<name> if it exists (positional Rmath.h arguments), else ``fallback``."""
    f = nmath.FUNCTIONS.get(name)
    return (lambda *a: np.asarray(f(*a), dtype=float)) if f is not None else fallback


def rmath(sym: str, nflags: int) -> Callable[..., np.ndarray]:
    """libRmath's ``sym`` over arrays (a Python loop; fine at these sizes), looked up when
    called, so that the module imports where libRmath is missing (``pytest -m "not r"``)."""

    def call(x: Any, *params: float) -> np.ndarray:
        f = getattr(library(), sym)
        f.restype = ctypes.c_double
        f.argtypes = [ctypes.c_double] * (1 + len(params)) + [ctypes.c_int] * nflags
        flags = (1, 0) if nflags == 2 else (0,)
        return np.array([f(float(v), *params, *flags) for v in np.ravel(x)])

    return call


# distribution functions F(x, *params), Rmath.h parametrisation
CDF: dict[str, Callable[..., Any]] = {
    "runif": daskcl_or("punif", lambda x, a, b: stats.uniform.cdf(x, a, b - a)),
    "rnorm": daskcl_or("pnorm", lambda x, m, s: stats.norm.cdf(x, m, s)),
    "rexp": daskcl_or("pexp", lambda x, s: stats.expon.cdf(x, scale=s)),
    "rlnorm": daskcl_or("plnorm", lambda x, m, s: stats.lognorm.cdf(x, s, scale=np.exp(m))),
    "rcauchy": daskcl_or("pcauchy", lambda x, m, s: stats.cauchy.cdf(x, m, s)),
    "rlogis": daskcl_or("plogis", lambda x, m, s: stats.logistic.cdf(x, m, s)),
    "rweibull": daskcl_or("pweibull", lambda x, k, s: stats.weibull_min.cdf(x, k, scale=s)),
    "rgamma": daskcl_or("pgamma", lambda x, a, s: stats.gamma.cdf(x, a, scale=s)),
    "rbeta": daskcl_or("pbeta", lambda x, a, b: stats.beta.cdf(x, a, b)),
    "rchisq": daskcl_or("pchisq", lambda x, df: stats.chi2.cdf(x, df)),
    "rt": daskcl_or("pt", lambda x, df: stats.t.cdf(x, df)),
    "rf": daskcl_or("pf", lambda x, a, b: stats.f.cdf(x, a, b)),
    "rnchisq": daskcl_or("pnchisq", lambda x, df, ncp: stats.ncx2.cdf(x, df, ncp)),
    "rnbeta": daskcl_or("pnbeta", rmath("pnbeta", 2)),
}

# probability masses f(k, *params) over integer arrays k
PMF: dict[str, Callable[..., Any]] = {
    "rpois": daskcl_or("dpois", lambda k, lam: stats.poisson.pmf(k, lam)),
    "rbinom": daskcl_or("dbinom", lambda k, n, p: stats.binom.pmf(k, n, p)),
    "rgeom": daskcl_or("dgeom", lambda k, p: stats.nbinom.pmf(k, 1, p)),
    "rnbinom": daskcl_or("dnbinom", lambda k, n, p: stats.nbinom.pmf(k, n, p)),
    "rnbinom_mu": daskcl_or("dnbinom_mu",
                            lambda k, n, mu: stats.nbinom.pmf(k, n, n / (n + mu))),
    "rhyper": daskcl_or("dhyper", lambda k, m, n, kk: stats.hypergeom.pmf(k, m + n, m, kk)),
    "rwilcox": daskcl_or("dwilcox", rmath("dwilcox", 1)),
    "rsignrank": daskcl_or("dsignrank", rmath("dsignrank", 1)),
}


def _beta_moments(a: float, b: float) -> tuple[float, float]:
    return a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))


def _wilcox_moments(m: float, n: float) -> tuple[float, float]:
    return m * n / 2, m * n * (m + n + 1) / 12


# (name, params, mean, variance); None where a moment does not exist (or is not tested)
CONTINUOUS = [
    ("runif", (0.0, 1.0), 0.5, 1 / 12),
    ("runif", (1e10, 1e10 + 1.0), 1e10 + 0.5, 1 / 12),
    ("runif", (-5.0, -4.999), -4.9995, 1e-6 / 12),
    ("rnorm", (0.0, 1.0), 0.0, 1.0),
    ("rnorm", (1e6, 1e-6), 1e6, 1e-12),
    ("rnorm", (-3.0, 100.0), -3.0, 1e4),
    ("rexp", (1.0,), 1.0, 1.0),
    ("rexp", (1e-300,), None, None),         # moments under- and overflow: KS only
    ("rexp", (1e300,), None, None),
    ("rlnorm", (0.0, 1.0), math.exp(0.5), (math.e - 1) * math.e),
    ("rlnorm", (2.0, 0.1), math.exp(2.005), (math.exp(0.01) - 1) * math.exp(4.01)),
    ("rlnorm", (0.0, 5.0), None, None),
    ("rcauchy", (0.0, 1.0), None, None),
    ("rcauchy", (-1e3, 1e-3), None, None),
    ("rlogis", (0.0, 1.0), 0.0, math.pi**2 / 3),
    ("rlogis", (5.0, 1e-4), 5.0, 1e-8 * math.pi**2 / 3),
    ("rlogis", (0.0, -2.0), 0.0, 4 * math.pi**2 / 3),        # R accepts a negative scale
    ("rweibull", (1.0, 1.0), 1.0, 1.0),
    ("rweibull", (0.1, 1.0), None, None),             # mean 3.6e6, sd 1.5e9: too heavy a tail
    ("rweibull", (50.0, 2.0), 2 * math.gamma(1.02), 4 * (math.gamma(1.04) - math.gamma(1.02) ** 2)),
    ("rweibull", (2.0, 1e-5), 1e-5 * math.gamma(1.5), 1e-10 * (1 - math.gamma(1.5) ** 2)),
    ("rgamma", (1.0, 1.0), 1.0, 1.0),
    ("rgamma", (0.01, 1.0), 0.01, 0.01),
    ("rgamma", (0.1, 3.0), 0.3, 0.9),
    ("rgamma", (0.999, 1.0), 0.999, 0.999),
    ("rgamma", (2.5, 2.0), 5.0, 10.0),
    ("rgamma", (1e4, 1e-3), 10.0, 1e-2),
    ("rgamma", (1e12, 1.0), 1e12, 1e12),
    ("rbeta", (1.0, 1.0), *_beta_moments(1, 1)),
    ("rbeta", (0.5, 0.5), *_beta_moments(0.5, 0.5)),
    ("rbeta", (0.01, 0.01), *_beta_moments(0.01, 0.01)),
    ("rbeta", (0.05, 5.0), *_beta_moments(0.05, 5)),           # BC
    ("rbeta", (5.0, 0.05), *_beta_moments(5, 0.05)),           # BC, shapes the other way
    ("rbeta", (0.7, 1.0), *_beta_moments(0.7, 1)),
    ("rbeta", (2.0, 3.0), *_beta_moments(2, 3)),               # BB
    ("rbeta", (3.0, 1.5), *_beta_moments(3, 1.5)),             # BB, shapes the other way
    ("rbeta", (50.0, 3000.0), *_beta_moments(50, 3000)),
    ("rbeta", (3e5, 8e5), *_beta_moments(3e5, 8e5)),           # a + b > 1e6: gamma ratio
    ("rbeta", (0.5, 1e7), *_beta_moments(0.5, 1e7)),
    ("rbeta", (1e300, 1e300), 0.5, None),                      # no overflow, no cancellation
    ("rchisq", (1.0,), 1.0, 2.0),
    ("rchisq", (0.1,), 0.1, 0.2),
    ("rchisq", (1e5,), 1e5, 2e5),
    ("rt", (1.0,), None, None),
    ("rt", (0.1,), None, None),
    ("rt", (30.0,), 0.0, 30 / 28),
    ("rt", (1e6,), 0.0, 1e6 / (1e6 - 2)),
    ("rf", (1.0, 1.0), None, None),
    ("rf", (0.5, 100.0), 100 / 98, 2 * 100**2 * 98.5 / (0.5 * 98**2 * 96)),
    ("rf", (1e4, 1e4), 1e4 / 9998, 2 * 1e8 * (2e4 - 2) / (1e4 * 9998**2 * 9996)),
    ("rnchisq", (3.0, 2.0), 5.0, 2 * (3 + 4)),
    ("rnchisq", (0.5, 50.0), 50.5, 2 * (0.5 + 100)),
    ("rnchisq", (100.0, 0.01), 100.01, 2 * (100 + 0.02)),
    ("rnbeta", (2.0, 3.0, 1.5), None, None),
    ("rnbeta", (0.5, 0.5, 10.0), None, None),
]

# (name, params, mean, variance)
DISCRETE = [
    ("rpois", (1e-4,), 1e-4, 1e-4),
    ("rpois", (3.7,), 3.7, 3.7),
    ("rpois", (9.99,), 9.99, 9.99),                  # inversion
    ("rpois", (10.0,), 10.0, 10.0),                  # PTRS
    ("rpois", (57.3,), 57.3, 57.3),
    ("rpois", (1e4,), 1e4, 1e4),
    ("rpois", (1e9,), 1e9, 1e9),
    ("rbinom", (10.0, 0.5), 5.0, 2.5),
    ("rbinom", (1000.0, 0.003), 3.0, 3 * 0.997),             # inversion
    ("rbinom", (20.0, 0.7), 14.0, 4.2),                      # reflected inversion
    ("rbinom", (100.0, 0.1), 10.0, 9.0),                     # BTRS at its threshold
    ("rbinom", (1e6, 0.4), 4e5, 2.4e5),
    ("rbinom", (3e9, 0.5), 1.5e9, 7.5e8),                    # n beyond 2^31
    ("rbinom", (50.0, 0.999), 49.95, 50 * 0.999 * 0.001),
    ("rbinom", (1e15, 1e-14), 10.0, 10.0 * (1 - 1e-14)),
    ("rgeom", (0.5,), 1.0, 2.0),
    ("rgeom", (1e-4,), (1 - 1e-4) / 1e-4, (1 - 1e-4) / 1e-8),
    ("rgeom", (0.999,), 0.001 / 0.999, 0.001 / 0.999**2),
    ("rnbinom", (0.5, 0.3), 0.5 * 0.7 / 0.3, 0.5 * 0.7 / 0.09),
    ("rnbinom", (0.01, 0.5), 0.01, 0.02),
    ("rnbinom", (100.0, 0.9), 100 * 0.1 / 0.9, 100 * 0.1 / 0.81),
    ("rnbinom", (3.0, 1e-3), 3 * 0.999 / 1e-3, 3 * 0.999 / 1e-6),
    ("rnbinom_mu", (2.0, 5.0), 5.0, 5 + 25 / 2),
    ("rnbinom_mu", (1e4, 10.0), 10.0, 10 + 100 / 1e4),
    ("rnbinom_mu", (0.1, 1000.0), 1000.0, 1000 + 1e6 / 0.1),
    ("rhyper", (30.0, 20.0, 10.0), 6.0, 10 * 0.6 * 0.4 * 40 / 49),
    ("rhyper", (5.0, 1000.0, 100.0), 100 * 5 / 1005, 100 * (5 / 1005) * (1000 / 1005) * 905 / 1004),
    ("rhyper", (1e6, 1e6, 5e5), 2.5e5, 5e5 * 0.25 * 1.5e6 / (2e6 - 1)),
    ("rhyper", (1000.0, 10.0, 1005.0), 1005 * 1000 / 1010, 1005 * (1000 / 1010) * (10 / 1010) * 5 / 1009),
    ("rhyper", (1.0, 1.0, 1.0), 0.5, 0.25),
    ("rwilcox", (4.0, 6.0), *_wilcox_moments(4, 6)),
    ("rwilcox", (1.0, 1.0), *_wilcox_moments(1, 1)),
    ("rwilcox", (20.0, 30.0), *_wilcox_moments(20, 30)),
    ("rwilcox", (50.0, 2.0), *_wilcox_moments(50, 2)),
    ("rsignrank", (1.0,), 0.5, 0.25),
    ("rsignrank", (10.0,), 27.5, 10 * 11 * 21 / 24),
    ("rsignrank", (40.0,), 410.0, 40 * 41 * 81 / 24),
]


def check_moments(x: np.ndarray, mean: float | None, var: float | None, what: str) -> None:
    n = x.size
    if mean is not None:
        sd = math.sqrt(var) if var is not None else x.std()
        assert abs(x.mean() - mean) <= 5 * sd / math.sqrt(n) + 1e-15 * abs(mean), (
            f"{what}: mean {x.mean()!r}, want {mean!r}")
    if var is not None:
        d = x - x.mean()
        s2 = float(np.mean(d * d))
        se = math.sqrt(max(float(np.mean(d**4)) - s2 * s2, 0.0) / n)
        assert abs(s2 - var) <= 5 * se + 1e-12 * var, f"{what}: variance {s2!r}, want {var!r}"


def ks_statistic(x: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """Kolmogorov-Smirnov distance between the sample and the distribution *rounded to double*.

    A variate is a double: the value v stands for the true values that round to it, between
    the midpoints to its neighbours.  So the ECDF just after v is compared with F at the upper
    midpoint and the ECDF just before v with F at the lower one.  For continuous stretches this
    is the usual statistic; where the distribution piles up below the resolution of doubles
    (Beta(5, 0.05) has 17% of its mass within 1e-16 of 1, which rounds to 1) it is what the
    sample can show.
    """
    xs = np.sort(x)
    n = xs.size
    nxt, prv = np.nextafter(xs, np.inf), np.nextafter(xs, -np.inf)
    up = xs + (nxt - xs) / 2
    down = xs - (xs - prv) / 2
    up = np.where(up == xs, nxt, up)          # a midpoint that doubles cannot hold (at a
    down = np.where(down == xs, prv, down)    # power of 2): the neighbour, a hair conservative
    i = np.arange(1, n + 1)
    return max(float(np.max(i / n - cdf(up))), float(np.max(cdf(down) - (i - 1) / n)))


def case_id(c: tuple[Any, ...]) -> str:
    return f"{c[0]}{c[1]}"


@pytest.mark.parametrize("case", CONTINUOUS, ids=case_id)
def test_continuous(case):
    name, params, mean, var = case
    x = getattr(nmath, name)(N, *params, seed=zlib.crc32(case_id(case).encode()))
    assert np.isfinite(x).all() or name in ("rcauchy", "rt", "rf", "rlnorm")
    cdf_params = params
    if name == "rlogis":
        cdf_params = (params[0], abs(params[1]))
    D = ks_statistic(x, lambda v: np.asarray(CDF[name](v, *cdf_params), dtype=float))
    p = float(stats.kstwo.sf(D, N))
    assert p > ALPHA, f"{name}{params}: KS D = {D:.5f}, p = {p:.2e}"
    check_moments(x, mean, var, f"{name}{params}")


def support_window(name: str, params: tuple[float, ...], mean: float, var: float) -> np.ndarray:
    if name == "rhyper":
        m, n, k = params
        lo, hi = max(0.0, k - n), min(k, m)
    elif name == "rwilcox":
        lo, hi = 0.0, params[0] * params[1]
    elif name == "rsignrank":
        lo, hi = 0.0, params[0] * (params[0] + 1) / 2
    elif name == "rbinom":
        lo, hi = 0.0, params[0]
    else:
        lo, hi = 0.0, math.inf
    sd = math.sqrt(var)
    lo = max(lo, math.floor(mean - 12 * sd - 10))
    hi = min(hi, math.ceil(mean + 12 * sd + 10 + (40 * sd if name in ("rgeom", "rnbinom", "rnbinom_mu") else 0)))
    return np.arange(lo, hi + 1)


@pytest.mark.parametrize("case", DISCRETE, ids=case_id)
def test_discrete(case):
    name, params, mean, var = case
    x = getattr(nmath, name)(N, *params, seed=zlib.crc32(case_id(case).encode()))
    assert np.isfinite(x).all() and np.all(x == np.round(x)) and x.min() >= 0
    ks = support_window(name, params, mean, var)
    if ks.size > 2_000_000:
        pytest.fail(f"support window too large for {name}{params}")
    f = np.asarray(PMF[name](ks.astype(float), *params), dtype=float)
    assert abs(f.sum() - 1) < 1e-6, f"{name}{params}: reference masses sum to {f.sum()}"
    # bins of consecutive support points, each expecting >= 20; tails into the end bins
    counts = np.bincount(np.clip(np.searchsorted(ks, x), 0, ks.size - 1), minlength=ks.size)
    exp_bins, obs_bins, acc_e, acc_o = [], [], 0.0, 0
    for e, o in zip(f * N, counts):
        acc_e += e
        acc_o += o
        if acc_e >= 20:
            exp_bins.append(acc_e)
            obs_bins.append(acc_o)
            acc_e, acc_o = 0.0, 0
    if exp_bins:
        exp_bins[-1] += acc_e
        obs_bins[-1] += acc_o
    exp_arr, obs_arr = np.array(exp_bins), np.array(obs_bins)
    if exp_arr.size >= 2:
        exp_arr *= N / exp_arr.sum()
        chi2 = float(np.sum((obs_arr - exp_arr) ** 2 / exp_arr))
        p = float(stats.chi2.sf(chi2, exp_arr.size - 1))
        assert p > ALPHA, f"{name}{params}: chi-squared {chi2:.1f} on {exp_arr.size - 1} df, p = {p:.2e}"
    check_moments(x, mean, var, f"{name}{params}")


def test_rnorm_tail_frequencies():
    """The tails that inversion with a 52-bit-resolution U must reach, over 2^22 variates."""
    n = 1 << 22
    x = nmath.rnorm(n, seed=2718)
    for z in (3.0, 4.0, 4.5):
        k = int(np.sum(np.abs(x) > z))
        want = n * 2 * special.ndtr(-z)
        assert abs(k - want) <= 5 * math.sqrt(want), (z, k, want)


def test_discrete_point_masses():
    """Degenerate and near-degenerate cases that the chi-squared bins cannot see."""
    x = nmath.rnchisq(N, 0.0, 5.0, seed=1)            # mass exp(-5/2) at 0, mean 5, var 20
    assert abs(np.mean(x == 0) - math.exp(-2.5)) < 5 * math.sqrt(math.exp(-2.5) / N)
    check_moments(x, 5.0, 20.0, "rnchisq(0, 5)")
    y = nmath.rpois(N, 1e-4, seed=2)
    assert set(np.unique(y)) <= {0.0, 1.0, 2.0} and np.sum(y) < 12
