# SPDX-License-Identifier: GPL-2.0-or-later
"""A fused kernel of your own against the same expression composed of daskcl.nmath calls.

The power of a two-sided t test over a grid of degrees of freedom and noncentralities,

    c = qt(alpha / 2, df, lower_tail=False)
    power = pnt(c, df, ncp, lower_tail=False) + pnt(-c, df, ncp)

as one :class:`daskcl.ElementwiseKernel` (one launch, no intermediate arrays) and as three
:mod:`daskcl.nmath` calls and a NumPy (or device) addition, from NumPy and with device arrays
(``pyopencl.array.Array``), on identical inputs in one run; the bits of both are compared.
``vs_composed`` is the composition's time over the fused kernel's; ``vs_costliest`` the fused
kernel's time over that of the costliest single call of the composition (the first pnt), whose
cost it cannot avoid.

Run:  python benchmarks/bench_fused.py [--df 2048] [--ncp 2048] [--repeat 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time, table, write

OPERATION = """double c = qt(alpha / 2, df, 0, 0);
power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);"""



def run(ndf: int, nncp: int, repeat: int) -> dict[str, Any]:
    import pyopencl.array as cla

    from daskcl import ElementwiseKernel, nmath
    from daskcl.runtime import device

    q = device.current().queue
    power = ElementwiseKernel("double alpha, double df, double ncp", "double power",
                              OPERATION, name="ttest_power")
    df = np.linspace(2, 200, ndf)[:, None]
    ncp = np.linspace(0, 6, nncp)[None, :]

    def composed(df: Any, ncp: Any) -> Any:
        c = nmath.qt(0.025, df, lower_tail=False)
        return nmath.pnt(c, df, ncp, lower_tail=False) + nmath.pnt(-c, df, ncp)

    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fused_np = power(0.05, df, ncp)
        comp_np = composed(df, ncp)
        same = bool(np.array_equal(fused_np, comp_np))
        c_np = nmath.qt(0.025, df, lower_tail=False)
        row = {"inputs": "numpy", "elements": ndf * nncp, "same_bits": same,
               "fused_s": median_time(lambda: power(0.05, df, ncp), repeat, warmup=1),
               "composed_s": median_time(lambda: composed(df, ncp), repeat, warmup=1),
               "costliest_s": median_time(lambda: nmath.pnt(c_np, df, ncp, lower_tail=False),
                                      repeat)}
        rows.append(row)
        ddf = cla.to_device(q, np.ascontiguousarray(df))
        dncp = cla.to_device(q, np.ascontiguousarray(ncp))
        c_dev = nmath.qt(0.025, ddf, lower_tail=False)
        same_dev = bool(np.array_equal(power(0.05, ddf, dncp).get(), fused_np))
        rows.append({"inputs": "device", "elements": ndf * nncp, "same_bits": same_dev,
                     "fused_s": median_time(lambda: (power(0.05, ddf, dncp), q.finish()), repeat, warmup=1),
                     "composed_s": median_time(lambda: (composed(ddf, dncp), q.finish()), repeat, warmup=1),
                     "costliest_s": median_time(lambda: (nmath.pnt(c_dev, ddf, dncp,
                                                                lower_tail=False),
                                                     q.finish()), repeat)})
    for r in rows:
        r["vs_composed"] = r["composed_s"] / r["fused_s"]
        r["vs_costliest"] = r["fused_s"] / r["costliest_s"]
    print(table(rows, ["inputs", "elements", "same_bits", "fused_s", "composed_s",
                       "costliest_s", "vs_composed", "vs_costliest"]))
    return {"machine": machine(), "operation": OPERATION, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--df", type=int, default=2048)
    ap.add_argument("--ncp", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    res = run(args.df, args.ncp, args.repeat)
    if args.out:
        write("fused", res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
