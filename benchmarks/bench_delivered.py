# SPDX-License-Identifier: GPL-2.0-or-later
"""What a user receives: daskcl end to end and device-resident, against CuPy, beside the
host's ceilings.

For each function and size, in one run on identical inputs:

- ``e2e_<mode>``: NumPy in, NumPy out, through daskcl's host path in each transfer mode
  (config keys ``transfer.mode`` and ``transfer.threads``: ``direct``; ``pinned_t0``: inputs by
  pageable copies, results in pinned memory; ``pinned_t1``: inputs staged through pinned memory
  by one thread; ``pinned``: by the default number of threads; ``staged``), seconds per call
  (median);
- ``cupy_e2e``: ``cupy.asarray`` of every input, the CuPy function, ``cupy.asnumpy``;
- ``resident``: ``pyopencl.array.Array`` in and out (daskcl), against ``cupy_resident``
  (CuPy arrays in and out);
- ``floor_resident``: the least a device-resident call through pyopencl costs, timed the same
  way: a new result ``Array`` from a memory pool, one launch of a kernel that copies the first input (the memory
  bound of an elementwise kernel) and a blocking read of three status ints, as daskcl's call
  reads R's warning counts; ``cupy_copy`` is CuPy's ``x.copy()``, its own floor;
- the ceilings of ``bench_transfer.py`` measured in the same run: ``ceiling_s`` is the time the
  bytes of the call need at the measured rates of the faster input path (pageable upload at the
  best thread count measured, or the host's copy into pinned memory at the best thread count
  measured where that is below the pinned DMA's rate) and the output by pinned download, one
  after the other, and
  ``ceiling_overlap_s`` the larger of the two (both directions at once).

Ratios: ``e2e_vs_cupy`` is CuPy's end-to-end time over daskcl's best mode's (above 1: daskcl
faster); ``resident_vs_cupy`` likewise; ``of_ceiling`` is ``ceiling_s`` over daskcl's time.

Run:  python benchmarks/bench_delivered.py [--n 33554432,134217728] [--functions pnorm,...]
          [--modes direct,pinned_t0,pinned_t1,pinned,staged] [--repeat 3] [--glm]
          [--glm-pieces 2,3,4] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time, table, write
from bench_transfer import measure

FUNCTIONS = "pnorm,qnorm,pgamma,pbeta,qbeta,pbinom"


def _u(r: np.random.Generator, n: int) -> np.ndarray:
    return r.uniform(0.1, 50, n)


def _binom(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    size = r.integers(1, 1000, n).astype(np.float64)
    return np.floor(r.uniform(0, 1, n) * (size + 1)), size, r.uniform(0, 1, n)


#: inputs and the CuPy peer (called with CuPy arrays) of each function
CASES: dict[str, tuple[Callable[[np.random.Generator, int], tuple[np.ndarray, ...]],
                       Callable[[Any], Callable[..., Any]]]] = {
    "pnorm": (lambda r, n: (r.normal(0, 3, n),), lambda cs: cs.ndtr),
    "qnorm": (lambda r, n: (r.uniform(0, 1, n),), lambda cs: cs.ndtri),
    "pgamma": (lambda r, n: (_u(r, n), _u(r, n)), lambda cs: lambda x, a: cs.gammainc(a, x)),
    "pbeta": (lambda r, n: (r.uniform(0, 1, n), _u(r, n), _u(r, n)),
              lambda cs: lambda x, a, b: cs.betainc(a, b, x)),
    "qbeta": (lambda r, n: (r.uniform(0, 1, n), _u(r, n), _u(r, n)),
              lambda cs: lambda p, a, b: cs.betaincinv(a, b, p)),
    "pbinom": (_binom, lambda cs: lambda q, s, p: cs.bdtr(q, s, p)),
}



def _mode(mode: str) -> Any:
    """The config of a mode name (``direct``, ``pinned_t0``, ..., see the module's docstring)."""
    from daskcl import config

    how, _, threads = mode.partition("_t")
    return config.set({"transfer.mode": how, "transfer.threads": threads or "auto"})


def _cupy() -> Any:
    try:
        import cupy as cp
        import cupyx.scipy.special as cs

        cp.zeros(1)
        return cp, cs
    except Exception:     # no CuPy, or no CUDA device: daskcl alone
        return None


def _one(name: str, n: int, modes: list[str], repeat: int, up: float, down: float,
         peers: Any) -> dict[str, Any]:
    """One row: ``name`` at ``n`` elements (see the module's docstring)."""
    import pyopencl.array as cla

    from daskcl import nmath
    from daskcl.runtime import device

    q = device.current().queue
    make, cupy_fn = CASES[name]
    inputs = make(np.random.default_rng(1), n)
    fn = getattr(nmath, name)
    in_bytes = sum(a.nbytes for a in inputs)
    row: dict[str, Any] = {"function": name, "n": n, "bytes": in_bytes + 8 * n}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = fn(*inputs)
        for mode in modes:
            with _mode(mode):
                got = fn(*inputs)
                row[f"same_{mode}"] = bool(np.array_equal(got.view(np.int64),
                                                          ref.view(np.int64)))
                del got
                row[f"e2e_{mode}"] = median_time(lambda: fn(*inputs), repeat, warmup=1)
        dev = [cla.to_device(q, a) for a in inputs]
        res = fn(*dev)
        row["same_resident"] = bool(np.array_equal(res.get().view(np.int64),
                                                   ref.view(np.int64)))
        row["resident"] = median_time(lambda: (fn(*dev), q.finish()), repeat, warmup=1)
        row["floor_resident"] = median_time(_floor_call(dev[0]), repeat, warmup=1)
    best = min(modes, key=lambda m: row[f"e2e_{m}"])
    row["best_mode"] = best
    row["ceiling_s"] = in_bytes / (up * 1e9) + 8 * n / (down * 1e9)
    row["ceiling_overlap_s"] = max(in_bytes / (up * 1e9), 8 * n / (down * 1e9))
    row["of_ceiling"] = row["ceiling_s"] / row[f"e2e_{best}"]
    if peers is not None:
        cp, cs = peers
        f = cupy_fn(cs)

        def e2e() -> Any:
            out = cp.asnumpy(f(*[cp.asarray(a) for a in inputs]))
            cp.cuda.Stream.null.synchronize()
            return out

        row["cupy_e2e"] = median_time(e2e, repeat, warmup=1)
        dargs = [cp.asarray(a) for a in inputs]
        row["cupy_resident"] = median_time(
            lambda: (f(*dargs), cp.cuda.Stream.null.synchronize()), repeat)
        row["e2e_vs_cupy"] = row["cupy_e2e"] / row[f"e2e_{best}"]
        row["resident_vs_cupy"] = row["cupy_resident"] / row["resident"]
        row["cupy_copy"] = median_time(
            lambda: (dargs[0].copy(), cp.cuda.Stream.null.synchronize()), repeat)
        row["floor_vs_cupy"] = row["cupy_resident"] / row["floor_resident"]
    return row


def _floor_call(x: Any) -> Callable[[], Any]:
    """A call of the least work a device-resident call through pyopencl does (the module's
    docstring, ``floor_resident``), on the device array ``x``."""
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.tools as clt

    from daskcl.runtime import device

    q = device.current().queue
    pool = clt.MemoryPool(clt.ImmediateAllocator(q))    # as daskcl's: no allocation a call
    prg = cl.Program(q.context, """
        __kernel void floor_copy(long n, __global const double *x, __global double *y,
                                 __global int *status)
        { long i = get_global_id(0); if (i < n) y[i] = x[i]; }""").build()
    k = prg.floor_copy
    k.set_scalar_arg_dtypes([np.int64, None, None, None])
    status = cla.zeros(q, 3, np.int32)
    counts = np.empty(3, np.int32)
    n = x.size
    gsize = -(-n // 256) * 256

    def call() -> Any:
        y = cla.empty(q, x.shape, np.float64, allocator=pool)
        k(q, (gsize,), (256,), np.int64(n), x.data, y.data, status.data)
        cl.enqueue_copy(q, counts, status.data)    # blocking: waits for the kernel
        return y

    return call


def ceilings() -> tuple[dict[str, float], float, float]:
    """The host's rates measured now (``bench_transfer.measure``), and from them the GB/s of
    the faster input path (the pageable upload at its best thread count, or the copy into
    pinned memory at its best where that is below the pinned DMA's rate) and of the pinned
    download."""
    rates = measure(256, (1, 2, 4, 8), 3)
    staged = min(max(v for k, v in rates.items() if k.startswith("host_into_pinned")),
                 rates["h2d_pinned"])
    up = max(staged, max(v for k, v in rates.items() if k.startswith("h2d_pageable")))
    return rates, up, rates["d2h_pinned"]


def run(names: list[str], sizes: list[int], modes: list[str], repeat: int,
        glm: bool = False, pieces: tuple[int, ...] = ()) -> dict[str, Any]:
    rates, up, down = ceilings()
    peers = _cupy()
    rows = []
    for n in sizes:
        for name in names:
            row = _one(name, n, modes, repeat, up, down, peers)
            gc.collect()
            if peers is not None:
                peers[0].get_default_memory_pool().free_all_blocks()
            rows.append(row)
            print(table([row], [c for c in ("function", "n", "best_mode", f"e2e_{row['best_mode']}",
                                            "cupy_e2e", "e2e_vs_cupy", "resident",
                                            "cupy_resident", "resident_vs_cupy", "floor_resident",
                                            "cupy_copy", "of_ceiling")
                                if c in row]), flush=True)
    if glm:
        rows += glm_rows(modes, repeat, up, down, peers, pieces)
    return {"machine": machine(), "ceilings_GB_s": rates, "rows": rows}


def glm_rows(modes: list[str], repeat: int, up: float, down: float, peers: Any,
             pieces: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """f2_f3 (binomial/logit) from NumPy at (l1, l2, m1) = (300, 16, 200 000) and (1000, 32,
    100 000): the grid uploaded, qf and grad downloaded, in each transfer mode, against the
    ceiling for the bytes it moves; the same points through a :class:`FactorialGrid` (no grid
    upload; 2 values a coefficient for l2 = 16, its 65 536 points); device-resident; and CuPy
    array code with its data on the device (``bench_glm.cupy_run``)."""
    from bench_glm import CASES as GLM_CASES

    rows = []
    for case in [c for c in GLM_CASES if c.name in ("logit-300x16", "logit-1000x32")]:
        row = _glm_row(case, modes, repeat, up, down, peers, pieces)
        rows.append(row)
        best = row["best_mode"]
        print(table([row], [c for c in ("function", "n", "best_mode", f"e2e_{best}",
                                        "resident", "cupy_resident", "e2e_vs_cupy_resident",
                                        "factorial_vs_cupy_resident", "of_ceiling")
                            if c in row]), flush=True)
    return rows


def _pieces(n: int) -> Any:
    """``glm.posterior.PIECES`` set to ``n`` for the context's duration."""
    from unittest import mock

    from daskcl.glm import posterior

    return mock.patch.object(posterior, "PIECES", n)


def _glm_row(case: Any, modes: list[str], repeat: int, up: float, down: float, peers: Any,
             pieces: tuple[int, ...] = ()) -> dict[str, Any]:
    import pyopencl.array as cla
    from bench_glm import cupy_run, make_problem

    from daskcl.glm import FactorialGrid, Posterior
    from daskcl.runtime import device

    q = device.current().queue
    prob = make_problem(case, case.m1)
    post = Posterior(case.family, case.link, prob["y"], prob["x"], prob["mu"], prob["P"],
                     prob["alpha"], prob["wt"])
    b = prob["b"]
    row: dict[str, Any] = {"function": f"f2_f3 {case.name}", "n": case.m1,
                           "bytes": b.nbytes + case.m1 * (case.l2 + 1) * 8}
    ref = post.f2_f3(b)
    for mode in modes:
        with _mode(mode):
            got = post.f2_f3(b)
            row[f"same_{mode}"] = bool(np.array_equal(got[0], ref[0])
                                       and np.array_equal(got[1], ref[1]))
            del got
            row[f"e2e_{mode}"] = median_time(lambda: post.f2_f3(b), repeat, warmup=1)
    for n_pieces in pieces:
        with _mode("pinned"), _pieces(n_pieces):
            row[f"e2e_pinned_{n_pieces}pieces"] = median_time(lambda: post.f2_f3(b), repeat,
                                                              warmup=1)
    db = cla.to_device(q, b)
    row["resident"] = median_time(lambda: (post.f2_f3(db), q.finish()), repeat, warmup=1)
    best = min(modes, key=lambda m: row[f"e2e_{m}"])
    row["best_mode"] = best
    row["ceiling_s"] = b.nbytes / (up * 1e9) + case.m1 * (case.l2 + 1) * 8 / (down * 1e9)
    row["of_ceiling"] = row["ceiling_s"] / row[f"e2e_{best}"]
    grid = FactorialGrid([np.array([-0.5, 0.5])] * case.l2)
    if case.l2 == 16:
        row["factorial_points"] = len(grid)
        row["factorial_e2e"] = median_time(lambda: post.f2_f3(grid), repeat, warmup=1)
        row["factorial_resident"] = median_time(
            lambda: (post.f2_f3(grid, device=True), q.finish()), repeat)
    if peers is not None:
        t, _, _ = cupy_run(case, prob, repeat)
        row["cupy_resident"] = t
        row["e2e_vs_cupy_resident"] = t / row[f"e2e_{best}"]
        row["resident_vs_cupy"] = t / row["resident"]
        if "factorial_e2e" in row:
            tf, _, _ = cupy_run(case, {**prob, "b": grid.materialize()}, repeat)
            row["factorial_cupy_resident"] = tf
            row["factorial_vs_cupy_resident"] = tf / row["factorial_e2e"]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default=f"{1 << 25},{1 << 27}")
    ap.add_argument("--functions", default=FUNCTIONS)
    ap.add_argument("--modes", default="direct,pinned_t0,pinned_t1,pinned,staged")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--glm", action="store_true", help="also f2_f3 (binomial/logit)")
    ap.add_argument("--glm-pieces", default="",
                    help="f2_f3 from NumPy also with these numbers of pieces "
                         "(glm.posterior.PIECES) in mode pinned")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    names = [f for f in args.functions.split(",") if f]
    res = run(names, [int(x) for x in args.n.split(",")], args.modes.split(","), args.repeat,
              args.glm, tuple(int(x) for x in args.glm_pieces.split(",") if x))
    if args.out:
        write("delivered", res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
