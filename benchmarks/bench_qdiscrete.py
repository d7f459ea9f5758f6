# SPDX-License-Identifier: GPL-2.0-or-later
"""Discrete quantiles from a poor Cornish-Fisher start: daskcl against R, one element each.

With a small size and a large mean, qnbinom's start is 0 and R walks to the answer a unit at
a time (one pnbinom per unit); daskcl walks 64 steps, then doubles and bisects to the same
integer (``cl/nmath/qdiscrete.cl``).  For each case, the median time of one
``daskcl.nmath.qnbinom_mu`` call (program built before timing) and of libRmath's
``qnbinom_mu`` through ctypes, in the same run on the same machine; ``evaluations`` is R's
count of distribution-function calls (its answer, since it walks from 0); both sides give the
same integer (checked).  What bounds each side: the number of pnbinom evaluations.

Run:  python benchmarks/bench_qdiscrete.py [--out FILE]
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import median_time, report

#: (p, size, mu): lower tail, probability scale; answers from 6.4e3 to 1.9e7
CASES = [(0.2, 0.5, 1e5), (0.2, 0.66, 1.6e6), (0.2, 0.66, 1.6e7), (0.2, 0.66, 1.6e8)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import numpy as np

    from daskcl import nmath
    from tests.support.rmath_oracle import library

    lib = library()
    lib.qnbinom_mu.restype = ctypes.c_double
    lib.qnbinom_mu.argtypes = [ctypes.c_double] * 3 + [ctypes.c_int] * 2
    nmath.qnbinom_mu(np.array([0.5]), 1.0, 10.0)      # built (and cached) before any timing
    rows: list[dict[str, Any]] = []
    for p, size, mu in CASES:
        got = float(nmath.qnbinom_mu(np.array([p]), size, mu)[0])
        want = lib.qnbinom_mu(p, size, mu, 1, 0)
        x = np.array([p])
        t_d = median_time(lambda x=x, s=size, m=mu: nmath.qnbinom_mu(x, s, m), repeat=5,
                          warmup=1)
        t_r = median_time(lambda p=p, s=size, m=mu: lib.qnbinom_mu(p, s, m, 1, 0),
                          repeat=3 if mu < 1e8 else 1, warmup=0)
        rows.append({"p": p, "size": size, "mu": mu, "quantile": want, "same": got == want,
                     "evaluations": want, "daskcl_s": t_d, "R_s": t_r, "ratio": t_r / t_d})
    report("qdiscrete", rows, ["p", "size", "mu", "quantile", "same", "evaluations",
                               "daskcl_s", "R_s", "ratio"], args.out)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
