# SPDX-License-Identifier: GPL-2.0-or-later
"""Write ``best_references_tukey.csv``: high-precision values of the studentized range
distribution (``ptukey``) and of its quantiles (``qtukey``), over grids that reach its tails.

Run from the repository root (mpmath; libRmath through ``tests/support/rmath_oracle.py`` for the
flag)::

    nice -n 10 python3 tests/data/make_best_references_tukey.py    # about 8 minutes on one core

How the references are made (mpmath, 30 significant digits), arguments in Rmath.h's order
``(q, nranges, nmeans, df)``:

- the range of ``nmeans`` standard normals, W(w) = nmeans int phi(z) D(z)^(nmeans - 1) dz with
  D = Phi(z) - Phi(z - w), and its upper tail directly as nmeans int phi(z) Phi(z)^m
  (1 - (1 - Phi(z - w) / Phi(z))^m) dz, m = nmeans - 1 (no subtraction of W from one); each by
  20-point Gauss-Legendre panels of width 1 over z in (-10, 10), and about w / 2 for the upper
  tail (the nodes and weights from numpy: the rule is right to about 1e-16);
- the maximum of ``nranges`` such ranges: W^nranges, its upper tail -expm1(nranges log1p(-U));
- for finite df, the integral over s = sqrt(chi^2_df / df) of its density times the above at
  q s, in t = log s by the trapezoidal rule (exponentially convergent for this smooth integrand)
  with a step of 0.15 / sqrt(df + 3) (the integrand decays in the strip |Im t| < pi / 4
  as a chi density of about df degrees of freedom: an error below exp(-50)), from the largest term outwards until the terms
  fall below 1e-24 of it;
- quantiles: a point x is drawn, both tails computed there, each call's probability is that
  value rounded to a double (on the log scale, or not), and the reference is x moved by one Newton
  step to the exact quantile of that double (the slope by a difference quotient at x (1 + 1e-9)),
  and a second where the first moves x by more than 1e-9 of itself.

Each row is one call: function, region, arguments (the probability first for ``qtukey``),
``lower_tail`` and ``log_p``, the reference rounded to a double, and ``r_wrong``: 1 where R's
libRmath is further from it than the test's tolerance.  Probabilities below 1e-300 and
references that are not normal doubles are left out.
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
TOLERANCE = {"ptukey": 1e-12, "qtukey": 1e-12}

mp.mp.dps = 30
_X, _W = np.polynomial.legendre.leggauss(20)
GL = [(mp.mpf(float(x)), mp.mpf(float(w))) for x, w in zip(_X, _W)]
SQ2 = mp.sqrt(2)
LSQ2PI = mp.log(2 * mp.pi) / 2


def _ncdf(x: mp.mpf) -> mp.mpf:
    return mp.erfc(-x / SQ2) / 2


def _range_tail(w: mp.mpf, cc: int, upper: bool) -> mp.mpf:
    """P(range of cc standard normals <= w), or > w (``upper``)."""
    m = cc - 1

    def f(z: mp.mpf) -> mp.mpf:
        phi = mp.exp(-z * z / 2 - LSQ2PI)
        a, b = _ncdf(z), _ncdf(z - w)
        if upper and b / a < mp.mpf("1e-10"):
            return phi * a ** m * -mp.expm1(m * mp.log1p(-b / a))
        with mp.workdps(mp.mp.dps + 20):    # Phi(z) - Phi(z - w) loses log10(1 / w) digits
            d = _ncdf(z) - _ncdf(z - w)
        if upper:
            return phi * a ** m * -mp.expm1(m * mp.log(d / a))
        return phi * d ** m

    lo, hi = (max(-10, w / 2 - 9), max(10, w / 2 + 9)) if upper else (-10, 10)
    n = int(mp.ceil(hi - lo))
    h = (hi - lo) / n
    tot = mp.mpf(0)
    for i in range(n):
        c = lo + (i + mp.mpf(1) / 2) * h
        tot += sum(wt * f(c + h / 2 * x) for x, wt in GL) * h / 2
    return cc * tot


def _tail(w: mp.mpf, rr: int, cc: int, upper: bool) -> mp.mpf:
    """the same for the maximum of rr independent ranges"""
    u = _range_tail(w, cc, upper)
    if not upper:
        return u ** rr
    if rr == 1:
        return u
    if u < mp.mpf(1) / 2:
        return -mp.expm1(rr * mp.log1p(-u))
    return -mp.expm1(rr * mp.log(_range_tail(w, cc, False)))     # (1 - u: rounding)


def ptukey_ref(q: float, rr: int, cc: int, df: float, upper: bool) -> mp.mpf:
    """P(studentized range <= q), or > q (``upper``)"""
    q = mp.mpf(q)
    if math.isinf(df):
        return _tail(q, rr, cc, upper)
    d = mp.mpf(df)
    lc = mp.log(2) + (d / 2) * mp.log(d / 2) - mp.loggamma(d / 2)

    def g(t: mp.mpf) -> mp.mpf:
        s = mp.exp(t)
        return mp.exp(lc + d * t - d * s * s / 2) * _tail(q * s, rr, cc, upper)

    h = mp.mpf(0.15) / mp.sqrt(d + 3)
    # start at the largest term of a coarse scan of log s
    t0 = max((mp.mpf(k) for k in range(-30, 4, 2)), key=lambda t: g(t))
    tot = g(t0)
    for sign in (1, -1):
        t, peak, prev = t0, tot, tot
        while True:
            t += sign * h
            v = g(t)
            tot += v
            peak = max(peak, v)
            if v < prev and v < peak * mp.mpf("1e-24"):
                break
            prev = v
    return tot * h


def _grid(seed: int) -> list[tuple[str, str, tuple[float, ...]]]:
    """(function, region, arguments) of every point (for qtukey the point x, not p)"""
    rng = np.random.default_rng(seed)
    pts: list[tuple[str, str, tuple[float, ...]]] = []
    dfs = [2., 3., 5., 10., 30., 120., 1000., math.inf]
    for i in range(18):
        rr, cc = int(rng.integers(1, 4)), int(rng.choice([2, 3, 5, 10, 20]))
        df = dfs[i % len(dfs)]
        if i % 3 == 0:      # upper tail: P(W > q) from 1e-6 to about 1e-30
            q = float(10 ** rng.uniform(0.9, 1.3 if df > 20 else (2.5 if df < 4 else 1.8)))
            region = "upper tail"
        elif i % 3 == 1:    # lower tail, small q
            q, region = float(10 ** rng.uniform(-3, -0.3)), "lower tail"
        else:
            q, region = float(rng.uniform(1, 6)), "bulk"
        pts.append(("ptukey", region, (q, rr, cc, df)))
    pts.append(("qtukey", "upper tail", (69.36, 2, 2, 10.)))    # the example
    for i in range(6):
        rr, cc = int(rng.integers(1, 3)), int(rng.choice([2, 4, 10]))
        df = dfs[(3 * i) % len(dfs)]
        q = float(10 ** rng.uniform(0.8, 1.6 if df < 20 else 1.1)) if i % 2 else float(
            rng.uniform(0.3, 5))
        pts.append(("qtukey", "upper tail" if i % 2 else "bulk", (q, rr, cc, df)))
    return pts


def _rows(fn: str, args: tuple[float, ...]) -> list[dict[str, object]]:
    q, rr, cc, df = args
    # the smaller tail sm (upper: which), the other as 1 - sm, its log as log1p(-sm)
    sm = ptukey_ref(q, int(rr), int(cc), df, False)
    upper = sm > 0.5
    if upper:
        sm = ptukey_ref(q, int(rr), int(cc), df, True)
    out: list[dict[str, object]] = []

    def tail(lower: int, log: int) -> mp.mpf:
        if (lower == 1) != upper:
            return mp.log(sm) if log else sm
        return mp.log1p(-sm) if log else 1 - sm

    if fn == "ptukey":
        for lower in (1, 0):
            for log in (0, 1):
                v = float(tail(lower, log))
                if (v >= 1e-300) if not log else abs(v) >= 2.2250738585072014e-308:
                    out.append({"args": args, "lower": lower, "log": log, "ref": v})
        return out
    # the slope of the smaller tail's probability in q
    dq = mp.mpf(q) * mp.mpf("1e-9")
    slope = (ptukey_ref_at(mp.mpf(q) + dq, args, upper) - sm) / dq
    for lower in (1, 0):
        for log in (0, 1):
            p = float(tail(lower, log))
            if (not log and not 1e-300 <= p < 1) or (log and not p < 0):
                continue
            if (lower == 1) != upper:   # the smaller tail's probability that p gives
                ps = mp.exp(p) if log else mp.mpf(p)
            else:
                ps = -mp.expm1(p) if log else 1 - mp.mpf(p)
            x = mp.mpf(q) + (ps - sm) / slope
            if abs(x / q - 1) > mp.mpf("1e-9"):     # a second step where the first is long
                x += (ps - ptukey_ref_at(x, args, upper)) / slope
            out.append({"args": (p, rr, cc, df), "lower": lower, "log": log, "ref": float(x)})
    return out


def ptukey_ref_at(q: mp.mpf, args: tuple[float, ...], upper: bool) -> mp.mpf:
    """ptukey_ref at an mpf q (the slope's second point)"""
    return ptukey_ref(q, int(args[1]), int(args[2]), args[3], upper)


def _r_value(fn: str, args: tuple[float, ...], lower: object, log: object) -> float:
    return float(r_eval(fn, [np.float64(a) for a in args], [int(lower), int(log)]))  # type: ignore[call-overload]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "best_references_tukey.csv"))
    ap.add_argument("--seed", type=int, default=4444)
    a = ap.parse_args()
    t0 = time.time()
    rows = []
    for fn, region, args in _grid(a.seed):
        for row in _rows(fn, args):
            cargs = row.pop("args")
            got = _r_value(fn, cargs, row["lower"], row["log"])
            rows.append(base.record(fn, region, cargs, row, got, TOLERANCE[fn]))
        print(fn, region, args, f"{time.time() - t0:.0f} s", flush=True)
    base.write(a.out, rows, f"tests/data/make_best_references_tukey.py --seed {a.seed} (mpmath "
               f"{mp.__version__}, {mp.mp.dps} digits) in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
