# SPDX-License-Identifier: GPL-2.0-or-later
"""Write ``best_references.csv``: high-precision values of the functions that
``accuracy = "best"`` computes by other algorithms than R's, over grids that reach their tails.

Run from the repository root (mpmath; libRmath through ``tests/support/rmath_oracle.py`` for
the flag)::

    python3 tests/data/make_best_references.py          # 2 to 5 minutes on one core

How the references are made (mpmath, 30 significant digits, independent of the kernels'
algorithms and arithmetic):

- ``pnt``, ``dnt``: the defining integrals over S = sqrt(V / df), V ~ chi^2(df):
  P(T <= t) = E[Phi(t S - ncp)], P(T > t) = E[Phi(ncp - t S)], f(t) = E[S phi(t S - ncp)], by
  mpmath's tanh-sinh quadrature in log S, split at points two of the integrand's widths
  apart around its maximum (found on a grid) and taken to where it is 1e-40 of it; checked
  against the Poisson-weighted incomplete beta series (Guenther 1978), summed in 60 digits
  where its terms are positive (the upper tail for t > 0, ncp > 0), by ``--check``.
- ``pnchisq``: the Poisson mixture of regularised incomplete gamma functions summed directly
  for each tail (both sums of positive terms), every term to where it is 1e-40 of the sum.
- ``pnbeta``, ``pnf`` (through the beta with x = y / (1 + y), y = df1 q / df2, in 30 digits):
  the Poisson mixture of regularised incomplete beta functions summed directly for each tail,
  the upper as I_(1-x)(b, a + j) (never 1 - I_x).
- ``dnf``: the Poisson mixture of the densities of (chi^2(df1 + 2j) / df1) / (chi^2(df2) / df2)
  summed directly (daskcl's default is already right there; R is not).
- ``choose``, ``lchoose``: ``mpmath.binomial`` (gamma functions in 30 digits); lchoose where
  its value is 0.01 or more in size (its tolerance is relative).

A tail near one (above 1/2) is given on the log scale as log1p of minus the other tail.

Each row is one call: function, region, arguments, ``lower_tail`` and ``log_p`` (``log`` for
a density; empty for choose), the reference rounded to a double, and ``r_wrong``: 1 where R's
libRmath (the default mode's values) is further from it than the test's tolerance.  Rows whose
value is not a normal double (beyond 1e-300 not on the log scale) are left out.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path
from typing import Any

import mpmath as mp
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from support.rmath_oracle import r_eval  # noqa: E402

#: relative tolerance by function (the test's)
TOLERANCE = {"pnt": 1e-12, "dnt": 1e-12, "pnchisq": 1e-12, "pnbeta": 1e-12, "pnf": 1e-12,
             "dnf": 1e-12, "choose": 1e-13, "lchoose": 1e-13}

mp.mp.dps = 30


def _log_chi_s(s: mp.mpf, df: mp.mpf) -> mp.mpf:
    """log density of S = sqrt(V / df), V ~ chi^2(df), at s > 0."""
    k = df / 2
    v = df * s * s
    return (mp.log(2 * df * s) + (k - 1) * mp.log(v) - v / 2 - k * mp.log(2) - mp.loggamma(k))


def _nct_integral(t: float, df: float, ncp: float, kind: str) -> mp.mpf:
    """log of E[Phi(t S - ncp)] (kind "lower"), E[Phi(ncp - t S)] ("upper") or
    E[S phi(t S - ncp)] ("density"), by quadrature in w = log s."""
    t, df, ncp = mp.mpf(t), mp.mpf(df), mp.mpf(ncp)

    def logf(w: mp.mpf) -> mp.mpf:
        s = mp.exp(w)
        x = t * s - ncp
        if kind == "lower":
            lp = mp.log(mp.ncdf(x))
        elif kind == "upper":
            lp = mp.log(mp.ncdf(-x))
        else:
            lp = w - x * x / 2 - mp.log(2 * mp.pi) / 2
        return lp + _log_chi_s(s, df) + w        # ds = s dw

    # the maximum on a grid, then the range where the integrand is above 1e-40 of it
    grid = [mp.mpf(w) / 2 for w in range(-2 * 60, 2 * 12)]
    vals = [logf(w) for w in grid]
    i = max(range(len(vals)), key=lambda j: vals[j])
    # the maximum refined by golden section between the grid's neighbours
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(40):
        a = lo + (hi - lo) * mp.mpf("0.381966")
        b = lo + (hi - lo) * mp.mpf("0.618034")
        if logf(a) > logf(b):
            hi = b
        else:
            lo = a
    top_w = (lo + hi) / 2
    top = logf(top_w)
    # width from the curvature
    h = mp.mpf("1e-6")
    curv = (logf(top_w + h) - 2 * top + logf(top_w - h)) / (h * h)
    width = 1 / mp.sqrt(-curv) if curv < 0 else mp.mpf(1)
    cut = top - 92                              # 1e-40

    def edge(direction: int) -> mp.mpf:
        step = width
        w = top_w
        while logf(w + direction * step) > cut and step < 1e4:
            w += direction * step
            step *= 1.5
        return w + direction * step

    left, right = edge(-1), edge(1)
    n = int(min(80, max(6, (right - left) / (2 * width))))
    pts = [left + (right - left) * j / n for j in range(n + 1)]
    val = mp.quad(lambda w: mp.exp(logf(w) - top), pts)
    return top + mp.log(val)


def _nct_series_upper(t: float, df: float, ncp: float) -> mp.mpf:
    """log P(T > t) for t > 0, ncp > 0 by the positive series (the check)."""
    with mp.workdps(60):
        t, df, ncp = mp.mpf(t), mp.mpf(df), mp.mpf(ncp)
        x = t * t / (t * t + df)
        lam = ncp * ncp / 2
        total = mp.mpf(0)
        j = 0
        while True:
            pj = mp.exp(-lam) * lam ** j / mp.factorial(j)
            qj = mp.exp(-lam) * lam ** j / mp.gamma(j + mp.mpf(3) / 2)
            term = (pj * mp.betainc(df / 2, j + mp.mpf(1) / 2, 0, 1 - x, regularized=True)
                    + ncp / mp.sqrt(2) * qj * mp.betainc(df / 2, j + 1, 0, 1 - x,
                                                         regularized=True)) / 2
            total += term
            j += 1
            if j > lam + 10 and term < total * mp.mpf("1e-45"):
                break
        return mp.log(total)


def _pnchisq(x: float, df: float, ncp: float, lower: bool) -> mp.mpf:
    """log of the lower or upper tail, the Poisson mixture summed directly."""
    y, h, lam = mp.mpf(x) / 2, mp.mpf(df) / 2, mp.mpf(ncp) / 2
    total = mp.mpf(0)
    peak = mp.mpf(0)
    j = 0
    while True:
        w = mp.exp(-lam + j * mp.log(lam) - mp.loggamma(j + 1)) if lam > 0 else mp.mpf(j == 0)
        if h + j == 0:
            g = mp.mpf(1) if lower else mp.mpf(0)
        elif lower:
            g = mp.gammainc(h + j, 0, y, regularized=True)
        else:
            g = mp.gammainc(h + j, y, mp.inf, regularized=True)
        term = w * g
        total += term
        peak = max(peak, term)
        j += 1
        if j > lam + 5 and term < peak * mp.mpf("1e-40") and (lower or j > y):
            break
    return mp.log(total)


def _pnbeta(x: mp.mpf, o_x: mp.mpf, a: float, b: float, ncp: float, lower: bool) -> mp.mpf:
    """log of the lower or upper tail at x (1 - x = o_x), the Poisson mixture of incomplete
    beta functions summed directly, the upper through I_(1-x)(b, a + j)."""
    a, b, lam = mp.mpf(a), mp.mpf(b), mp.mpf(ncp) / 2
    total = mp.mpf(0)
    peak = mp.mpf(0)
    j = 0
    while True:
        w = mp.exp(-lam + j * mp.log(lam) - mp.loggamma(j + 1))
        if lower:
            g = mp.betainc(a + j, b, 0, x, regularized=True)
        else:
            g = mp.betainc(b, a + j, 0, o_x, regularized=True)
        term = w * g
        total += term
        peak = max(peak, term)
        j += 1
        if j > lam + 5 and term < peak * mp.mpf("1e-40"):
            break
    return mp.log(total)


def _dnf(x: float, df1: float, df2: float, ncp: float) -> mp.mpf:
    """log density of the noncentral F: the Poisson mixture over j of the densities of
    (chi^2(df1 + 2j) / df1) / (chi^2(df2) / df2), summed directly."""
    x, d1, d2, lam = mp.mpf(x), mp.mpf(df1), mp.mpf(df2), mp.mpf(ncp) / 2
    r = x * d1 / d2
    total = mp.mpf(0)
    peak = mp.mpf(0)
    j = 0
    while True:
        nu = d1 + 2 * j
        lg = (nu / 2 * mp.log(d1 / d2) + (nu / 2 - 1) * mp.log(x)
              - (nu + d2) / 2 * mp.log1p(r) - mp.log(mp.beta(nu / 2, d2 / 2)))
        term = mp.exp(-lam + j * mp.log(lam) - mp.loggamma(j + 1) + lg)
        total += term
        peak = max(peak, term)
        j += 1
        if j > lam + 5 and term < peak * mp.mpf("1e-40"):
            break
    return mp.log(total)


def _grid(seed: int) -> list[tuple[str, str, tuple[float, ...]]]:
    """(function, region, arguments) of every point."""
    rng = np.random.default_rng(seed)
    pts: list[tuple[str, str, tuple[float, ...]]] = []

    def u(a: float, b: float) -> float:
        return float(rng.uniform(a, b))

    def lu(a: float, b: float) -> float:
        return float(10 ** rng.uniform(math.log10(a), math.log10(b)))

    for _ in range(60):     # t beyond the bulk, df 1-200, ncp 0-8
        df, ncp = lu(1, 200), u(0.05, 8)
        pts.append(("pnt", "lower tail", (-lu(1, 300 if df > 3 else 1e6), df, ncp)))
        pts.append(("pnt", "upper tail", (ncp + lu(3, 300 if df > 3 else 1e6), df, ncp)))
    for _ in range(30):
        df, ncp = lu(0.5, 1e4), u(-8, 8)
        pts.append(("pnt", "bulk", (ncp + u(-3, 3), df, ncp)))
    for _ in range(15):     # where R takes a normal approximation (df > 4e5)
        df, ncp = lu(4e5, 1e9), u(-8, 8)
        pts.append(("pnt", "df 4e5-1e9", (ncp + u(-8, 8), df, ncp)))
    for _ in range(60):     # the grid: x -10..40, df 1-300, ncp -5..10
        pts.append(("dnt", "x -10..40", (u(-10, 40), lu(1, 300), u(-5, 10))))
    for _ in range(30):
        df = lu(1, 100)
        pts.append(("dnt", "far tails", (float(rng.choice([-1, 1])) * lu(40, 1e4), df,
                                         u(-10, 10))))
    for _ in range(15):     # where R takes the normal density (df > 1e8)
        df, ncp = lu(1e5, 1e9), u(-8, 8)
        pts.append(("dnt", "df 1e5-1e9", (ncp + u(-8, 8), df, ncp)))
    for _ in range(60):     # 8-40 sd beyond the mean
        df, ncp = lu(0.5, 300), lu(0.1, 500)
        sd = math.sqrt(2 * (df + 2 * ncp))
        pts.append(("pnchisq", "upper tail", (df + ncp + u(8, 40) * sd, df, ncp)))
    for _ in range(30):
        df, ncp = lu(0.5, 300), lu(0.1, 500)
        pts.append(("pnchisq", "lower tail", ((df + ncp) * lu(1e-4, 0.3), df, ncp)))
    for _ in range(30):
        df, ncp = lu(0.5, 300), lu(0.1, 500)
        sd = math.sqrt(2 * (df + 2 * ncp))
        pts.append(("pnchisq", "bulk", (max(1e-3, df + ncp + u(-3, 3) * sd), df, ncp)))
    for _ in range(40):     # noncentral beta: beyond the (approximate) mean, both sides
        a, b, ncp = lu(0.5, 50), lu(0.5, 200), lu(0.1, 300)
        m = (a + ncp / 2) / (a + b + ncp / 2)
        pts.append(("pnbeta", "upper tail", (1 - (1 - m) * lu(1e-3, 0.5), a, b, ncp)))
        pts.append(("pnbeta", "lower tail", (m * lu(1e-3, 0.5), a, b, ncp)))
    for _ in range(40):     # noncentral F beyond its mean
        df1, df2, ncp = lu(1, 100), lu(3, 500), lu(0.1, 200)
        mean = df2 / (df2 - 2) * (df1 + ncp) / df1
        pts.append(("pnf", "upper tail", (mean * lu(3, 1e3), df1, df2, ncp)))
    for _ in range(60):     # the noncentral F density, x up to 1e16
        pts.append(("dnf", "x 1e-3..1e16", (lu(1e-3, 1e16), lu(1, 60), lu(1, 60), lu(0.1, 100))))
    for _ in range(80):     # non-integer n, k 10^3-10^6
        k = float(round(lu(1e3, 1e6)))
        kind = rng.integers(3)
        frac = u(0.2, 0.8)
        if kind == 0:
            n = k + float(rng.integers(-1, 40)) + frac          # near k: moderate values
        elif kind == 1:
            n = float(rng.integers(0, 60)) + frac                # n < k - 1: tiny values
        else:
            n = -float(rng.integers(0, 40)) - frac               # negative n
        pts.append(("choose", "non-integer n, k 1e3-1e6", (n, k)))
    for _ in range(30):
        k = float(rng.integers(30, 1000))
        pts.append(("choose", "non-integer n, k 30-1000", (k + u(-0.9, 30), k)))
    pts += [("lchoose", region, args) for fn, region, args in pts if fn == "choose"]
    for _ in range(30):     # beyond the doubles of choose
        k = float(round(lu(1e3, 1e7)))
        pts.append(("lchoose", "non-integer n, k 1e3-1e7, large",
                    (float(rng.choice([-1, 1])) * k * lu(0.5, 1e3) + u(0.2, 0.8), k)))
    return pts


def _rows(fn: str, region: str, args: tuple[float, ...]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    if fn == "choose":
        ref = float(mp.binomial(mp.mpf(args[0]), mp.mpf(args[1])))
        if 1e-300 <= abs(ref) <= 1e300:
            out.append({"lower": "", "log": "", "ref": ref})
        return out
    if fn == "lchoose":     # relative to its value: where that is not near zero
        ref = float(mp.log(abs(mp.binomial(mp.mpf(args[0]), mp.mpf(args[1])))))
        if abs(ref) >= 0.01:
            out.append({"lower": "", "log": "", "ref": ref})
        return out
    if fn in ("dnt", "dnf"):
        lv = _nct_integral(*args, kind="density") if fn == "dnt" else _dnf(*args)
        out.append({"lower": "", "log": 1, "ref": float(lv)})
        if lv > mp.log(mp.mpf("1e-300")):
            out.append({"lower": "", "log": 0, "ref": float(mp.exp(lv))})
        return out
    tails = {}
    for lower in (1, 0):
        if fn == "pnt":
            tails[lower] = _nct_integral(*args, kind="lower" if lower else "upper")
        elif fn == "pnchisq":
            tails[lower] = _pnchisq(*args, lower=bool(lower))
        else:
            if fn == "pnf":     # P[F <= q] = pnbeta(y / (1 + y), df1 / 2, df2 / 2, ncp)
                y = mp.mpf(args[1]) / args[2] * args[0]
                x, o_x, a, b = y / (1 + y), 1 / (1 + y), args[1] / 2, args[2] / 2
            else:
                x, o_x, a, b = mp.mpf(args[0]), 1 - mp.mpf(args[0]), args[1], args[2]
            tails[lower] = _pnbeta(x, o_x, a, b, args[-1], lower=bool(lower))
    for lower in (1, 0):
        lv = tails[lower]
        if lv > -mp.log(2):     # near one: its log from the other tail (not 30 digits of 1)
            lv = mp.log1p(-mp.exp(tails[1 - lower]))
        out.append({"lower": lower, "log": 1, "ref": float(lv)})
        if lv > mp.log(mp.mpf("1e-300")):
            out.append({"lower": lower, "log": 0, "ref": float(mp.exp(lv))})
    return out


def _r_value(fn: str, args: tuple[float, ...], lower: object, log: object) -> float:
    flags = [] if fn in ("choose", "lchoose") else ([int(log)] if fn[0] == "d" else [int(lower), int(log)])  # type: ignore[call-overload]
    return float(r_eval(fn, [np.float64(a) for a in args], flags))


COLUMNS = ["fn", "region", "a0", "a1", "a2", "a3", "lower", "log", "ref", "r_wrong"]


def record(fn: str, region: str, args: Any, row: dict[str, object], got: float,
           tol: float) -> dict[str, object]:
    """One row of a reference file: ``row``'s flags and reference, R's value ``got`` flagged
    ``r_wrong`` where it is not within ``tol`` of the reference."""
    ref = float(row["ref"])  # type: ignore[arg-type]
    err = abs(got - ref) / abs(ref) if ref != 0 else abs(got)
    return {"fn": fn, "region": region, **{f"a{i}": repr(float(v)) for i, v in enumerate(args)},
            "lower": row["lower"], "log": row["log"], "ref": repr(ref),
            "r_wrong": int(not err <= tol)}


def write(out: str, rows: list[dict[str, object]], how: str) -> None:
    """Write ``rows`` to ``out`` under a comment line saying ``how`` they were made."""
    with open(out, "w", newline="") as f:
        f.write(f"# written by {how}\n")
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "best_references.csv"))
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--check", action="store_true",
                    help="compare the pnt quadrature with the positive series and exit")
    a = ap.parse_args()
    if a.check:
        rng = np.random.default_rng(1)
        worst = 0.0
        for _ in range(12):
            df, ncp = float(10 ** rng.uniform(0, 2.3)), float(rng.uniform(0.1, 8))
            t = ncp + float(10 ** rng.uniform(0, 1.5))
            q, s = _nct_integral(t, df, ncp, "upper"), _nct_series_upper(t, df, ncp)
            err = float(abs(mp.exp(q - s) - 1))
            worst = max(worst, err)
            print(f"pnt({t:.6g}, {df:.6g}, {ncp:.6g}, upper) quadrature/series - 1 = {err:.2e}")
        print(f"worst {worst:.2e}")
        return
    t0 = time.time()
    rows = [record(fn, region, args, row, _r_value(fn, args, row["lower"], row["log"]),
                   TOLERANCE[fn])
            for fn, region, args in _grid(a.seed) for row in _rows(fn, region, args)]
    write(a.out, rows, f"tests/data/make_best_references.py --seed {a.seed} (mpmath "
          f"{mp.__version__}, {mp.mp.dps} digits) in {time.time() - t0:.0f} s")

if __name__ == "__main__":
    main()
