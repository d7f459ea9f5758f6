# SPDX-License-Identifier: GPL-2.0-or-later
"""Throughput of daskcl's random variates against CuPy's and NumPy's generators.

For normal, gamma, beta, binomial and Poisson (plus the inversion regimes of the last two),
on identical parameters: the daskcl kernel alone (variates left on the device, OpenCL event
timing), daskcl end to end (``daskcl.nmath.r<name>(n, ...)``, NumPy out), NumPy's ``Generator``
(PCG64, one CPU thread) and, where CuPy is importable (the GPU machine),
``cupy.random.default_rng`` kernel alone (CUDA events) and end to end (``cp.asnumpy``).
Rates are variates per second; ratios > 1 mean daskcl is faster.

daskcl's variates are counter-based (Philox4x32-10, one stream per element) with exact methods
and device-independent bits (cl/nmath/rng_math.cl); CuPy's default is XORWOW.  The two are not
the same computation, so the ratio is a throughput comparison, not a like-for-like kernel race.

Run:  python benchmarks/bench_random.py [--n 16777216] [--numpy-n 4194304] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time, table, write


@dataclass
class Case:
    label: str
    rfun: str                                   # daskcl.nmath name
    params: tuple[float, ...]                   # Rmath.h parameters
    numpy: Callable[[np.random.Generator, int], Any]
    cupy: Callable[[Any, int], Any]              # called with a cupy Generator
    mean: float                                 # for a sanity check of every result


CASES = [
    Case("normal(0, 1)", "rnorm", (0.0, 1.0),
         lambda g, n: g.standard_normal(n), lambda g, n: g.standard_normal(n), 0.0),
    Case("gamma(2.5, 1)", "rgamma", (2.5, 1.0),
         lambda g, n: g.gamma(2.5, 1.0, n), lambda g, n: g.gamma(2.5, 1.0, n), 2.5),
    Case("gamma(0.5, 1)", "rgamma", (0.5, 1.0),
         lambda g, n: g.gamma(0.5, 1.0, n), lambda g, n: g.gamma(0.5, 1.0, n), 0.5),
    Case("beta(2, 3)", "rbeta", (2.0, 3.0),
         lambda g, n: g.beta(2.0, 3.0, n), lambda g, n: g.beta(2.0, 3.0, n), 0.4),
    Case("beta(0.5, 0.5)", "rbeta", (0.5, 0.5),
         lambda g, n: g.beta(0.5, 0.5, n), lambda g, n: g.beta(0.5, 0.5, n), 0.5),
    Case("binomial(100, 0.3)", "rbinom", (100.0, 0.3),
         lambda g, n: g.binomial(100, 0.3, n), lambda g, n: g.binomial(100, 0.3, n), 30.0),
    Case("binomial(20, 0.2)", "rbinom", (20.0, 0.2),
         lambda g, n: g.binomial(20, 0.2, n), lambda g, n: g.binomial(20, 0.2, n), 4.0),
    Case("poisson(25)", "rpois", (25.0,),
         lambda g, n: g.poisson(25.0, n), lambda g, n: g.poisson(25.0, n), 25.0),
    Case("poisson(3.5)", "rpois", (3.5,),
         lambda g, n: g.poisson(3.5, n), lambda g, n: g.poisson(3.5, n), 3.5),
]


def daskcl_kernel_time(case: Case, n: int, repeat: int = 7) -> float:
    """Seconds per kernel, variates left on the device (median of OpenCL event times)."""
    import pyopencl as cl
    import pyopencl.array as cla

    from daskcl import nmath
    from daskcl.runtime import device

    kernel = getattr(nmath, case.rfun)
    bound = device.current()
    values = [float(v) for v in case.params]
    out = cla.empty(bound.queue, (n,), np.float64)
    times = []
    for k in range(repeat + 2):
        call = kernel.prepare(values, (), (n,), (1000 + k, 0, None))
        status = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                           hostbuf=np.zeros(2, dtype=np.int32))
        evs = kernel.enqueue(call, [out], status)
        evs[-1].wait()
        times.append((evs[-1].profile.end - evs[0].profile.start) * 1e-9)
        status.release()
    return float(np.median(times[2:]))


def cupy_times(case: Case, n: int) -> tuple[float, float] | str:
    """(kernel seconds, end-to-end seconds) of CuPy, or why there are none."""
    try:
        import cupy as cp
    except ImportError:
        return "cupy not importable"
    g = cp.random.default_rng(20260101)
    try:
        case.cupy(g, 16)
    except (AttributeError, NotImplementedError, TypeError) as exc:
        return f"cupy: {type(exc).__name__}: {exc}"
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(9):
        start.record()
        x = case.cupy(g, n)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        del x
    kernel = float(np.median(times[2:]))
    e2e = median_time(lambda: cp.asnumpy(case.cupy(g, n)), repeat=5)
    return kernel, e2e


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1 << 24, help="variates per call")
    ap.add_argument("--numpy-n", type=int, default=None,
                    help="variates for the (single-threaded) NumPy timing; default min(n, 2^22)")
    ap.add_argument("--cases", default=None,
                    help="comma-separated labels' distribution names to run (default: all)")
    ap.add_argument("--out")
    args = ap.parse_args()
    n = args.n
    numpy_n = args.numpy_n or min(n, 1 << 22)

    from daskcl import nmath

    cases = CASES if not args.cases else [
        c for c in CASES if any(c.label.startswith(s) for s in args.cases.split(","))]
    rows = []
    for case in cases:
        fn = getattr(nmath, case.rfun)
        x = fn(n, *case.params, seed=7)               # build (cached), warm, and check
        sd = float(np.std(x))
        sane = abs(float(np.mean(x)) - case.mean) < 6 * sd / np.sqrt(n) + 1e-12
        k = daskcl_kernel_time(case, n)
        e2e = median_time(lambda fn=fn, case=case: fn(n, *case.params, seed=11), repeat=5)
        g = np.random.default_rng(20260101)
        npt = median_time(lambda g=g, case=case: case.numpy(g, numpy_n), repeat=3, warmup=1)
        np_rate = numpy_n / npt
        row: dict[str, Any] = {
            "case": case.label, "r_function": case.rfun, "params": list(case.params), "n": n,
            "mean_sane": bool(sane),
            "daskcl_kernel_Gvar_s": n / k / 1e9, "daskcl_e2e_Gvar_s": n / e2e / 1e9,
            "numpy_Gvar_s": np_rate / 1e9, "numpy_n": numpy_n,
            "kernel_vs_numpy": (n / k) / np_rate, "e2e_vs_numpy": (n / e2e) / np_rate,
        }
        cu = cupy_times(case, n)
        if isinstance(cu, str):
            row["cupy"] = cu
        else:
            ck, ce = cu
            row.update({"cupy": "cupy.random.default_rng (XORWOW)",
                        "cupy_kernel_Gvar_s": n / ck / 1e9, "cupy_e2e_Gvar_s": n / ce / 1e9,
                        "kernel_vs_cupy": ck / k, "e2e_vs_cupy": ce / e2e})
        rows.append(row)
        print(f"{case.label}: kernel {n / k / 1e9:.3f} Gvar/s, e2e {n / e2e / 1e9:.3f} Gvar/s, "
              f"numpy {np_rate / 1e9:.3f} Gvar/s", flush=True)
    info = machine()
    cols = ["case", "daskcl_kernel_Gvar_s", "daskcl_e2e_Gvar_s", "numpy_Gvar_s",
            "kernel_vs_numpy", "e2e_vs_numpy"]
    if any("cupy_kernel_Gvar_s" in r for r in rows):
        cols += ["cupy_kernel_Gvar_s", "cupy_e2e_Gvar_s", "kernel_vs_cupy", "e2e_vs_cupy"]
    else:
        print(f"no CuPy timings: {rows[0].get('cupy') if rows else ''}")
    print(f"device: {info['device']} ({info['device_type']}), n = {n}, NumPy n = {numpy_n}")
    print(table(rows, cols))
    path = write(f"random-{info['device_type'].lower()}", {"machine": info, "results": rows},
                 args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
