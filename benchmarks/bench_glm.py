# SPDX-License-Identifier: GPL-2.0-or-later
"""Throughput of daskcl.glm.f2_f3 (GLM log-posterior and gradient over grids) against its peers.

For each case (family/link, l1 observations, l2 coefficients, m1 grid points), on identical
inputs, in grid points per second:

* daskcl, kernel alone: data, grid and outputs already on the device, OpenCL event timing;
* daskcl, end to end: ``Posterior.f2_f3(b)``, NumPy in, NumPy out;
* CuPy, where importable (the GPU machine): the same mathematics as CuPy array code, as a user
  would write it -- ``eta = b @ x.T + alpha`` (cuBLAS), elementwise likelihood terms, row sums,
  ``g @ x`` -- timed with CUDA events (device-resident inputs and outputs);
* NumPy on the CPU, the same code, rows split over all cores (threads; numpy releases the GIL),
  timed on ``--numpy-m1`` points and reported per point.

Plus the fraction of the device's fp64 peak that daskcl reaches, counting the 4 l1 l2 flops per
point of the two matrix-vector products (the transcendental work is not counted): against the
peak measured here by an FMA kernel, and against the nominal peak where the device is known.
The results of daskcl and each peer are compared (max relative difference of qf, and of grad
relative to its magnitude).

The two cases of issue 6 are binomial/logit with (l1, l2, m1) = (300, 16, 200000) and
(1000, 32, 100000); on a GPU the launch configuration is also swept there (``--sweep``) and
every configuration is recorded.  On a CPU device m1 is scaled by ``--scale`` (default 0.01).

Run:  python benchmarks/bench_glm.py [--cases main|all|NAME,...] [--sweep/--no-sweep]
                                     [--scale S] [--numpy-m1 N] [--repeat R] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import machine, median_time, table, write


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    link: str
    l1: int
    l2: int
    m1: int
    factorial: bool = False      # b = the factorial grid 3^l2 (m1 ignored)


CASES = [
    Case("logit-300x16", "binomial", "logit", 300, 16, 200_000),
    Case("logit-1000x32", "binomial", "logit", 1000, 32, 100_000),
    Case("probit-300x16", "binomial", "probit", 300, 16, 200_000),
    Case("cloglog-300x16", "binomial", "cloglog", 300, 16, 200_000),
    Case("poisson-300x16", "poisson", "log", 300, 16, 200_000),
    Case("Gamma-300x16", "Gamma", "log", 300, 16, 200_000),
    Case("gaussian-300x16", "gaussian", "identity", 300, 16, 200_000),
    Case("logit-300x12-factorial", "binomial", "logit", 300, 12, 3**12, factorial=True),
]
MAIN = ("logit-300x16", "logit-1000x32")

#: nominal fp64 peak (non-tensor, FMA = 2 flops), TFLOP/s, by a substring of the device name
NOMINAL_FP64_TFLOPS = {"H200": 34.0, "H100 PCIe": 25.6, "H100 NVL": 30.0, "H100": 34.0,
                       "A100": 9.7, "V100": 7.8}


# -- problems ---------------------------------------------------------------------------------


def make_problem(case: Case, m1: int, seed: int = 20261121) -> dict[str, Any]:
    """Random data typical of the family; b spread around the prior mean so that |eta| ~ 1."""
    rng = np.random.default_rng(seed)
    l1, l2 = case.l1, case.l2
    x = np.column_stack([np.ones(l1), rng.normal(size=(l1, l2 - 1))]) / np.sqrt(l2)
    alpha = rng.normal(0, 0.2, l1)
    if case.family == "binomial":
        wt = rng.integers(1, 21, l1).astype(np.float64)
        y = rng.binomial(wt.astype(int), 0.4) / wt
    elif case.family == "poisson":
        wt, y = np.ones(l1), rng.poisson(2.0, l1).astype(np.float64)
    elif case.family == "Gamma":
        wt, y = np.full(l1, 2.0), rng.gamma(2.0, 1.0, l1)
    else:
        wt, y = np.ones(l1), rng.normal(0, 1, l1)
    mu = np.zeros(l2)
    P = np.eye(l2) * 0.5
    if case.factorial:
        from daskcl.glm import FactorialGrid

        b: Any = FactorialGrid([np.array([-0.5, 0.0, 0.5])] * l2)
    else:
        b = rng.normal(0, 1.0, size=(m1, l2))
    return dict(b=b, y=y, x=x, mu=mu, P=P, alpha=alpha, wt=wt)


def array_f2_f3(xp: Any, sp: Any, family: str, link: str, b: Any, y: Any, x: Any, mu: Any,
                P: Any, alpha: Any, wt: Any) -> tuple[Any, Any]:
    """The mathematics of f2_f3's docstring as array code (NumPy or CuPy), as a user writes it."""
    eta = b @ x.T + alpha                                   # (m1, l1)
    if family == "binomial":
        n, s = xp.round(wt), xp.round(y * wt)
        lchoose = sp.gammaln(n + 1) - sp.gammaln(s + 1) - sp.gammaln(n - s + 1)
        if link == "logit":
            p = 1.0 / (1.0 + xp.exp(-eta))
            ll = lchoose + s * xp.log(p) + (n - s) * xp.log1p(-p)
            g = wt * (p - y)
        elif link == "probit":
            p, q = sp.ndtr(eta), sp.ndtr(-eta)
            phi = xp.exp(-0.5 * eta * eta) / math.sqrt(2 * math.pi)
            ll = lchoose + s * xp.log(p) + (n - s) * xp.log(q)
            g = -wt * (y * phi / p - (1 - y) * phi / q)
        else:
            m = xp.exp(eta)
            p, q = -xp.expm1(-m), xp.exp(-m)
            a = xp.exp(eta - m)
            ll = lchoose + s * xp.log(p) - (n - s) * m
            g = -wt * (y * a / p - (1 - y) * a / q)
    elif family == "poisson":
        m = xp.exp(eta)
        ll = -wt * (m - y * eta + sp.gammaln(y + 1))
        g = wt * (m - y)
    elif family == "Gamma":
        m = xp.exp(eta)
        ll = wt * xp.log(wt) - sp.gammaln(wt) + (wt - 1) * xp.log(y) - wt * y / m - wt * eta
        g = wt * (1 - y / m)
    else:
        r = eta - y
        ll = -0.5 * math.log(2 * math.pi) + 0.5 * xp.log(wt) - 0.5 * wt * r * r
        g = wt * r
    d = b - mu
    Pd = d @ P                                              # P symmetric
    qf = 0.5 * (d * Pd).sum(axis=1) - ll.sum(axis=1)
    grad = g @ x + Pd
    return qf, grad


def compare(qf: np.ndarray, grad: np.ndarray, qf_ref: np.ndarray, grad_ref: np.ndarray
            ) -> tuple[float, float]:
    """Max relative difference of qf; of grad relative to the largest |grad| of its row."""
    rq = float(np.max(np.abs(qf - qf_ref) / np.abs(qf_ref)))
    scale = np.abs(grad_ref).max(axis=1, keepdims=True)
    rg = float(np.max(np.abs(grad - grad_ref) / scale))
    return rq, rg


# -- daskcl -----------------------------------------------------------------------------------


def daskcl_kernel_time(post: Any, b: Any, tuning: Any, repeat: int) -> float:
    """Median kernel seconds for the whole grid (inputs and outputs on the device)."""
    import pyopencl as cl

    from daskcl.glm import FactorialGrid
    from daskcl.runtime import device

    bound = device.current()
    ctx, mf = bound.context, cl.mem_flags
    tun = post.resolve_tuning(tuning)
    m = len(b)
    if isinstance(b, FactorialGrid):
        v, d = b.descriptor()
        bsrc = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v)
        fdesc = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=d)
    else:
        bsrc = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(b))
        fdesc = None
    qbuf = cl.Buffer(ctx, mf.READ_WRITE, m * 8)
    gbuf = cl.Buffer(ctx, mf.READ_WRITE, m * post.l2 * 8)
    times = []
    for _ in range(repeat + 2):
        ev = post.enqueue(tun, fdesc is not None, m, 0, bsrc, fdesc, qbuf, gbuf)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return statistics.median(times[2:])


def fp64_peak(seconds: float = 0.2) -> float:
    """Measured fp64 FMA throughput of the bound device, flop/s (independent FMA chains)."""
    import pyopencl as cl

    from daskcl.runtime import device

    src = r"""
    #pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void peak(__global double *out, const int iters, const double a, const double c)
    {
        double x0 = get_global_id(0) * 1e-9, x1 = x0 + 0.1, x2 = x0 + 0.2, x3 = x0 + 0.3,
               x4 = x0 + 0.4, x5 = x0 + 0.5, x6 = x0 + 0.6, x7 = x0 + 0.7;
        for (int i = 0; i < iters; i++) {
            x0 = fma(x0, a, c); x1 = fma(x1, a, c); x2 = fma(x2, a, c); x3 = fma(x3, a, c);
            x4 = fma(x4, a, c); x5 = fma(x5, a, c); x6 = fma(x6, a, c); x7 = fma(x7, a, c);
        }
        out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    }
    """
    bound = device.current()
    prg = cl.Program(bound.context, src).build()
    n = max(bound.info.compute_units, 1) * (2048 if bound.info.type == "GPU" else 64)
    out = cl.Buffer(bound.context, cl.mem_flags.WRITE_ONLY, n * 8)
    iters = 256
    best = 0.0
    for _ in range(12):
        ev = prg.peak(bound.queue, (n,), None, out, np.int32(iters), np.float64(0.999999),
                      np.float64(1e-7))
        ev.wait()
        t = (ev.profile.end - ev.profile.start) * 1e-9
        best = max(best, 16.0 * iters * n / t)
        if t < seconds / 4:
            iters *= 2
    return best


def nominal_peak(name: str) -> float | None:
    for key, tf in NOMINAL_FP64_TFLOPS.items():
        if key in name:
            return tf * 1e12
    return None


# -- peers ------------------------------------------------------------------------------------


def cupy_run(case: Case, prob: dict[str, Any], repeat: int) -> tuple[float, np.ndarray, np.ndarray]:
    import cupy as cp
    import cupyx.scipy.special as csp

    b = np.asarray(prob["b"])
    dev = {k: cp.asarray(np.asarray(v)) for k, v in prob.items() if k != "b"}
    db = cp.asarray(b)

    def run() -> tuple[Any, Any]:
        return array_f2_f3(cp, csp, case.family, case.link, db, dev["y"], dev["x"], dev["mu"],
                           dev["P"], dev["alpha"], dev["wt"])

    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat + 2):
        start.record()
        qf, grad = run()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    qf, grad = run()
    return statistics.median(times[2:]), cp.asnumpy(qf), cp.asnumpy(grad)


def numpy_run(case: Case, prob: dict[str, Any], m: int, repeat: int
              ) -> tuple[float, np.ndarray, np.ndarray]:
    """NumPy on all cores: the rows of b split over threads."""
    from scipy import special

    b = np.asarray(prob["b"][:m])           # a FactorialGrid slice materialises
    rest = {k: v for k, v in prob.items() if k != "b"}
    nthreads = os.cpu_count() or 1
    parts = np.array_split(b, nthreads)

    def one(part: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return array_f2_f3(np, special, case.family, case.link, part, **rest)

    with ThreadPoolExecutor(nthreads) as pool:
        def run() -> list[tuple[np.ndarray, np.ndarray]]:
            return list(pool.map(one, parts))

        t = median_time(run, repeat=repeat, warmup=1)
        res = run()
    return t, np.concatenate([r[0] for r in res]), np.concatenate([r[1] for r in res])


# -- main -------------------------------------------------------------------------------------


def sweep_tunings() -> list[Any]:
    from daskcl.glm import Tuning

    out = [Tuning(path="tile", work_group=wg, tile_rows=tile, mma=1) for wg, tile in
           ((256, 16), (256, 8), (128, 16), (128, 8), (128, 32), (64, 16))]
    out += [Tuning(path="tile", work_group=128, points_per_group=64, tile_rows=tile, mma=0)
            for tile in (32, 16)]
    out += [Tuning(path="item", work_group=wg, points_per_item=1, rows_unrolled=1)
            for wg in (64, 128)]
    out.append(Tuning(path="group", work_group=128))
    return out


#: a stand-in for the family's term (two flops), to time the products alone (``--split``)
TRIVIAL_TERM = """
static inline void f2f3_term_trivial(const double eta, const double *o, double *l, double *g)
{
    *l = eta * o[1];
    *g = eta - o[1];
}
#define f2f3_term f2f3_term_trivial
"""


def products_only_time(post: Any, b: Any, tuning: Any, repeat: int) -> float:
    """Kernel seconds with the family's term replaced by TRIVIAL_TERM: the cost of the products
    and the launch scheme alone (a diagnostic; its outputs are meaningless)."""
    from daskcl.glm import Posterior
    from daskcl.runtime.library import ProgramSource

    class ProductsOnly(Posterior):
        """The posterior's kernels with TRIVIAL_TERM defined just before the driver."""

        def source(self) -> ProgramSource:
            src = super().source()
            cut = src.text.index(f"// ==== {src.files[-1]} ====")   # the driver, appended last
            return ProgramSource(src.text[:cut] + TRIVIAL_TERM + src.text[cut:], src.files)

    trivial = ProductsOnly(post.family, post.link, post.y, post.x, post.mu, post.P, post.alpha,
                           post.wt)
    return daskcl_kernel_time(trivial, b, tuning, repeat)


def nv_registers(post: Any, tuning: Any, fact: bool) -> str | None:
    """Registers and spills of the kernel as NVIDIA's compiler reports them (-cl-nv-verbose)."""
    import pyopencl as cl

    from daskcl.runtime import device, program

    bound = device.current()
    if "cl_nv_compiler_options" not in bound.device.extensions:
        return None
    opts = [*post.build_options(tuning, fact), *program.default_options(bound.info.type),
            "-cl-nv-verbose"]
    prg = cl.Program(bound.context, post.source().text).build(options=opts)
    log = prg.get_build_info(bound.device, cl.program_build_info.LOG)
    name = f"f2_f3_{tuning.path}"
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if f"'{name}'" in line:
            used = [ln.strip() for ln in lines[i:i + 4] if "registers" in ln or "spill" in ln]
            if used:
                return " | ".join(used)
    return None


def run_case(case: Case, args: argparse.Namespace, gpu: bool, peak: float, nominal: float | None
             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from daskcl.glm import Posterior

    m1 = case.m1 if gpu or case.factorial else max(1000, int(case.m1 * args.scale))
    prob = make_problem(case, m1)
    b = prob["b"]
    if case.factorial and not gpu:
        b = b[: max(1000, int(len(b) * args.scale))]
    m1 = len(b)
    post = Posterior(case.family, case.link, prob["y"], prob["x"], prob["mu"], prob["P"],
                     prob["alpha"], prob["wt"])
    t0 = time.perf_counter()
    qf, grad = post.f2_f3(b)                     # builds (or loads) the program, and warms up
    first = time.perf_counter() - t0
    tun = post.resolve_tuning()
    k = daskcl_kernel_time(post, b, None, args.repeat)
    e2e = median_time(lambda: post.f2_f3(b), repeat=max(3, args.repeat // 2), warmup=1)
    flops = 4.0 * case.l1 * case.l2
    row: dict[str, Any] = {
        "case": case.name, "family": f"{case.family}/{case.link}", "l1": case.l1, "l2": case.l2,
        "m1": m1, "factorial": case.factorial,
        "tuning": (f"{tun.path} wg={tun.work_group} pb={tun.points_per_group} "
                   f"tile={tun.tile_rows} mma={tun.mma}"
                   if tun.path == "tile"
                   else f"{tun.path} wg={tun.work_group} ppw={tun.points_per_item} "
                   f"ru={tun.rows_unrolled} tile={tun.tile_rows}"),
        "first_call_s": first,
        "daskcl_kernel_s": k, "daskcl_kernel_Mpts_s": m1 / k / 1e6,
        "daskcl_e2e_Mpts_s": m1 / e2e / 1e6,
        "useful_GFLOP_s": flops * m1 / k / 1e9,
        "frac_measured_peak": flops * m1 / k / peak,
    }
    if nominal:
        row["frac_nominal_peak"] = flops * m1 / k / nominal
    # NumPy on the CPU
    if not args.no_numpy:
        mn = min(m1, args.numpy_m1)
        tn, qn, gn = numpy_run(case, {**prob, "b": b}, mn, max(1, args.repeat // 3))
        row["numpy_Mpts_s"] = mn / tn / 1e6
        row["kernel_vs_numpy"] = (m1 / k) / (mn / tn)
        row["numpy_qf_rel"], row["numpy_grad_rel"] = compare(qf[:mn], grad[:mn], qn, gn)
    # CuPy
    if not args.no_cupy:
        try:
            import cupy as cp
        except ImportError:
            pass
        else:
            tc, qc, gc = cupy_run(case, {**prob, "b": b}, args.repeat)
            cp.get_default_memory_pool().free_all_blocks()
            row["cupy_Mpts_s"] = m1 / tc / 1e6
            row["kernel_vs_cupy"] = tc / k
            row["e2e_vs_cupy"] = tc / e2e
            row["cupy_qf_rel"], row["cupy_grad_rel"] = compare(qf, grad, qc, gc)
    sweep: list[dict[str, Any]] = []
    if args.sweep and case.name in MAIN and not case.factorial:
        for t in sweep_tunings():
            try:
                ks = daskcl_kernel_time(post, b, t, args.repeat)
            except Exception as exc:  # a configuration the device refuses is recorded, not fatal
                sweep.append({"case": case.name, **asdict(t), "error": f"{type(exc).__name__}: "
                              f"{str(exc)[:200]}"})
                continue
            r = post.resolve_tuning(t)
            entry = {"case": case.name, **asdict(r), "kernel_s": ks, "Mpts_s": m1 / ks / 1e6,
                     "frac_measured_peak": flops * m1 / ks / peak}
            try:
                regs = nv_registers(post, r, False)
            except Exception as exc:  # a diagnostic only
                regs = f"{type(exc).__name__}: {str(exc)[:100]}"
            if regs:
                entry["nv_registers"] = regs
            if args.split:
                kp = products_only_time(post, b, t, args.repeat)
                entry["products_only_Mpts_s"] = m1 / kp / 1e6
                entry["products_share"] = kp / ks
            if "cupy_Mpts_s" in row:
                entry["vs_cupy"] = (m1 / ks / 1e6) / row["cupy_Mpts_s"]
            sweep.append(entry)
            print(f"  sweep {case.name} {r.path} wg={r.work_group} pb={r.points_per_group} "
                  f"mma={r.mma} ppw={r.points_per_item} ru={r.rows_unrolled} "
                  f"tile={r.tile_rows}: {m1 / ks / 1e6:.4g} Mpts/s"
                  + (f" (products alone {entry['products_only_Mpts_s']:.4g})" if args.split else "")
                  + f"  {regs or ''}", flush=True)
    return row, sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="all",
                    help="'all', or a comma-separated list of 'main' (the two cases of issue 6) "
                         "and names: "
                         + ",".join(c.name for c in CASES))
    ap.add_argument("--sweep", action=argparse.BooleanOptionalAction, default=None,
                    help="sweep launch configurations on the main cases (default: on a GPU)")
    ap.add_argument("--split", action="store_true",
                    help="in the sweep, also time each configuration with a trivial likelihood "
                         "term (the products alone)")
    ap.add_argument("--scale", type=float, default=0.01,
                    help="m1 multiplier on a CPU device (default 0.01)")
    ap.add_argument("--numpy-m1", type=int, default=20_000,
                    help="grid points for the NumPy timing (rates are per point)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-numpy", action="store_true")
    ap.add_argument("--no-cupy", action="store_true")
    ap.add_argument("--out", help="JSON result file (default benchmarks/results/glm-<type>.json)")
    args = ap.parse_args()

    from daskcl.runtime import device

    bound = device.current()
    gpu = bound.info.type == "GPU"
    if args.sweep is None:
        args.sweep = gpu
    if args.cases == "main":
        cases = [c for c in CASES if c.name in MAIN]
    elif args.cases == "all":
        cases = CASES
    else:
        names = [n for part in args.cases.split(",")
                 for n in (MAIN if part == "main" else (part,))]
        unknown = set(names) - {c.name for c in CASES}
        if unknown:
            ap.error(f"unknown cases {sorted(unknown)}; known: {[c.name for c in CASES]}")
        cases = [c for c in CASES if c.name in names]
    peak = fp64_peak()
    nominal = nominal_peak(bound.info.name)
    print(f"device: {bound.info.describe()}; measured fp64 FMA peak {peak / 1e12:.2f} TFLOP/s"
          + (f", nominal {nominal / 1e12:.1f}" if nominal else ""), flush=True)
    rows, sweeps = [], []
    for case in cases:
        row, sweep = run_case(case, args, gpu, peak, nominal)
        rows.append(row)
        sweeps += sweep
        print(f"{case.name}: kernel {row['daskcl_kernel_Mpts_s']:.4g} Mpts/s"
              + (f", cupy {row['cupy_Mpts_s']:.4g} (x{row['kernel_vs_cupy']:.2f})"
                 if "cupy_Mpts_s" in row else "")
              + (f", numpy {row['numpy_Mpts_s']:.4g}" if "numpy_Mpts_s" in row else ""), flush=True)
    info = machine()
    info["fp64_measured_peak_TFLOP_s"] = peak / 1e12
    if nominal:
        info["fp64_nominal_peak_TFLOP_s"] = nominal / 1e12
    info["numpy_threads"] = os.cpu_count()
    cols = ["case", "m1", "daskcl_kernel_Mpts_s", "daskcl_e2e_Mpts_s", "useful_GFLOP_s",
            "frac_measured_peak"]
    if any("frac_nominal_peak" in r for r in rows):
        cols.append("frac_nominal_peak")
    if any("cupy_Mpts_s" in r for r in rows):
        cols += ["cupy_Mpts_s", "kernel_vs_cupy", "e2e_vs_cupy", "cupy_qf_rel", "cupy_grad_rel"]
    if any("numpy_Mpts_s" in r for r in rows):
        cols += ["numpy_Mpts_s", "kernel_vs_numpy", "numpy_qf_rel"]
    print(table(rows, cols))
    if sweeps:
        ok = [s for s in sweeps if "error" not in s]
        if ok:
            print(table(ok, ["case", "path", "work_group", "points_per_group", "mma",
                             "points_per_item", "rows_unrolled", "tile_rows", "Mpts_s",
                             "frac_measured_peak"] + (["vs_cupy"] if "vs_cupy" in ok[0] else [])))
    path = write(f"glm-{info['device_type'].lower()}",
                 {"machine": info, "results": rows, "sweep": sweeps}, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
