# SPDX-License-Identifier: GPL-2.0-or-later
"""Write ``best_references_nc.csv``: high-precision values of the noncentral densities and of the
quantiles that ``accuracy = "best"`` computes by inverting its distribution functions, over grids
that reach their tails.

Run from the repository root (mpmath; libRmath through ``tests/rmath_oracle.py`` for the flag)::

    nice -n 10 python3 tests/data/make_best_references_nc.py     # 2 to 4 minutes on one core

How the references are made (mpmath, 30 significant digits; the tails and densities of the
noncentral families as in ``make_best_references.py``, whose functions this script uses):

- ``dnchisq``: the Poisson mixture of central chi-squared densities summed directly.
- ``dnbeta``: the Poisson mixture of beta densities summed directly.
- quantiles (``qnchisq``, ``qnbeta``, ``qnf``, ``qnt``, ``qbeta``): a point x is drawn, the
  log of each tail there computed (``pbeta`` by ``mpmath.betainc``, the upper tail as
  I_(1-x)(b, a)), and each call's probability is that value rounded to a double (on the log
  scale, or not); the reference is the exact quantile of that double: Newton's method on the
  log of the smaller tail from x, with the density, until its step is below 1e-25 of x.

Each row is one call: function, region, arguments (the probability first), ``lower_tail`` and
``log_p`` (``log`` for a density), the reference rounded to a double, and ``r_wrong``: 1 where
R's libRmath is further from it than the test's tolerance.  A probability of 1 (a tail below
1e-16 given not on the log scale) and results that are not normal doubles are left out.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import mpmath as mp
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import make_best_references as base  # noqa: E402
from support.rmath_oracle import r_eval  # noqa: E402

#: relative tolerance by function (the test's)
TOLERANCE = {"dnchisq": 1e-12, "dnbeta": 1e-12, "qnchisq": 1e-12, "qnbeta": 1e-12,
             "qnf": 1e-12, "qnt": 1e-12, "qbeta": 1e-13}

mp.mp.dps = 30


def _log_dnchisq(x: float, df: float, ncp: float) -> mp.mpf:
    x, h, lam = mp.mpf(x), mp.mpf(df) / 2, mp.mpf(ncp) / 2
    total, peak, j = mp.mpf(0), mp.mpf(0), 0
    while True:
        a = h + j     # chi^2(df + 2j) density: gamma of shape a, scale 2
        lg = (a - 1) * mp.log(x) - x / 2 - a * mp.log(2) - mp.loggamma(a)
        term = mp.exp(-lam + j * mp.log(lam) - mp.loggamma(j + 1) + lg)
        total += term
        peak = max(peak, term)
        j += 1
        if j > lam + 5 and term < peak * mp.mpf("1e-40") and j > x:
            break
    return mp.log(total)


def _log_dnbeta(x: mp.mpf, o_x: mp.mpf, a: float, b: float, ncp: float) -> mp.mpf:
    a, b, lam = mp.mpf(a), mp.mpf(b), mp.mpf(ncp) / 2
    total, peak, j = mp.mpf(0), mp.mpf(0), 0
    while True:
        lg = (a + j - 1) * mp.log(x) + (b - 1) * mp.log(o_x) - mp.log(mp.beta(a + j, b))
        term = mp.exp(-lam + j * mp.log(lam) - mp.loggamma(j + 1) + lg)
        total += term
        peak = max(peak, term)
        j += 1
        if j > lam + 5 and term < peak * mp.mpf("1e-40"):
            break
    return mp.log(total)


def _beta_x(fn: str, x: mp.mpf, par: tuple[float, ...]) -> tuple[mp.mpf, mp.mpf, float, float]:
    """(x, 1 - x, a, b) of the beta behind the noncentral F or the beta."""
    if fn == "qnf":
        y = mp.mpf(par[0]) / par[1] * x
        return y / (1 + y), 1 / (1 + y), par[0] / 2, par[1] / 2
    return x, 1 - x, par[0], par[1]


def _tail_and_density(fn: str, x: mp.mpf, par: tuple[float, ...]
                      ) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """log P(X <= x), log P(X > x), log f(x); a tail above 1/2 as log1p of minus the other."""
    lo, up, ld = _tail_and_density_raw(fn, x, par)
    if lo > -mp.log(2):
        lo = mp.log1p(-mp.exp(up))
    elif up > -mp.log(2):
        up = mp.log1p(-mp.exp(lo))
    return lo, up, ld


def _tail_and_density_raw(fn: str, x: mp.mpf, par: tuple[float, ...]
                          ) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    if fn == "qnt":
        lo, up = (base._nct_integral(x, *par, kind=k) for k in ("lower", "upper"))
        return lo, up, base._nct_integral(x, *par, kind="density")
    if fn == "qnchisq":
        lo, up = (base._pnchisq(x, *par, lower=k) for k in (True, False))
        return lo, up, _log_dnchisq(x, *par)
    bx, o_x, a, b = _beta_x(fn, x, par)
    if fn == "qbeta":   # in 60 digits: log B(a, b) cancels up to 18 of them at b = 1e19
        with mp.workdps(60):
            a, b, o_x = mp.mpf(a), mp.mpf(b), 1 - bx
            lo = mp.log(mp.betainc(a, b, 0, bx, regularized=True))
            up = mp.log(mp.betainc(b, a, 0, o_x, regularized=True))
            ld = (a - 1) * mp.log(bx) + (b - 1) * mp.log1p(-bx) - mp.log(mp.beta(a, b))
        return +lo, +up, +ld
    lo, up = (base._pnbeta(bx, o_x, a, b, par[-1], lower=k) for k in (True, False))
    ld = _log_dnbeta(bx, o_x, a, b, par[-1])
    if fn == "qnf":     # the density of F: dbeta(x) dx/dF, dx/dF = (df1 / df2) / (1 + y)^2
        ld += mp.log(mp.mpf(par[0]) / par[1]) + 2 * mp.log(o_x)
    return lo, up, ld


def _quantile(fn: str, x0: float, par: tuple[float, ...], lower: int, logt: mp.mpf,
              first: tuple[mp.mpf, mp.mpf, mp.mpf]) -> mp.mpf:
    """the x where the tail ``lower`` has log ``logt`` (Newton on the smaller tail's log)."""
    x = mp.mpf(x0)
    lo, up, ld = first
    # a point in the tail of a shape of 1e19 needs more than 30 digits to be told from 0 or 1
    dps = 60 if fn == "qbeta" else mp.mp.dps
    small = 1 if lo < up else 0
    target = logt if small == lower else mp.log(-mp.expm1(logt))
    for _ in range(8):
        lt = lo if small else up
        # d/dx log P(X <= x) = f / P; the upper tail's is minus f / Q
        step = (lt - target) * mp.exp(lt - ld) * (1 if small else -1)
        with mp.workdps(dps):
            x -= step
        if abs(step) < abs(x) * mp.mpf("1e-25"):
            return x
        lo, up, ld = _tail_and_density(fn, x, par)
    raise RuntimeError(f"{fn}{(x0, *par)}: Newton did not converge")


def _grid(seed: int) -> list[tuple[str, str, tuple[float, ...]]]:
    """(function, region, arguments) of every point (for a quantile: x, then parameters)."""
    rng = np.random.default_rng(seed)
    pts: list[tuple[str, str, tuple[float, ...]]] = []

    def u(a: float, b: float) -> float:
        return float(rng.uniform(a, b))

    def lu(a: float, b: float) -> float:
        return float(10 ** rng.uniform(math.log10(a), math.log10(b)))

    for _ in range(30):     # beyond the mean, far
        df, ncp = lu(0.5, 300), lu(0.1, 1e4)
        sd = math.sqrt(2 * (df + 2 * ncp))
        pts.append(("dnchisq", "upper tail", (df + ncp + u(3, 60) * sd, df, ncp)))
        pts.append(("dnchisq", "lower tail", ((df + ncp) * lu(1e-4, 0.5), df, ncp)))
    for _ in range(20):
        df, ncp = lu(0.5, 300), lu(0.1, 1e4)
        sd = math.sqrt(2 * (df + 2 * ncp))
        pts.append(("dnchisq", "bulk", (max(1e-3, df + ncp + u(-3, 3) * sd), df, ncp)))
    for _ in range(30):
        a, b, ncp = lu(0.5, 50), lu(0.5, 200), lu(0.1, 1e3)
        m = (a + ncp / 2) / (a + b + ncp / 2)
        pts.append(("dnbeta", "upper tail", (1 - (1 - m) * lu(1e-4, 0.7), a, b, ncp)))
        pts.append(("dnbeta", "lower tail", (m * lu(1e-4, 0.7), a, b, ncp)))
    for _ in range(25):     # the quantile points: x in a tail (x first, then parameters)
        df, ncp = lu(0.5, 300), lu(0.1, 500)
        sd = math.sqrt(2 * (df + 2 * ncp))
        pts.append(("qnchisq", "upper tail", (df + ncp + u(3, 40) * sd, df, ncp)))
        pts.append(("qnchisq", "lower tail", ((df + ncp) * lu(1e-3, 0.5), df, ncp)))
    for _ in range(20):
        a, b, ncp = lu(0.5, 50), lu(0.5, 200), lu(0.1, 300)
        m = (a + ncp / 2) / (a + b + ncp / 2)
        pts.append(("qnbeta", "upper tail", (1 - (1 - m) * lu(1e-3, 0.5), a, b, ncp)))
        pts.append(("qnbeta", "lower tail", (m * lu(1e-3, 0.5), a, b, ncp)))
    for _ in range(25):
        df1, df2, ncp = lu(1, 100), lu(3, 500), lu(0.1, 200)
        mean = df2 / (df2 - 2) * (df1 + ncp) / df1
        pts.append(("qnf", "upper tail", (mean * lu(2, 1e3), df1, df2, ncp)))
        pts.append(("qnf", "lower tail", (mean * lu(1e-3, 0.3), df1, df2, ncp)))
    for _ in range(20):
        df, ncp = lu(1, 200), u(0.05, 8)
        pts.append(("qnt", "lower tail", (-lu(1, 300 if df > 3 else 1e5), df, ncp)))
        pts.append(("qnt", "upper tail", (ncp + lu(3, 300 if df > 3 else 1e5), df, ncp)))
    for _ in range(10):
        df, ncp = lu(1, 1e3), u(-8, 8)
        pts.append(("qnt", "bulk", (ncp + u(-3, 3), df, ncp)))
    for _ in range(25):     # beta tails to 1e-300 and beyond (log scale); huge shapes
        a, b = lu(0.5, 1e3), lu(0.5, 1e19)
        mean = a / (a + b)
        pts.append(("qbeta", "lower tail", (mean * lu(1e-12, 0.3), a, b)))
        sd = math.sqrt(a * b / (a + b) ** 2 / (a + b + 1))
        x = mean + u(3, 60) * sd if b > 10 * a else 1 - (1 - mean) * lu(1e-8, 0.5)
        if x < 1:
            pts.append(("qbeta", "upper tail", (x, a, b)))
    pts.append(("qbeta", "upper tail", (1.3e-16, 1.09, 4.1e18)))    # the example
    return pts


def _rows(fn: str, region: str, args: tuple[float, ...]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    if fn[0] == "d":
        if fn == "dnchisq":
            lv = _log_dnchisq(*args)
        else:
            lv = _log_dnbeta(mp.mpf(args[0]), 1 - mp.mpf(args[0]), *args[1:])
        out.append({"args": args, "lower": "", "log": 1, "ref": float(lv)})
        if lv > mp.log(mp.mpf("1e-300")):
            out.append({"args": args, "lower": "", "log": 0, "ref": float(mp.exp(lv))})
        return out
    x0, par = args[0], args[1:]
    first = _tail_and_density(fn, mp.mpf(x0), par)
    for lower in (1, 0):
        lt = first[1 - lower]
        for log in (1, 0):
            p = float(lt) if log else float(mp.exp(lt))
            if not (1e-300 <= p < 1 if not log else p < 0):
                continue
            logt = mp.mpf(p) if log else mp.log(mp.mpf(p))
            q = _quantile(fn, x0, par, lower, logt, first)
            ref = float(q)
            if abs(ref) < 2.3e-308 or (fn in ("qnbeta", "qbeta") and ref >= 1):
                continue
            out.append({"args": (p, *par), "lower": lower, "log": log, "ref": ref})
    return out


def _r_value(fn: str, args: tuple[float, ...], lower: object, log: object) -> float:
    flags = [int(log)] if fn[0] == "d" else [int(lower), int(log)]  # type: ignore[call-overload]
    return float(r_eval(fn, [np.float64(a) for a in args], flags))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "best_references_nc.csv"))
    ap.add_argument("--seed", type=int, default=4402)
    ap.add_argument("--functions", default=",".join(TOLERANCE),
                    help="comma-separated functions (default: all)")
    a = ap.parse_args()
    only = set(a.functions.split(","))
    t0 = time.time()
    rows = []
    for fn, region, args in _grid(a.seed):
        if fn in only:
            for row in _rows(fn, region, args):
                cargs = row.pop("args")
                got = _r_value(fn, cargs, row["lower"], row["log"])  # type: ignore[arg-type]
                rows.append(base.record(fn, region, cargs, row, got, TOLERANCE[fn]))
    base.write(a.out, rows, f"tests/data/make_best_references_nc.py --seed {a.seed} (mpmath "
               f"{mp.__version__}, {mp.mp.dps} digits) in {time.time() - t0:.0f} s")

if __name__ == "__main__":
    main()
