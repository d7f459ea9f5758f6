# SPDX-License-Identifier: GPL-2.0-or-later
"""A call's own cost: daskcl against scipy.stats (and CuPy where importable) in the same run.

A user who calls ``daskcl.nmath`` on short vectors in a loop (R's habit), an optimiser calling
``f2_f3`` once a step, a dask graph of small chunks: each pays a call's fixed cost.  For each
function and size (1, 2^10, 2^16 and 2^20 elements by default), the median microseconds of one
call, from NumPy (NumPy in, NumPy out) and on device arrays (``pyopencl.array.Array`` in and
out, timed with a ``finish`` of the queue), against scipy.stats on the host (one CPU thread)
and, where CuPy imports, CuPy's ``asarray -> f -> asnumpy`` and its kernels on device arrays
(``cupyx.scipy.special``, timed with a synchronize).  ``calls`` is the Python function calls
(C functions included) of one daskcl call, counted with ``sys.setprofile``; ``x_scipy`` and
``x_cupy`` are daskcl's time over theirs (below 1: daskcl faster); ``rel_diff`` the largest
relative difference from scipy's values (a check that both computed the same thing).  On
device arrays ``floor_us`` is pyopencl's own floor: a result allocated from a memory pool and
one launch of a kernel with its arguments set beforehand that copies the first input, with
the same ``finish``; ``x_floor`` is daskcl's time over it.

Run:  python3 benchmarks/bench_small.py [--n 1,1024,65536,1048576] [--functions pnorm,...]
      [--out FILE.json]
(on a GPU: DASKCL_DEVICE=NVIDIA python3 benchmarks/bench_small.py; CuPy is used where it
imports and finds a GPU; sorted launches, binning, are the GPU default)
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

#: seconds of calls per measurement at most (at least 5 calls)
BUDGET = 1.0


def _inputs(name: str, r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    if name == "pnorm":
        return (r.normal(0, 3, n),)
    if name == "qnorm":
        return (r.uniform(0.001, 0.999, n),)
    if name == "pgamma":
        return r.gamma(2.0, 2.0, n), r.uniform(0.5, 20, n)
    if name == "pbeta":
        return r.uniform(0, 1, n), r.uniform(0.5, 20, n), r.uniform(0.5, 20, n)
    if name == "qbeta":
        return r.uniform(0.001, 0.999, n), r.uniform(0.5, 20, n), r.uniform(0.5, 20, n)
    raise KeyError(name)


def _functions() -> dict[str, tuple[Callable[..., Any], Callable[..., Any], str]]:
    """daskcl's function, scipy.stats', and the name of CuPy's (cupyx.scipy.special)."""
    import scipy.stats as st

    from daskcl import nmath

    return {
        "pnorm": (nmath.pnorm, st.norm.cdf, "ndtr"),
        "qnorm": (nmath.qnorm, st.norm.ppf, "ndtri"),
        "pgamma": (nmath.pgamma, lambda x, a: st.gamma.cdf(x, a), "gammainc"),
        "pbeta": (nmath.pbeta, st.beta.cdf, "betainc"),
        "qbeta": (nmath.qbeta, st.beta.ppf, "betaincinv"),
    }


def _cupy_args(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """cupyx.scipy.special's order: gammainc(a, x), betainc(a, b, x), betaincinv(a, b, p)."""
    if name == "pgamma":
        return args[1], args[0]
    if name in ("pbeta", "qbeta"):
        return args[1], args[2], args[0]
    return args


def per_call(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of one call of ``fn`` over up to ``repeat`` calls (at least 5) within
    :data:`BUDGET` seconds, after one call."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeat and (len(times) < 5 or time.perf_counter() - start < BUDGET):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def python_calls(fn: Callable[[], Any], calls: int = 20) -> float:
    """Python function calls (and C function calls) per call of ``fn``."""
    fn()
    count = [0]

    def seen(frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(seen)
    try:
        for _ in range(calls):
            fn()
    finally:
        sys.setprofile(None)
    return count[0] / calls - 1       # less the setprofile(None) call itself, once


def _cupy() -> tuple[Any, Any] | None:
    try:
        import cupy as cp
        import cupyx.scipy.special as csp

        cp.zeros(1).sum()
    except Exception:   # no CuPy, or no GPU for it
        return None
    return cp, csp


def floor(queue: Any, x: Any, repeat: int) -> float:
    """Median seconds of pyopencl's own floor of a call on the device array ``x`` (see the
    module)."""
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.tools as clt

    prg = cl.Program(queue.context, """__kernel void copy(__global const double *x,
        __global double *y, const long n) { long i = get_global_id(0); if (i < n) y[i] = x[i]; }
        """).build()
    kernel = cl.Kernel(prg, "copy")
    pool = clt.MemoryPool(clt.ImmediateAllocator(queue))
    n = x.size

    def once() -> None:
        y = cla.empty(queue, x.shape, np.float64, allocator=pool)
        kernel.set_args(x.base_data, y.base_data, np.int64(n))
        cl.enqueue_nd_range_kernel(queue, kernel, (n,), None)
        queue.finish()

    return per_call(once, repeat)


def _row(fn: str, n: int, path: str, ours: float, calls: float, scipy_s: float | None,
         cupy_s: float | None, rel: float | None, floor_s: float | None = None
         ) -> dict[str, Any]:
    row: dict[str, Any] = {"function": fn, "n": n, "path": path, "daskcl_us": ours * 1e6,
                           "calls": calls}
    if floor_s is not None:
        row["floor_us"] = floor_s * 1e6
        row["x_floor"] = ours / floor_s
    if scipy_s is not None:
        row["scipy_us"] = scipy_s * 1e6
        row["x_scipy"] = ours / scipy_s
    if cupy_s is not None:
        row["cupy_us"] = cupy_s * 1e6
        row["x_cupy"] = ours / cupy_s
    if rel is not None:
        row["rel_diff"] = rel
    return row


def _rel(got: Any, want: Any) -> float:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))


def run_functions(names: list[str], sizes: list[int], repeat: int) -> list[dict[str, Any]]:
    from daskcl.runtime import device

    queue = device.current().queue
    cupy = _cupy()
    rows = []
    for name in names:
        for n in sizes:
            for row in _one(name, n, repeat, queue, cupy):
                print(table([row], list(row)), flush=True)
                rows.append(row)
    return rows


def _one(name: str, n: int, repeat: int, queue: Any, cupy: tuple[Any, Any] | None
         ) -> list[dict[str, Any]]:
    """The rows of one function at one size: from NumPy, and on device arrays."""
    import pyopencl.array as cla

    ours, theirs, cname = _functions()[name]
    args: tuple[Any, ...] = _inputs(name, np.random.default_rng(5), n)
    if n == 1:
        args = tuple(float(a[0]) for a in args)      # Python scalars: a scalar call
    call_args = tuple(np.asarray(a) for a in args)
    cupy_np = cupy_dev = None
    if cupy is not None:
        cp, csp = cupy
        cf = getattr(csp, cname)
        cargs = _cupy_args(name, args)
        cupy_np = per_call(lambda: cp.asnumpy(cf(*[cp.asarray(a) for a in cargs])), repeat)
        on_gpu = [cp.asarray(a) for a in cargs]
        cupy_dev = per_call(lambda: (cf(*on_gpu), cp.cuda.Device().synchronize()), repeat)
    rel = _rel(ours(*args), theirs(*call_args))
    dev = [cla.to_device(queue, np.atleast_1d(np.asarray(a, dtype=np.float64))) for a in args]
    return [
        _row(name, n, "numpy", per_call(lambda: ours(*args), repeat),
             python_calls(lambda: ours(*args)), per_call(lambda: theirs(*call_args), repeat),
             cupy_np, rel),
        _row(name, n, "device", per_call(lambda: (ours(*dev), queue.finish()), repeat),
             python_calls(lambda: ours(*dev)), None, cupy_dev, None,
             floor(queue, dev[0], repeat)),
    ]


def run_f2_f3(repeat: int, m1: int = 16, l1: int = 50, l2: int = 3) -> list[dict[str, Any]]:
    """f2_f3 of a binomial logit model at a small grid (``m1`` rows of ``l2`` coefficients,
    ``l1`` observations), against the same mathematics in NumPy and scipy.special."""
    import scipy.special as special
    from bench_glm import array_f2_f3

    from daskcl.glm import Posterior, f2_f3

    r = np.random.default_rng(7)
    x = r.normal(0, 1, (l1, l2))
    wt = r.integers(1, 21, l1).astype(np.float64)
    y = r.binomial(wt.astype(int), 0.4) / wt
    alpha = r.normal(0, 0.2, l1)
    mu, P = np.zeros(l2), np.eye(l2) * 0.5
    b = r.normal(0, 1.0, (m1, l2))
    data = dict(y=y, x=x, mu=mu, P=P, alpha=alpha, wt=wt)

    def ours() -> Any:
        return f2_f3("binomial", "logit", b, **data)

    def theirs() -> Any:
        return array_f2_f3(np, special, "binomial", "logit", b, **data)

    post = Posterior("binomial", "logit", **data)

    def held() -> Any:         # an optimiser's step: the data checked and uploaded once
        return post.f2_f3(b)

    rel = max(_rel(g, w) for g, w in zip(ours(), theirs()))
    return [_row(f"f2_f3 {m1}x{l2} ({l1} obs)", m1, "numpy", per_call(ours, repeat),
                 python_calls(ours), per_call(theirs, repeat), None, rel),
            _row(f"Posterior.f2_f3 {m1}x{l2}", m1, "numpy", per_call(held, repeat),
                 python_calls(held), per_call(theirs, repeat), None, rel)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="1,1024,65536,1048576")
    ap.add_argument("--functions", default="pnorm,qnorm,pgamma,pbeta,qbeta")
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    from daskcl.runtime import device

    sizes = [int(x) for x in args.n.split(",")]
    rows = run_functions(args.functions.split(","), sizes, args.repeat)
    rows += run_f2_f3(args.repeat)
    cols = ["function", "n", "path", "daskcl_us", "calls", "scipy_us", "x_scipy", "cupy_us",
            "x_cupy", "floor_us", "x_floor"]
    print()
    print(table(rows, [c for c in cols if any(c in r for r in rows)]))
    res = {"machine": machine(), "device": device.current().info.describe(),
           "repeat": args.repeat, "budget_s": BUDGET, "rows": rows}
    if args.out:
        print(write("small", res, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
