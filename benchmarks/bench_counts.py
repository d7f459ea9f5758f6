# SPDX-License-Identifier: GPL-2.0-or-later
"""Count tables of the signed-rank and Wilcoxon rank-sum distributions: daskcl against R.

For each n, the time of one ``daskcl.nmath.psignrank(q, n)`` call with a cold table (the
first call for that n: the table is built on the device, then read) against libRmath's
``psignrank(q, n, 1, 0)`` through ctypes on the same machine in the same run, after
``signrank_free()`` (R also builds its table on the first call for an n); likewise
``pwilcox(q, m, n)`` for a few (m, n) after ``wilcox_free()``.  q is the mean, n(n+1)/4 (R sums
the counts up to q).  Both sides give the same value (checked).  Small n are timed as the
median of several cold calls; large n once.  ``ratio`` is R's time over daskcl's (above 1:
daskcl faster).

R's wilcox memo holds (m+1)(n+1) arrays of up to m n / 2 doubles: m = n = 200 needs 1.6 GB,
so the wilcox rows stay at sizes R can hold.

Run:  python benchmarks/bench_counts.py [--n 50 100 ... 8191] [--wilcox 50x50 100x100]
      [--out FILE] [--r-max-n N]   (R is skipped above --r-max-n; its time is then absent)
"""

from __future__ import annotations

import argparse
import ctypes
import math
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import machine, table, write

N_DEFAULT = [50, 100, 200, 500, 1000, 2000, 3000, 4000, 6000, 8191]
WILCOX_DEFAULT = ["10x10", "50x50", "100x100", "150x150", "200x200", "5x2000"]


def rmath() -> ctypes.CDLL:
    from tests.support.rmath_oracle import library

    lib = library()
    d, i = ctypes.c_double, ctypes.c_int
    lib.psignrank.restype = d
    lib.psignrank.argtypes = [d, d, i, i]
    lib.pwilcox.restype = d
    lib.pwilcox.argtypes = [d, d, d, i, i]
    lib.signrank_free.restype = None
    lib.wilcox_free.restype = None
    return lib


def cold(fn: Any, reset: Any, budget: float = 2.0, most: int = 7) -> tuple[float, Any]:
    """(median seconds, value) of ``fn()`` each after ``reset()``; repeated while cheap."""
    times, val = [], None
    while True:
        reset()
        t0 = time.perf_counter()
        val = fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= most or sum(times) > budget:
            return statistics.median(times), val


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="*", default=N_DEFAULT)
    ap.add_argument("--wilcox", nargs="*", default=WILCOX_DEFAULT, help="m x n pairs, e.g. 50x50")
    ap.add_argument("--r-max-n", type=int, default=10**9, help="skip R's psignrank above this n")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import numpy as np

    from daskcl import nmath
    from daskcl.kernels import _counts

    lib = rmath()
    warnings.simplefilter("ignore", RuntimeWarning)   # R's NaN beyond n = 1074 (2^-n = 0)
    ours = {name: getattr(nmath, name) for name in ("psignrank", "pwilcox")}
    ours["psignrank"](1.0, 3.0)     # the programs are built (and cached) before any timing
    ours["pwilcox"](1.0, 3.0, 3.0)
    rows: list[dict[str, Any]] = []

    def ours_reset() -> None:
        _counts._cache.entries.clear()

    def compare(row: dict[str, Any], name: str, params: tuple[float, ...], with_r: bool,
                r_reset: Any) -> None:
        f = ours[name]
        t_d, v_d = cold(lambda: float(f(np.array([params[0]]), *params[1:])[0]), ours_reset)
        row["daskcl_s"] = t_d
        if with_r:
            rf = getattr(lib, name)
            t_r, v_r = cold(lambda: rf(*params, 1, 0), r_reset)
            same = (math.isnan(v_d) and math.isnan(v_r)) or v_d == v_r
            row.update(R_s=t_r, ratio=t_r / t_d,
                       rel_diff=0.0 if same else abs(v_d - v_r) / max(abs(v_r), 1e-300))
        rows.append(row)
        print(table([row], list(row)), flush=True)

    for n in args.n:
        compare({"fn": "psignrank", "n": n}, "psignrank", (float(n * (n + 1) // 4), float(n)),
                n <= args.r_max_n, lib.signrank_free)
    for spec in args.wilcox:
        m, n = (int(v) for v in spec.lower().split("x"))
        compare({"fn": "pwilcox", "m": m, "n": n}, "pwilcox", (float(m * n // 2), m, n), True,
                lib.wilcox_free)
    cols = ["fn", "m", "n", "daskcl_s", "R_s", "ratio", "rel_diff"]
    print(table(rows, cols))
    path = write("counts", {"machine": machine(), "rows": rows}, args.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
