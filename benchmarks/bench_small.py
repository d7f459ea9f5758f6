# SPDX-License-Identifier: GPL-2.0-or-later
"""Small calls from NumPy: a call's own cost, against scipy.stats in the same run.

A user who calls ``daskcl.nmath`` on short vectors in a loop (R's habit) pays each call's fixed
cost: checking and broadcasting the arguments, the launch, the waits for the device and the
read of R's NaN counts.  For each function and size (1, 1024 and 65 536 elements by default),
the median microseconds of one call (``repeat`` calls after a warm-up) through daskcl on the
bound device and through scipy.stats (one CPU thread), on identical inputs; ``vs_scipy`` is
scipy's time over daskcl's (above 1: daskcl faster); ``rel_diff`` the largest relative
difference of the values (a check that both computed the same thing, not of accuracy: R is the
specification, and scipy's binomial density departs from R's by up to about 1e-12).

Run:  python benchmarks/bench_small.py [--n 1,1024,65536] [--repeat 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write


def _cases() -> dict[str, tuple[Callable[[np.random.Generator, int], tuple[np.ndarray, ...]],
                                Callable[..., Any], Callable[..., Any]]]:
    import scipy.stats as st

    from daskcl import nmath

    def binom(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        size = r.integers(1, 200, n).astype(np.float64)
        return np.floor(r.uniform(0, 1, n) * (size + 1)), size, r.uniform(0.05, 0.95, n)

    return {
        "pnorm": (lambda r, n: (r.normal(0, 3, n),), nmath.pnorm, st.norm.cdf),
        "qnorm": (lambda r, n: (r.uniform(0.001, 0.999, n),), nmath.qnorm, st.norm.ppf),
        "dbinom": (binom, nmath.dbinom, st.binom.pmf),
        "pbeta": (lambda r, n: (r.uniform(0, 1, n), r.uniform(0.5, 20, n), r.uniform(0.5, 20, n)),
                  nmath.pbeta, st.beta.cdf),
    }


def _per_call(fn: Callable[..., Any], args: tuple[np.ndarray, ...], repeat: int) -> float:
    fn(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(sizes: list[int], repeat: int) -> dict[str, Any]:
    rows = []
    for name, (make, ours, scipy_fn) in _cases().items():
        for n in sizes:
            args = make(np.random.default_rng(5), n)
            got, want = np.asarray(ours(*args)), np.asarray(scipy_fn(*args))
            rel = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))
            row = {"function": name, "n": n, "rel_diff": rel,
                   "daskcl_us": _per_call(ours, args, repeat) * 1e6,
                   "scipy_us": _per_call(scipy_fn, args, repeat) * 1e6}
            row["vs_scipy"] = row["scipy_us"] / row["daskcl_us"]
            rows.append(row)
            print(table([row], list(row)), flush=True)
    return {"machine": machine(), "repeat": repeat, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="1,1024,65536")
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    res = run([int(x) for x in args.n.split(",")], args.repeat)
    if args.out:
        write("small", res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
