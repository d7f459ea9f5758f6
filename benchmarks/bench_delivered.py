# SPDX-License-Identifier: GPL-2.0-or-later
"""What a user receives: daskcl end to end and device-resident, against CuPy, beside the
host's ceilings.

For each function and size, in one run on identical inputs:

- ``e2e_<mode>``: NumPy in, NumPy out, through daskcl's host path in each transfer mode
  (``direct``, ``pinned``, ``pinned_t4``: four upload threads, ``staged``; config key
  ``transfer.mode``), seconds per call (median);
- ``cupy_e2e``: ``cupy.asarray`` of every input, the CuPy function, ``cupy.asnumpy``;
- ``resident``: ``pyopencl.array.Array`` in and out (daskcl), against ``cupy_resident``
  (CuPy arrays in and out);
- the ceilings of ``bench_transfer.py`` measured in the same run: ``ceiling_s`` is the time the
  bytes of the call need at the measured rates of its chosen path (inputs by pageable upload at
  the best thread count measured, the output by pinned download) one after the other, and
  ``ceiling_overlap_s`` the larger of the two (both directions at once).

Ratios: ``e2e_vs_cupy`` is CuPy's end-to-end time over daskcl's best mode's (above 1: daskcl
faster); ``resident_vs_cupy`` likewise; ``of_ceiling`` is ``ceiling_s`` over daskcl's time.

Run:  python benchmarks/bench_delivered.py [--n 33554432,134217728] [--functions pnorm,...]
          [--modes direct,pinned,pinned_t4,staged] [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write
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


def _median(f: Callable[[], Any], repeat: int) -> float:
    f()
    ts = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


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

    from daskcl import config, nmath
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
            how, _, threads = mode.partition("_t")
            with config.set({"transfer.mode": how, "transfer.threads": int(threads or 1)}):
                got = fn(*inputs)
                row[f"same_{mode}"] = bool(np.array_equal(got.view(np.int64),
                                                          ref.view(np.int64)))
                del got
                row[f"e2e_{mode}"] = _median(lambda: fn(*inputs), repeat)
        dev = [cla.to_device(q, a) for a in inputs]
        res = fn(*dev)
        row["same_resident"] = bool(np.array_equal(res.get().view(np.int64),
                                                   ref.view(np.int64)))
        row["resident"] = _median(lambda: (fn(*dev), q.finish()), repeat)
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

        row["cupy_e2e"] = _median(e2e, repeat)
        dargs = [cp.asarray(a) for a in inputs]
        row["cupy_resident"] = _median(
            lambda: (f(*dargs), cp.cuda.Stream.null.synchronize()), repeat)
        row["e2e_vs_cupy"] = row["cupy_e2e"] / row[f"e2e_{best}"]
        row["resident_vs_cupy"] = row["cupy_resident"] / row["resident"]
    return row


def run(names: list[str], sizes: list[int], modes: list[str], repeat: int) -> dict[str, Any]:
    rates = measure(256, (1, 2, 4, 8), 3)
    up = max(v for k, v in rates.items() if k.startswith("h2d_pageable"))
    down = rates["d2h_pinned"]
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
                                            "cupy_resident", "resident_vs_cupy", "of_ceiling")
                                if c in row]), flush=True)
    return {"machine": machine(), "ceilings_GB_s": rates, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default=f"{1 << 25},{1 << 27}")
    ap.add_argument("--functions", default=FUNCTIONS)
    ap.add_argument("--modes", default="direct,pinned,pinned_t4,staged")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    res = run(args.functions.split(","), [int(x) for x in args.n.split(",")],
              args.modes.split(","), args.repeat)
    if args.out:
        write("delivered", res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
