# SPDX-License-Identifier: GPL-2.0-or-later
"""Dask arrays at dask's own pace: one dask graph computed with daskcl beside dask's floor.

The graph: ``2^log2n`` float64 elements in chunks of ``2^log2chunk`` (default 2^27 in 2^23),
made by ``da.random`` and evaluated by the threaded scheduler.  The floor is the same graph
with a NumPy ufunc per chunk of the same shapes (``map_blocks``): ``np.exp`` and SciPy's
``ndtr`` (pnorm's mathematics) or ``gammainc`` (pgamma's).  Each figure is the median of
``--repeat`` computes of the whole graph (inputs drawn, the function, a sum so that nothing
is gathered), in elements per second; ``x_floor`` is daskcl's rate over ``np.exp``'s (dask's own pace, where
the function's arithmetic costs little, as on GPUs: issue 42 asks for 0.8 at least), and
``x_scipy`` over SciPy's same mathematics (the floor where the arithmetic dominates, as on
PoCL).  ``generate_s``: the graph without the
function (its inputs drawn and summed), what no function can go below.

Run:  python3 benchmarks/bench_dask_floor.py [--log2n 27] [--log2chunk 23] [--repeat 3]
      [--functions pnorm,pgamma] [--out FILE.json]
(on PoCL, smaller: --log2n 22 --log2chunk 18)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write


def _graph(log2n: int, log2chunk: int, nargs: int) -> list[Any]:
    import dask.array as da

    n, chunk = 1 << log2n, 1 << log2chunk
    rs = da.random.RandomState(7)
    return [rs.uniform(0.1, 5.0, n, chunks=chunk) for _ in range(nargs)]


def _sum_time(apply: Any, nargs: int, log2n: int, log2chunk: int, repeat: int) -> float:
    """Median seconds of computing ``apply`` of the graph's ``nargs`` inputs, summed (so that
    no result is gathered), after one compute."""
    import dask

    times = []
    for _ in range(repeat + 1):
        expr = apply(_graph(log2n, log2chunk, nargs)).sum()
        t0 = time.perf_counter()
        dask.compute(expr, scheduler="threads")
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


def run(names: list[str], log2n: int, log2chunk: int, repeat: int) -> list[dict[str, Any]]:
    import scipy.special as sp

    from daskcl import nmath

    n = 1 << log2n
    spec = {"pnorm": (1, lambda a: nmath.pnorm(*a), lambda x: sp.ndtr(x)),
            "pgamma": (2, lambda a: nmath.pgamma(*a), lambda x, s: sp.gammainc(s, x))}
    rows = []
    for name in names:
        nargs, ours, theirs = spec[name]
        shape = (log2n, log2chunk, repeat)
        gen = _sum_time(sum, nargs, *shape)
        t_ours = _sum_time(ours, nargs, *shape)
        t_ufunc = _sum_time(lambda a, f=theirs: theirs_blocks(f, a), nargs, *shape)
        t_exp = _sum_time(lambda a: theirs_blocks(np.exp, a), 1, *shape)
        row: dict[str, Any] = {"function": name, "n": n, "chunk": 1 << log2chunk,
                               "generate_s": gen, "daskcl_s": t_ours, "scipy_s": t_ufunc,
                               "exp_s": t_exp}
        row["daskcl_gps"] = n / t_ours / 1e9
        row["floor_gps"] = n / t_exp / 1e9
        row["x_floor"] = t_exp / t_ours
        row["x_scipy"] = t_ufunc / t_ours
        print(table([row], list(row)), flush=True)
        rows.append(row)
    return rows


def theirs_blocks(f: Any, arrays: list[Any]) -> Any:
    import dask.array as da

    return da.map_blocks(f, *arrays, dtype=np.float64)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2n", type=int, default=27)
    ap.add_argument("--log2chunk", type=int, default=23)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--functions", default="pnorm,pgamma")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    from daskcl.runtime import device

    rows = run(args.functions.split(","), args.log2n, args.log2chunk, args.repeat)
    print()
    print(table(rows, ["function", "n", "chunk", "daskcl_gps", "floor_gps", "x_floor",
                        "x_scipy"]))
    res = {"machine": machine(), "device": device.current().info.describe(),
           "repeat": args.repeat, "scheduler": "threads", "rows": rows}
    if args.out:
        print(write("dask-floor", res, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
