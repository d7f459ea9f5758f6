# SPDX-License-Identifier: GPL-2.0-or-later
"""Write ``best_references_central.csv``: high-precision values of the central continuous
and the discrete distributions' d/p/q functions and of the special functions, over grids that
reach their tails (probabilities to 1e-300, the log scale, parameter extremes), for
``accuracy = "best"`` (issue 44; the noncentral families are in ``best_references.csv``).

Run from the repository root (mpmath; libRmath through ``tests/rmath_oracle.py`` for the flag)::

    nice -n 10 python3 tests/data/make_best_references_central.py     # a few minutes

How the references are made (mpmath, independent of the kernels' algorithms and arithmetic):

- densities and probability functions from their closed forms, the regularised incomplete
  gamma and beta functions (``mpmath.gammainc``, ``mpmath.betainc``; each tail as its own
  integral, never one minus the other), the hypergeometric tails summed term by term from
  their end, the Wilcoxon and signed-rank counts exactly in integers;
- a continuous quantile's reference is the x at which the reference cdf equals the double p
  (or log p) of the row, by Newton's method on the log of the tail from the point the p was
  made at; a discrete quantile's p lies inside the step of its integer answer (at least 1e-9
  of the step from either edge, so that R's fuzz of a few ulp cannot move it);
- special functions by ``mpmath.gamma``, ``loggamma``, ``polygamma``, ``beta`` and the Bessel
  functions.

Every value is computed at 40 and again at 60 significant digits; a point where the two differ
beyond 1e-25 relative is dropped (there the mpmath function has not converged).  A tail near
one (above 1/2) is given on the log scale as log1p of minus the other tail.  Rows whose value
is not a normal double (beyond 1e-300 not on the log scale), and log-scale values within 0.01
of zero for lgammafn and lbeta (their tolerance is relative), are left out.

The CSV format is ``best_references.csv``'s: function, region, arguments, ``lower_tail`` and
``log_p`` (``log`` for a density; both empty for a special function), the reference rounded to
a double, and ``r_wrong``: 1 where R's libRmath is further from it than 1e-13 relative.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import mpmath as mp
import numpy as np
import scipy.stats as st

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import make_best_references as base  # noqa: E402
from support.rmath_oracle import r_eval  # noqa: E402

TOLERANCE = 1e-13
TINY = mp.mpf("1e-300")
LOG_TINY = mp.log(TINY)
R_NAME = {"dnorm": "dnorm4", "pnorm": "pnorm5", "qnorm": "qnorm5"}

Mpf = mp.mpf
mp.mp.dps = 40       # the working precision outside _stable's and _quantile's own


# --- continuous distributions: log density, log lower and log upper tail -------------------

def _ln_tail(lower: Mpf, upper: Mpf, want_lower: bool) -> Mpf:
    """log of one tail from both tails' values, the larger as log1p(-the smaller)."""
    a, b = (lower, upper) if want_lower else (upper, lower)
    if a > Mpf(1) / 2:
        return mp.log1p(-b)
    return mp.log(a)


def _betai_cf(a: Mpf, b: Mpf, x: Mpf, o_x: Mpf) -> Mpf:
    """I_x(a, b) by its continued fraction (DLMF 8.17.22, Lentz's method), for
    x < (a + 1) / (a + b + 2) where it converges fast (o_x = 1 - x)."""
    tiny = Mpf(10) ** (-mp.mp.dps * 3)
    f, c, d = Mpf(1), Mpf(1), Mpf(0)
    for i in range(200000):
        m = i // 2
        if i == 0:
            num = Mpf(1)
        elif i % 2:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1 + num * d
        d = 1 / (d if d != 0 else tiny)
        c = 1 + num / c if c != 0 else tiny
        f *= c * d
        if i > 2 and abs(c * d - 1) < Mpf(10) ** (-mp.mp.dps - 5):
            break
    else:
        raise ArithmeticError("the incomplete beta continued fraction did not converge")
    lpre = a * mp.log(x) + b * mp.log(o_x) - mp.log(a) - mp.log(mp.beta(a, b))
    return mp.exp(lpre) * (f - 1)


def _betai(a: Mpf, b: Mpf, x: Mpf, o_x: Mpf | None = None) -> Mpf:
    """I_x(a, b), regularised; o_x = 1 - x where it is known exactly."""
    if o_x is None:
        o_x = 1 - x
    if x <= 0:
        return Mpf(0)
    if o_x <= 0:
        return Mpf(1)
    if x < (a + 1) / (a + b + 2):
        return _betai_cf(a, b, x, o_x)
    return 1 - _betai_cf(b, a, o_x, x)


def _cont(name: str, x: Mpf, p: tuple[Mpf, ...]) -> tuple[Mpf, Mpf, Mpf]:
    """(log density, lower tail, upper tail) of a continuous distribution at x."""
    if name in ("norm", "lnorm"):
        m, s = p
        if name == "lnorm":
            lx = mp.log(x)
            z = (lx - m) / s
            ld = -z * z / 2 - lx - mp.log(s) - mp.log(2 * mp.pi) / 2
        else:
            z = (x - m) / s
            ld = -z * z / 2 - mp.log(s) - mp.log(2 * mp.pi) / 2
        return ld, mp.ncdf(z), mp.ncdf(-z)
    if name in ("gamma", "chisq", "exp"):
        if name == "gamma":
            a, s = p
        elif name == "chisq":
            a, s = p[0] / 2, Mpf(2)
        else:
            a, s = Mpf(1), p[0]
        y = x / s
        ld = (a - 1) * mp.log(y) - y - mp.loggamma(a) - mp.log(s)
        if name == "exp":
            return ld, -mp.expm1(-y), mp.exp(-y)
        return (ld, mp.gammainc(a, 0, y, regularized=True),
                mp.gammainc(a, y, mp.inf, regularized=True))
    if name == "beta":
        a, b = p
        ld = (a - 1) * mp.log(x) + (b - 1) * mp.log1p(-x) - mp.log(mp.beta(a, b))
        return ld, _betai(a, b, x), _betai(b, a, 1 - x, x)
    if name == "t":
        n = p[0]
        ld = (mp.loggamma((n + 1) / 2) - mp.loggamma(n / 2) - mp.log(n * mp.pi) / 2
              - (n + 1) / 2 * mp.log1p(x * x / n))
        # the tail beyond |x|
        small = _betai(n / 2, Mpf(1) / 2, n / (n + x * x), x * x / (n + x * x)) / 2
        return (ld, small, 1 - small) if x < 0 else (ld, 1 - small, small)
    if name == "f":
        d1, d2 = p
        r = d1 * x
        ld = (d1 / 2 * mp.log(d1 / d2) + (d1 / 2 - 1) * mp.log(x)
              - (d1 + d2) / 2 * mp.log1p(r / d2) - mp.log(mp.beta(d1 / 2, d2 / 2)))
        return (ld, _betai(d1 / 2, d2 / 2, r / (r + d2), d2 / (r + d2)),
                _betai(d2 / 2, d1 / 2, d2 / (r + d2), r / (r + d2)))
    if name == "cauchy":
        m, s = p
        z = (x - m) / s
        ld = -mp.log(mp.pi * s * (1 + z * z))
        small = mp.atan(1 / abs(z)) / mp.pi if z != 0 else Mpf(1) / 2
        return (ld, small, 1 - small) if z < 0 else (ld, 1 - small, small)
    if name == "logis":
        m, s = p
        z = (x - m) / s
        ld = -abs(z) - mp.log(s) - 2 * mp.log1p(mp.exp(-abs(z)))
        return ld, 1 / (1 + mp.exp(-z)), 1 / (1 + mp.exp(z))
    if name == "weibull":
        k, s = p
        y = (x / s) ** k
        ld = mp.log(k / s) + (k - 1) * mp.log(x / s) - y
        return ld, -mp.expm1(-y), mp.exp(-y)
    if name == "unif":
        a, b = p
        return -mp.log(b - a), (x - a) / (b - a), (b - x) / (b - a)
    raise KeyError(name)


#: continuous distribution -> (parameter sampler, scipy frozen distribution for choosing x)
def _cont_params(name: str, rng: np.random.Generator) -> tuple[tuple[float, ...], object]:
    def lu(a: float, b: float) -> float:
        return float(10 ** rng.uniform(math.log10(a), math.log10(b)))

    def u(a: float, b: float) -> float:
        return float(rng.uniform(a, b))

    std = rng.random() < 0.4
    if name == "norm":
        m, s = (0.0, 1.0) if std else (u(-100, 100), lu(1e-2, 1e2))
        return (m, s), st.norm(m, s)
    if name == "lnorm":
        m, s = (0.0, 1.0) if std else (u(-5, 5), lu(0.05, 5))
        return (m, s), st.lognorm(s, scale=math.exp(m))
    if name == "gamma":
        a, s = lu(1e-3, 1e5), lu(1e-3, 1e3)
        return (a, s), st.gamma(a, scale=s)
    if name == "chisq":
        n = lu(1e-2, 1e5)
        return (n,), st.chi2(n)
    if name == "exp":
        s = lu(1e-3, 1e3)
        return (s,), st.expon(scale=s)
    if name == "beta":
        a, b = lu(1e-2, 1e4), lu(1e-2, 1e4)
        return (a, b), st.beta(a, b)
    if name == "t":
        n = lu(0.1, 1e9)
        return (n,), st.t(n)
    if name == "f":
        a, b = lu(0.1, 1e6), lu(0.1, 1e6)
        return (a, b), st.f(a, b)
    if name in ("cauchy", "logis"):
        m, s = (0.0, 1.0) if std else (u(-10, 10), lu(1e-2, 1e2))
        return (m, s), (st.cauchy if name == "cauchy" else st.logistic)(m, s)
    if name == "weibull":
        k, s = lu(0.1, 50), lu(1e-2, 1e2)
        return (k, s), st.weibull_min(k, scale=s)
    if name == "unif":
        a, b = u(-10, 0), u(0.5, 10)
        return (a, b), st.uniform(a, b - a)
    raise KeyError(name)


CONTINUOUS = ("norm", "lnorm", "gamma", "chisq", "exp", "beta", "t", "f", "cauchy", "logis",
              "weibull", "unif")


def _stable(f: Callable[[], object]) -> object:
    """f() at 40 digits, or None where it moves beyond 1e-25 relative at 60."""
    with mp.workdps(40):
        a = f()
    with mp.workdps(60):
        b = f()
    flat_a = a if isinstance(a, tuple) else (a,)
    flat_b = b if isinstance(b, tuple) else (b,)
    for x, y in zip(flat_a, flat_b):
        if not (mp.isfinite(x) and mp.isfinite(y)):
            if x != y:
                return None
            continue
        if abs(x - y) > Mpf("1e-25") * abs(y):
            return None
    return a


def _logs(name: str, x: Mpf, p: tuple[Mpf, ...]) -> tuple[Mpf, Mpf, Mpf] | None:
    """(log density, log lower tail, log upper tail), or None where mpmath is unsure."""
    def f() -> tuple[Mpf, Mpf, Mpf]:
        xx, pp = Mpf(x), tuple(Mpf(v) for v in p)
        ld, lo, up = _cont(name, xx, pp)
        return ld, _ln_tail(lo, up, True), _ln_tail(lo, up, False)
    got = _stable(f)
    if got is None or any(not isinstance(v, mp.mpf) for v in got):   # type: ignore[union-attr]
        print(f"dropped {name}{(x, *p)}: {got}", file=sys.stderr)
        return None
    return got   # type: ignore[return-value]


def _quantile(name: str, x0: float, p: tuple[float, ...], lower: bool, target: Mpf) -> Mpf | None:
    """x with log tail(x) = target, by Newton's method from x0 (a few ulp away)."""
    with mp.workdps(50):
        x = Mpf(x0)
        pp = tuple(Mpf(v) for v in p)
        for _ in range(8):
            ld, lo, up = _cont(name, x, pp)
            lt = _ln_tail(lo, up, lower)
            step = (lt - target) / (mp.exp(ld - lt) * (1 if lower else -1))
            x -= step
            if abs(step) <= abs(x) * Mpf("1e-35"):
                return x
    return None


def _continuous_rows(name: str, rng: np.random.Generator, npar: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for _ in range(npar):
        params, dist = _cont_params(name, rng)
        for _ in range(2):
            lp = -float(10 ** rng.uniform(-1.5, math.log10(690)))    # log tail probability
            lower = bool(rng.random() < 0.5)
            with np.errstate(all="ignore"):
                x = float(dist.ppf(math.exp(lp)) if lower else dist.isf(math.exp(lp)))
            if name in ("t", "cauchy", "logis", "norm") and rng.random() < 0.1:
                x = float(dist.mean() if name != "cauchy" else params[0]) + 1e-3 * rng.normal()
            if not (math.isfinite(x) and x != 0) or (name not in ("norm", "t", "cauchy", "logis",
                                                               "unif") and x <= 0):
                continue
            if name == "beta" and x >= 1:
                continue
            region = ("lower tail" if lower else "upper tail") if lp < -2 else "bulk"
            got = _logs(name, x, params)
            if got is None:
                continue
            ld, llo, lup = got
            args = (x, *params)
            rows.append(_row("d" + name, region, args, "", 1, ld))
            if ld > LOG_TINY:
                rows.append(_row("d" + name, region, args, "", 0, mp.exp(ld)))
            for low, lt in ((1, llo), (0, lup)):
                rows.append(_row("p" + name, region, args, low, 1, lt))
                if lt > LOG_TINY:
                    rows.append(_row("p" + name, region, args, low, 0, mp.exp(lt)))
                # the quantile at the double p (and log p) of this tail
                for log in (1, 0):
                    if log:
                        pd = float(lt)
                        if pd == 0.0:
                            continue
                        target = Mpf(pd)
                    else:
                        pd = float(mp.exp(lt))
                        if not (1e-300 <= pd < 1.0):
                            continue
                        with mp.workdps(50):
                            target = mp.log(Mpf(pd))
                    q = _quantile(name, x, params, bool(low), target)
                    if q is None or not (Mpf("1e-300") <= abs(q) <= Mpf("1e300")):
                        continue
                    rows.append(_row("q" + name, region, (pd, *params), low, log, q))
    return rows


# --- discrete distributions ------------------------------------------------------------------

def _hyper_tail(k: int, m: int, n: int, kk: int, upper: bool) -> Mpf:
    """P(X <= k) (or P(X > k)) by summing the terms from the tail's end, each from the last."""
    lo, hi = max(0, kk - n), min(kk, m)

    def lpmf(x: int) -> Mpf:
        return (mp.log(mp.binomial(m, x)) + mp.log(mp.binomial(n, kk - x))
                - mp.log(mp.binomial(m + n, kk)))
    if not upper:
        if k < lo:
            return Mpf(0)
        xs = range(min(k, hi), lo - 1, -1)
    else:
        if k >= hi:
            return Mpf(0)
        xs = range(max(k + 1, lo), hi + 1)
    total, t = Mpf(0), None
    for x in xs:
        if t is None:
            t = mp.exp(lpmf(x))
        elif not upper:      # going down from x + 1 to x
            t = t * (x + 1) * (n - kk + x + 1) / ((m - x) * (kk - x))
        else:                # going up from x - 1 to x
            t = t * (m - x + 1) * (kk - x + 1) / (x * (n - kk + x))
        total += t
        if t < total * Mpf("1e-45"):
            break
    return total


def _counts_signrank(n: int) -> list[int]:
    c = [1] + [0] * (n * (n + 1) // 2)
    for i in range(1, n + 1):
        for s in range(len(c) - 1, i - 1, -1):
            c[s] += c[s - i]
    return c


def _counts_wilcox(m: int, n: int) -> list[int]:
    """Mann-Whitney counts: the coefficients of the Gaussian binomial [m + n, m]_q."""
    c = [1]
    for i in range(1, m + 1):          # times (1 - q^(n + i)) / (1 - q^i)
        c = c + [0] * (n + i)
        for s in range(len(c) - 1, n + i - 1, -1):
            c[s] -= c[s - n - i]
        for s in range(i, len(c)):
            c[s] += c[s - i]
        while len(c) > 1 and c[-1] == 0:
            c.pop()
    return c


def _disc(name: str, k: int, p: tuple[float, ...]) -> tuple[Mpf, Mpf, Mpf]:
    """(log mass, lower tail P(X <= k), upper tail P(X > k)) of a discrete distribution."""
    if name == "binom":
        n, pr = int(p[0]), Mpf(p[1])
        lm = (mp.log(mp.binomial(n, k)) + k * mp.log(pr) + (n - k) * mp.log1p(-pr)
              if 0 <= k <= n else mp.ninf)
        lo = Mpf(1) if k >= n else _betai(Mpf(n - k), Mpf(k + 1), 1 - pr, pr)
        up = Mpf(0) if k >= n else _betai(Mpf(k + 1), Mpf(n - k), pr, 1 - pr)
        return lm, lo, up
    if name == "pois":
        lam = Mpf(p[0])
        return (-lam + k * mp.log(lam) - mp.loggamma(k + 1),
                mp.gammainc(k + 1, lam, mp.inf, regularized=True),
                mp.gammainc(k + 1, 0, lam, regularized=True))
    if name in ("nbinom", "nbinom_mu", "geom"):
        if name == "nbinom":
            size, pr, qr = Mpf(p[0]), Mpf(p[1]), 1 - Mpf(p[1])
        elif name == "nbinom_mu":
            size, mu = Mpf(p[0]), Mpf(p[1])
            pr, qr = size / (size + mu), mu / (size + mu)
        else:
            size, pr, qr = Mpf(1), Mpf(p[0]), 1 - Mpf(p[0])
        lm = (mp.loggamma(k + size) - mp.loggamma(size) - mp.loggamma(k + 1)
              + size * mp.log(pr) + k * mp.log(qr))
        if name == "geom":
            up = qr ** (k + 1)
            return lm, -mp.expm1((k + 1) * mp.log(qr)), up
        return lm, _betai(size, Mpf(k + 1), pr, qr), _betai(Mpf(k + 1), size, qr, pr)
    if name == "hyper":
        m, n, kk = (int(v) for v in p)
        lm = (mp.log(mp.binomial(m, k)) + mp.log(mp.binomial(n, kk - k))
              - mp.log(mp.binomial(m + n, kk))) if max(0, kk - n) <= k <= min(kk, m) else mp.ninf
        return lm, _hyper_tail(k, m, n, kk, False), _hyper_tail(k, m, n, kk, True)
    if name in ("signrank", "wilcox"):
        c = _counts_signrank(int(p[0])) if name == "signrank" else _counts_wilcox(
            int(p[0]), int(p[1]))
        tot = sum(c)
        lo, up = sum(c[:k + 1]), sum(c[k + 1:])
        return (mp.log(Mpf(c[k]) / tot) if 0 <= k < len(c) and c[k] else mp.ninf,
                Mpf(lo) / tot, Mpf(up) / tot)
    raise KeyError(name)


def _disc_params(name: str, rng: np.random.Generator) -> tuple[tuple[float, ...], object]:
    def lu(a: float, b: float) -> float:
        return float(10 ** rng.uniform(math.log10(a), math.log10(b)))

    if name == "binom":
        n = float(round(lu(1, 1e6)))
        pr = lu(1e-4, 0.5) if rng.random() < 0.6 else 1 - lu(1e-4, 0.5)
        return (n, pr), st.binom(n, pr)
    if name == "pois":
        lam = lu(1e-3, 1e6)
        return (lam,), st.poisson(lam)
    if name == "nbinom":
        size, pr = lu(1e-2, 1e4), lu(1e-3, 0.999)
        return (size, pr), st.nbinom(size, pr)
    if name == "nbinom_mu":
        size, mu = lu(1e-2, 1e4), lu(1e-2, 1e5)
        return (size, mu), st.nbinom(size, size / (size + mu))
    if name == "geom":
        pr = lu(1e-4, 0.99)
        return (pr,), st.geom(pr, loc=-1)
    if name == "hyper":
        m, n = float(round(lu(1, 1e4))), float(round(lu(1, 1e4)))
        k = float(rng.integers(1, m + n + 1))
        return (m, n, k), st.hypergeom(m + n, m, k)
    if name == "signrank":
        n = float(rng.integers(1, 60))
        return (n,), None
    if name == "wilcox":
        m, n = float(rng.integers(1, 40)), float(rng.integers(1, 40))
        return (m, n), None
    raise KeyError(name)


DISCRETE = ("binom", "pois", "nbinom", "nbinom_mu", "geom", "hyper", "signrank", "wilcox")


def _discrete_rows(name: str, rng: np.random.Generator, npar: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for _ in range(npar):
        params, dist = _disc_params(name, rng)
        for _ in range(2):
            lp = -float(10 ** rng.uniform(-1.5, math.log10(690)))
            lower = bool(rng.random() < 0.5)
            if dist is None:        # signrank, wilcox: anywhere on the support
                top = (params[0] * (params[0] + 1) / 2 if name == "signrank"
                       else params[0] * params[1])
                k = int(rng.integers(0, int(top) + 1))
            else:
                with np.errstate(all="ignore"):
                    kf = float(dist.ppf(math.exp(lp)) if lower else dist.isf(math.exp(lp)))
                if not math.isfinite(kf):
                    continue
                k = int(kf)
            region = ("lower tail" if lower else "upper tail") if lp < -2 else "bulk"
            if dist is None:
                region = "support"
            got = _stable(partial(_disc, name, k, params))
            if got is None:
                continue
            lm, lo, up = got      # type: ignore[misc]
            if not mp.isfinite(lm):
                continue
            args = (float(k), *params)
            rows.append(_row("d" + name, region, args, "", 1, lm))
            if lm > LOG_TINY:
                rows.append(_row("d" + name, region, args, "", 0, mp.exp(lm)))
            for low in (1, 0):
                lt = _ln_tail(lo, up, bool(low))
                if not mp.isfinite(lt):
                    continue
                rows.append(_row("p" + name, region, args, low, 1, lt))
                if lt > LOG_TINY:
                    rows.append(_row("p" + name, region, args, low, 0, mp.exp(lt)))
            # a quantile inside the step of k: lower tail F(k-1) < p <= F(k), upper tail
            # S(k) <= p < S(k-1)
            prev = _stable(partial(_disc, name, k - 1, params)) if k > 0 else None
            for low in (1, 0):
                a_ = _ln_tail(lo, up, bool(low))
                b_ = (mp.ninf if low else Mpf(0)) if prev is None else _ln_tail(
                    prev[1], prev[2], bool(low))            # type: ignore[index]
                edge_lo, edge_hi = (b_, a_) if low else (a_, b_)
                if not (mp.isfinite(edge_hi) and edge_hi > edge_lo):
                    continue
                for log in (1, 0):
                    if log:
                        if not mp.isfinite(edge_lo):
                            target = edge_hi - 1
                        else:
                            target = edge_lo + (edge_hi - edge_lo) * Mpf(float(rng.uniform(0.2, 0.8)))
                        pd = float(target)
                        lp_d = Mpf(pd)
                    else:
                        e_lo = mp.exp(edge_lo) if mp.isfinite(edge_lo) else Mpf(0)
                        e_hi = mp.exp(edge_hi)
                        pd = float(e_lo + (e_hi - e_lo) * Mpf(float(rng.uniform(0.2, 0.8))))
                        if not (1e-300 <= pd < 1.0):
                            continue
                        lp_d = mp.log(Mpf(pd))
                    if pd == 0.0:
                        continue
                    margin = Mpf("1e-9") * abs(edge_hi - edge_lo) if mp.isfinite(edge_lo) else 0
                    if not (edge_lo + margin < lp_d < edge_hi - margin):
                        continue
                    rows.append(_row("q" + name, region, (pd, *params), low, log, Mpf(k)))
    return rows


# --- special functions -----------------------------------------------------------------------

def _special_points(rng: np.random.Generator, n: int) -> list[tuple[str, str, tuple[float, ...]]]:
    def lu(a: float, b: float) -> float:
        return float(10 ** rng.uniform(math.log10(a), math.log10(b)))

    def u(a: float, b: float) -> float:
        return float(rng.uniform(a, b))

    def nonint_neg(top: float) -> float:
        return -float(rng.integers(0, int(top))) - u(0.02, 0.98)

    pts: list[tuple[str, str, tuple[float, ...]]] = []
    for _ in range(n):
        pts.append(("gammafn", "x 1e-300..171", (lu(1e-300, 171.6),)))
        pts.append(("gammafn", "negative x", (nonint_neg(170),)))
        pts.append(("lgammafn", "x 1e-300..1e300", (lu(1e-300, 1e300),)))
        pts.append(("lgammafn", "near 1 and 2", (float(rng.choice([1.0, 2.0]))
                                                 + float(rng.choice([-1, 1])) * lu(1e-12, 0.3),)))
        pts.append(("lgammafn", "negative x", (nonint_neg(1e6) if rng.random() < 0.5
                                               else -lu(1e6, 1e15) - 0.5,)))
        for fn in ("digamma", "trigamma", "tetragamma", "pentagamma"):
            pts.append((fn, "x 1e-10..1e10", (lu(1e-10, 1e10),)))
            pts.append((fn, "negative x", (nonint_neg(1e3),)))
        pts.append(("digamma", "near its root", (1.4616321449683622 + float(
            rng.choice([-1, 1])) * lu(1e-12, 0.1),)))
        pts.append(("psigamma", "x 1e-5..1e5, deriv 0-6", (lu(1e-5, 1e5), float(
            rng.integers(0, 7)))))
        pts.append(("beta", "a, b 1e-5..1e5", (lu(1e-5, 1e5), lu(1e-5, 1e5))))
        pts.append(("lbeta", "a, b 1e-5..1e10", (lu(1e-5, 1e10), lu(1e-5, 1e10))))
        for fn in ("bessel_i", "bessel_k"):
            pts.append((fn, "x 1e-3..1e3, nu 0-100", (lu(1e-3, 1e3), u(0, 100), 1.0)))
            pts.append((fn, "scaled, x 1e-3..1e5", (lu(1e-3, 1e5), u(0, 100), 2.0)))
        for fn in ("bessel_j", "bessel_y"):
            pts.append((fn, "x 1e-3..1e3, nu 0-100", (lu(1e-3, 1e3), u(0, 100))))
            pts.append((fn, "negative nu", (lu(1e-2, 1e2), -u(0.01, 30))))
        pts.append(("lgamma1p", "x -0.5..2", (float(rng.choice([-1, 1])) * lu(1e-12, 0.5)
                                            if rng.random() < 0.7 else u(0.5, 2),)))
        pts.append(("log1pmx", "x -0.9..10", (float(rng.choice([-1, 1])) * lu(1e-10, 0.9)
                                            if rng.random() < 0.7 else lu(0.9, 10),)))
    return pts


def _special(fn: str, a: tuple[float, ...]) -> Mpf:
    x = Mpf(a[0])
    if fn == "gammafn":
        return mp.gamma(x)
    if fn == "lgammafn":
        return mp.log(abs(mp.gamma(x))) if abs(x) < 1e5 else mp.re(mp.loggamma(x)) if x > 0 \
            else mp.log(mp.pi) - mp.log(abs(mp.sinpi(x))) - mp.re(mp.loggamma(1 - x))
    if fn in ("digamma", "trigamma", "tetragamma", "pentagamma", "psigamma"):
        d = {"digamma": 0, "trigamma": 1, "tetragamma": 2, "pentagamma": 3}.get(fn)
        return mp.polygamma(int(a[1]) if d is None else d, x)
    if fn == "beta":
        return mp.beta(x, Mpf(a[1]))
    if fn == "lbeta":
        y = Mpf(a[1])
        return mp.loggamma(x) + mp.loggamma(y) - mp.loggamma(x + y)
    if fn == "lgamma1p":
        return mp.loggamma(1 + x)
    if fn == "log1pmx":
        return mp.log1p(x) - x
    nu = Mpf(a[1])
    if fn == "bessel_i":
        v = mp.besseli(nu, x)
        return v * mp.exp(-x) if a[2] == 2 else v
    if fn == "bessel_k":
        v = mp.besselk(nu, x)
        return v * mp.exp(x) if a[2] == 2 else v
    if fn == "bessel_j":
        return mp.besselj(nu, x)
    if fn == "bessel_y":
        return mp.bessely(nu, x)
    raise KeyError(fn)


def _special_rows(rng: np.random.Generator, n: int) -> list[dict[str, object]]:
    rows = []
    for fn, region, args in _special_points(rng, n):
        v = _stable(partial(_special, fn, args))
        if v is None or not mp.isfinite(v) or v == 0:           # type: ignore[arg-type]
            continue
        if not (TINY <= abs(v) <= Mpf("1e300")):                 # type: ignore[arg-type, operator]
            continue
        if fn in ("lgammafn", "lbeta", "lgamma1p") and abs(v) < 0.01:   # type: ignore[arg-type]
            if not (fn == "lgammafn" and region == "near 1 and 2") and fn != "lgamma1p":
                continue
        rows.append(_row(fn, region, args, "", "", v))
    return rows


# --- rows ------------------------------------------------------------------------------------

def _row(fn: str, region: str, args: tuple[float, ...], lower: object, log: object,
         ref: Mpf) -> dict[str, object]:
    return {"fn": fn, "region": region, "args": args, "lower": lower, "log": log,
            "ref": float(ref)}


def _r_value(fn: str, args: tuple[float, ...], lower: object, log: object) -> float:
    flags = ([] if log == "" else [int(log)] if fn[0] == "d" else
             [int(lower), int(log)])   # type: ignore[call-overload]
    return float(r_eval(R_NAME.get(fn, fn), [np.float64(a) for a in args], flags))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "best_references_central.csv"))
    ap.add_argument("--seed", type=int, default=4401)
    ap.add_argument("--per", type=int, default=24, help="parameter draws per distribution")
    ap.add_argument("--only", default="", help="comma-separated families (for trying)")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    only = set(filter(None, a.only.split(",")))
    t0 = time.time()
    rows: list[dict[str, object]] = []
    for name in CONTINUOUS:
        if not only or name in only:
            rows += _continuous_rows(name, rng, a.per)
    for name in DISCRETE:
        if not only or name in only:
            rows += _discrete_rows(name, rng, a.per)
    if not only or "special" in only:
        rows += _special_rows(rng, a.per)
    out = []
    for r in rows:
        args = r.pop("args")
        if math.isfinite(float(r["ref"])):      # type: ignore[arg-type]
            got = _r_value(str(r["fn"]), args, r["lower"], r["log"])  # type: ignore[arg-type]
            out.append(base.record(str(r["fn"]), str(r["region"]), args, r, got, TOLERANCE))
    base.write(a.out, out, f"tests/data/make_best_references_central.py --seed {a.seed} "
               f"--per {a.per} (mpmath {mp.__version__}) in {time.time() - t0:.0f} s")

if __name__ == "__main__":
    main()
