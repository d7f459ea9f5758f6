# SPDX-License-Identifier: GPL-2.0-or-later
"""Throughput of daskcl.nmath functions against their peers, side by side in one run.

For each function: the daskcl kernel alone (inputs already on the device, OpenCL event
timing), daskcl end to end (NumPy in, NumPy out), scipy.stats on the CPU (one thread), and,
where CuPy is installed (the GPU machine), CuPy's nearest equivalent, kernel alone (CUDA events)
and end to end.  Identical inputs for all.  The device's copy bandwidth is measured too, and
the fraction of it that each memory-bound kernel reaches (bytes: inputs read + output written).

Run:  python benchmarks/bench_nmath.py [--n 4194304] [--functions pnorm,qnorm,dbinom] [--out FILE]
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
class Spec:
    """A benchmarked function: inputs, the daskcl call, and its peers."""

    inputs: Callable[[np.random.Generator, int], tuple[np.ndarray, ...]]
    scipy: Callable[..., np.ndarray]
    cupy: Callable[..., Any] | None = None   # called with CuPy arrays
    cupy_name: str = ""
    jax: Callable[..., Any] | None = None    # called with JAX arrays
    jax_name: str = ""


def _binom_inputs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    size = rng.integers(1, 1000, n).astype(np.float64)
    return np.floor(rng.uniform(0, 1, n) * (size + 1)), size, rng.uniform(0, 1, n)


def _specs() -> dict[str, Spec]:
    import scipy.stats as st

    try:
        import cupyx.scipy.special as cs
    except ImportError:
        cs = None
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.scipy.special as js
        import jax.scipy.stats as jst
    except ImportError:
        js = jst = None

    def u(r: np.random.Generator, n: int) -> np.ndarray:   # shapes, degrees of freedom
        return r.uniform(0.1, 50, n)

    return {
        "pnorm": Spec(lambda r, n: (r.normal(0, 3, n),), st.norm.cdf,
                      cs.ndtr if cs else None, "cupyx ndtr",
                      jst.norm.cdf if jst else None, "jax norm.cdf"),
        "qnorm": Spec(lambda r, n: (r.uniform(0, 1, n),), st.norm.ppf,
                      cs.ndtri if cs else None, "cupyx ndtri",
                      js.ndtri if js else None, "jax ndtri"),
        "dnorm": Spec(lambda r, n: (r.normal(0, 3, n),), st.norm.pdf),
        # issue 3: parameters uniform on (0.1, 50), probabilities uniform on (0, 1)
        "pgamma": Spec(lambda r, n: (u(r, n), u(r, n)), lambda x, a: st.gamma.cdf(x, a),
                       (lambda x, a: cs.gammainc(a, x)) if cs else None, "cupyx gammainc",
                       (lambda x, a: js.gammainc(a, x)) if js else None, "jax gammainc"),
        "qgamma": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n)), lambda p, a: st.gamma.ppf(p, a),
                       (lambda p, a: cs.gammaincinv(a, p)) if cs else None, "cupyx gammaincinv"),
        "pbeta": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n), u(r, n)),
                      lambda x, a, b: st.beta.cdf(x, a, b),
                      (lambda x, a, b: cs.betainc(a, b, x)) if cs else None, "cupyx betainc",
                      (lambda x, a, b: js.betainc(a, b, x)) if js else None, "jax betainc"),
        "qbeta": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n), u(r, n)),
                      lambda p, a, b: st.beta.ppf(p, a, b),
                      (lambda p, a, b: cs.betaincinv(a, b, p)) if cs else None, "cupyx betaincinv"),
        "pchisq": Spec(lambda r, n: (u(r, n), u(r, n)), lambda x, k: st.chi2.cdf(x, k),
                       (lambda x, k: cs.chdtr(k, x)) if cs else None, "cupyx chdtr",
                       (lambda x, k: jst.chi2.cdf(x, k)) if jst else None, "jax chi2.cdf"),
        "pf": Spec(lambda r, n: (u(r, n), u(r, n), u(r, n)), lambda x, a, b: st.f.cdf(x, a, b),
                   (lambda x, a, b: cs.fdtr(a, b, x)) if cs else None, "cupyx fdtr"),
        # a light kernel (one exp, one log1p): how close the elementwise template gets to the
        # memory bandwidth; NumPy's logaddexp is the CPU peer
        "log1pexp": Spec(lambda r, n: (r.normal(0, 10, n),), lambda x: np.logaddexp(0.0, x)),
        "dbinom": Spec(_binom_inputs, st.binom.pmf),
        "dpois": Spec(lambda r, n: (np.floor(r.uniform(0, 100, n)), r.uniform(0.1, 100, n)),
                      st.poisson.pmf),
        "dgamma": Spec(lambda r, n: (r.uniform(0, 50, n), r.uniform(0.1, 50, n)),
                       lambda x, a: st.gamma.pdf(x, a)),
    }


def copy_bandwidth(nbytes: int = 1 << 28) -> float:
    """Device-to-device copy bandwidth in bytes/s, counting bytes read plus written."""
    import pyopencl as cl

    from daskcl import device

    bound = device.current()
    a = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, nbytes)
    b = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(bound.queue, a, np.float64(1.0), 0, nbytes)
    times = []
    for _ in range(10):
        ev = cl.enqueue_copy(bound.queue, b, a)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return 2 * nbytes / float(np.median(times[2:]))


def daskcl_kernel_time(name: str, args: tuple[np.ndarray, ...], repeat: int = 10) -> float:
    import pyopencl as cl

    from daskcl import device, nmath
    from daskcl._elementwise import prepare

    impl = getattr(nmath, name)._daskcl_impl
    bound = device.current()
    prep = prepare(impl.fn, args + tuple(impl.fn.defaults.get(a, 0.0)
                                         for a in impl.fn.arg_names[len(args):]))
    mf = cl.mem_flags
    bufs = [None if a is None else cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
            for a in prep.arrays]
    out = cl.Buffer(bound.context, mf.WRITE_ONLY, prep.size * 8)
    status = cl.Buffer(bound.context, mf.READ_WRITE, 8)
    cl.enqueue_fill_buffer(bound.queue, status, np.int32(0), 0, 8)
    flags = impl.fn.flag_defaults
    times = []
    for _ in range(repeat + 2):
        ev = impl.enqueue(prep, bufs, out, status, flags)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return float(np.median(times[2:]))


def cupy_times(fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> tuple[float, float]:
    import cupy as cp

    dargs = [cp.asarray(a) for a in args]
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(12):
        start.record()
        fn(*dargs)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    kernel = float(np.median(times[2:]))

    def e2e() -> None:
        cp.asnumpy(fn(*[cp.asarray(a) for a in args]))

    return kernel, median_time(e2e, repeat=5)


def jax_time(fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> float:
    """Kernel-only seconds of a jitted JAX function on device-resident inputs."""
    import jax

    f = jax.jit(fn)
    dargs = [jax.device_put(a) for a in args]
    f(*dargs).block_until_ready()
    return median_time(lambda: f(*dargs).block_until_ready(), repeat=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--scipy-n", type=int, default=1 << 20,
                    help="elements for the (slower) scipy timing; rates are per element")
    ap.add_argument("--functions", default="pnorm,qnorm,dbinom")
    ap.add_argument("--out")
    ap.add_argument("--contract", action="store_true",
                    help="build with DASKCL_FP_CONTRACT=1 (fma contraction allowed)")
    args = ap.parse_args()
    if args.contract:
        import os

        os.environ["DASKCL_FP_CONTRACT"] = "1"

    from daskcl import nmath

    specs = _specs()
    bw = copy_bandwidth()
    rng = np.random.default_rng(20261121)
    rows = []
    for name in args.functions.split(","):
        spec = specs[name]
        inp = spec.inputs(rng, args.n)
        fn = getattr(nmath, name)
        fn(*inp)  # build (cached) and warm
        k = daskcl_kernel_time(name, inp)
        e2e = median_time(lambda fn=fn, inp=inp: fn(*inp), repeat=5)
        small = tuple(a[: args.scipy_n] for a in inp)
        sp = median_time(lambda f=spec.scipy, a=small: f(*a), repeat=3, warmup=1) * args.n / args.scipy_n
        # agreement with scipy on the benchmark inputs (sanity, not the R oracle)
        ref = spec.scipy(*small)
        got = fn(*small)
        ok = np.isfinite(ref) & (np.abs(ref) > 1e-300)
        rel = float(np.max(np.abs(got[ok] - ref[ok]) / np.abs(ref[ok])))
        nbytes = 8 * (len(inp) + 1) * args.n
        row: dict[str, Any] = {
            "function": name, "n": args.n,
            "daskcl_kernel_Gel_s": args.n / k / 1e9, "daskcl_e2e_Gel_s": args.n / e2e / 1e9,
            "scipy_Gel_s": args.n / sp / 1e9,
            "kernel_vs_scipy": sp / k, "e2e_vs_scipy": sp / e2e,
            "bandwidth_fraction": nbytes / k / bw, "max_rel_diff_scipy": rel,
        }
        if spec.cupy is not None:
            ck, ce = cupy_times(spec.cupy, inp)
            row.update({"peer": spec.cupy_name, "cupy_kernel_Gel_s": args.n / ck / 1e9,
                        "cupy_e2e_Gel_s": args.n / ce / 1e9, "kernel_vs_cupy": ck / k,
                        "e2e_vs_cupy": ce / e2e})
            if spec.jax is not None and "cupy" in sys.modules:
                try:
                    jk = jax_time(spec.jax, inp)
                except Exception as exc:  # a JAX without GPU support, say
                    print(f"{name}: jax failed: {exc}", flush=True)
                else:
                    row.update({"jax_peer": spec.jax_name, "jax_kernel_Gel_s": args.n / jk / 1e9,
                                "kernel_vs_jax": jk / k})
        rows.append(row)
        print(f"{name}: kernel {args.n / k / 1e9:.3f} Gel/s, e2e {args.n / e2e / 1e9:.3f} Gel/s",
              flush=True)
    info = machine()
    info["copy_bandwidth_GB_s"] = bw / 1e9
    info["fp_contract"] = bool(args.contract)
    cols = ["function", "daskcl_kernel_Gel_s", "daskcl_e2e_Gel_s", "scipy_Gel_s", "kernel_vs_scipy",
            "e2e_vs_scipy", "bandwidth_fraction"]
    if any("peer" in r for r in rows):
        cols += ["cupy_kernel_Gel_s", "cupy_e2e_Gel_s", "kernel_vs_cupy", "e2e_vs_cupy"]
    if any("jax_peer" in r for r in rows):
        cols += ["kernel_vs_jax"]
    print(f"device: {info['device']}  copy bandwidth {bw / 1e9:.1f} GB/s")
    print(table(rows, cols))
    path = write(f"nmath-{info['device_type'].lower()}", {"machine": info, "results": rows}, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
