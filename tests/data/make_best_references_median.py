# SPDX-License-Identifier: GPL-2.0-or-later
"""Write ``best_references_median.csv``: quantiles that vanish at the median, at p near 1/2.

There the quantile is of the order of p - 1/2, and R's forms (logit as log(p / (1 - p)),
Cauchy's as a cotangent of pi p) lose the digits that cancel: relative errors up to 1e-3 at
p = 1/2 + 1e-13.  The references are the closed forms in mpmath at 60 digits, at the double p
(or log p) of the row exactly: ``qlogis`` l + s log(P / (1 - P)), ``qcauchy`` l + s tan(pi (P -
1/2)), with location 0 (elsewhere the location dominates) and P at 1/2 + d, |d| from 1e-14 to
0.2, on both tails and both scales.  The format is ``best_references.csv``'s.

Run from the repository root:  python3 tests/data/make_best_references_median.py   # seconds
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mpmath as mp
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import make_best_references as base  # noqa: E402
from make_best_references_central import TOLERANCE, _r_value  # noqa: E402

mp.mp.dps = 60


def _quantile(fn: str, p: float, scale: float, lower: int, log: int) -> float:
    big_p = mp.e ** mp.mpf(p) if log else mp.mpf(p)
    if not lower:
        big_p = 1 - big_p
    if fn == "qlogis":
        return float(scale * mp.log(big_p / (1 - big_p)))
    return float(scale * mp.tan(mp.pi * (big_p - mp.mpf(1) / 2)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "best_references_median.csv"))
    ap.add_argument("--seed", type=int, default=4402)
    ap.add_argument("--per", type=int, default=16, help="points per function, tail and scale")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    out = []
    for fn in ("qlogis", "qcauchy"):
        for lower in (1, 0):
            for log in (0, 1):
                for _ in range(a.per):
                    d = rng.choice((-1., 1.)) * 10. ** rng.uniform(-14., np.log10(0.2))
                    p = float(np.log(0.5 + d)) if log else 0.5 + d
                    scale = float(10. ** rng.uniform(-2., 2.))
                    args = (p, 0.0, scale)
                    ref = _quantile(fn, p, scale, lower, log)
                    if ref == 0.:
                        continue
                    row = {"lower": lower, "log": log, "ref": ref}
                    out.append(base.record(fn, "median", args, row,
                                           _r_value(fn, args, lower, log), TOLERANCE))
    base.write(a.out, out, f"tests/data/make_best_references_median.py --seed {a.seed} "
               f"--per {a.per} (mpmath {mp.__version__})")


if __name__ == "__main__":
    main()
