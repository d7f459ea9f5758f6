# SPDX-License-Identifier: GPL-2.0-or-later
"""Where a cheap kernel's time goes: the elementwise template with operations of known cost,
beside pnorm, qnorm and dnorm and CuPy's ndtr, in one run on the same device array.

Each row is an ``ElementwiseKernel`` of one double input and one output over ``--n`` elements
of N(0, 3) (pnorm's inputs in ``bench_nmath.py``), timed alone with OpenCL events (median of
10 after 2 warm-ups): ``copy`` (the template reading and writing, the memory bound), one
division, one ``exp``, two, a Horner loop of 16 operations, the same with each coefficient
chosen by a select on a range (as pnorm's and qnorm's single rational function does), then the
library's ``pnorm_both``, ``pnorm5``, ``qnorm5`` and ``dnorm4``; the device's ``erfc`` (of
x and of |x|), and ``sl_shape``: the operations of an erfc in one piece after Shepherd and
Laframboise (1981), ``(1 + 2x) exp(x^2) erfc(x)`` as one polynomial of ``(x - K) / (x + K)``
(two divisions, 26 Horner steps, one ``exp``; dummy coefficients, its cost only).  CuPy's
``ndtr``, ``erfc`` and an ``exp`` expression are timed with CUDA events on the same values.
The differences between rows say what each part costs (benchmarks/README.md, "Cheap kernels").

Run:  python benchmarks/bench_cheap.py [--n 33554432] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report

VARIANTS = {
    "copy": "y = x;",
    "one_div": "y = 1.0 / x;",
    "one_exp": "y = exp(-0.5 * x * x);",
    "two_exp": "y = exp(-0.5 * x * x) * exp(x * 0.001);",
    "horner16": "double s = 0.; for (int k = 0; k < 8; k++) { s = (s + 0.1 * k) * x; } y = s;",
    "horner16_select": "int r = fabs(x) < 0.67 ? 0 : fabs(x) < 5.6 ? 1 : 2; double s = 0.; "
                       "for (int k = 0; k < 8; k++) "
                       "{ s = (s + (r == 0 ? 0.1 * k : r == 1 ? 0.2 * k : 0.3 * k)) * x; } y = s;",
    "pnorm_both": "double c, cc; pnorm_both(x, &c, &cc, 0, 0); y = c;",
    "pnorm5": "y = pnorm5(x, 0., 1., 1, 0);",
    "qnorm5": "y = qnorm5(x > 0 ? 1.0 / (1.0 + x) : 0.5, 0., 1., 1, 0);",
    "dnorm4": "y = dnorm4(x, 0., 1., 0);",
    "erfc": "y = erfc(x);",
    "erfc_abs": "y = erfc(fabs(x));",
    "sl_shape": "double a = fabs(x); double t = (a - 2.5) / (a + 2.5); double s = 0.; "
                "for (int k = 0; k < 26; k++) { s = s * t + 0.01 * k; } "
                "double h = a * a; y = s / (1. + a) * exp(-0.5 * h) * (1. - 0.5 * fma(a, a, -h));",
}


def kernel_time(kernel: Any, x: Any, status: Any, queue: Any) -> tuple[float, Any]:
    """Seconds of one launch of the one-input ``kernel`` on the device array ``x`` (OpenCL
    events, median of 10 after 2 warm-ups), and its output (a device array)."""
    import pyopencl.array as cla

    call = kernel.prepare([x])
    out = cla.empty(queue, call.shape, np.float64)
    times = []
    for _ in range(12):
        evs = kernel.enqueue(call, [out], status)
        evs[-1].wait()
        times.append((evs[-1].profile.end - evs[0].profile.start) * 1e-9)
    return float(np.median(times[2:])), out


def cupy_times(cases: Any) -> dict[str, float]:
    """Seconds of each ``(name, f, values)`` of ``cases`` (a function of ``cupy`` and
    ``cupyx.scipy.special``, giving a CuPy function) on ``values`` moved to the GPU, by CUDA
    events (median of 10 after 2 warm-ups); ``{}`` without CuPy."""
    try:
        import cupy as cp
        import cupyx.scipy.special as cs
    except ImportError:
        return {}
    out = {}
    for name, f, values in cases(cp, cs):
        xc = cp.asarray(values)
        f(xc)
        cp.cuda.Device().synchronize()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(12):
            start.record()
            f(xc)
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        out[name] = float(np.median(times[2:]))
    return out


def run(n: int) -> list[dict[str, object]]:
    import pyopencl as cl
    import pyopencl.array as cla

    import daskcl
    from daskcl.runtime import device

    bound = device.current()
    q = bound.queue
    values = np.random.default_rng(0).normal(0, 3, n)
    x = cla.to_device(q, values)
    status = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 8)
    cl.enqueue_fill_buffer(q, status, np.int32(0), 0, 8)
    times = {name: kernel_time(daskcl.ElementwiseKernel("double x", "double y", op,
                                                        name=f"cheap_{name}"), x, status, q)[0]
             for name, op in VARIANTS.items()}
    times.update(cupy_times(lambda cp, cs: [
        ("cupy_ndtr", cs.ndtr, values), ("cupy_exp", lambda a: cp.exp(-0.5 * a * a), values),
        ("cupy_erfc", cs.erfc, values)]))
    base = times["copy"]
    return [{"kernel": k, "ms": t * 1e3, "Gel_s": n / t * 1e-9, "over_copy_ms": (t - base) * 1e3}
            for k, t in times.items()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 25)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    report("cheap", run(args.n), ["kernel", "ms", "Gel_s", "over_copy_ms"], args.out,
           key="rows", n=args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
