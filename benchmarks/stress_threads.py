# SPDX-License-Identifier: GPL-2.0-or-later
"""Threads on one queue: many processes, each with threads calling a function of sorted
launches on device arrays at once, counted by how they end (benchmarks/README.md, "Threads on
one queue").

Each child process makes ``--threads`` device arrays of a few thousand values, then for
``--rounds`` rounds starts one thread per array; each thread calls ``nmath.pbeta`` (sorted
launches: four kernels a launch, with the queue's scratch buffers) 30 times on its array and
compares the result with the NumPy path's, bit for bit, while the interpreter switches threads
every microsecond.  ``--procs`` children run, ``--par`` at a time (the load), each under a time
limit; the parent counts those that finished with every value right, those that computed a
wrong value, those that crashed (a signal) and those that hung (the limit).

``--allocator`` picks the allocator of the memory pool that device results come from:
``deferred`` (daskcl's, :func:`daskcl.kernels._transfer.device_pool`) or ``immediate``
(pyopencl's ``ImmediateAllocator``, which daskcl used before: each new buffer made resident at
once by a ``clEnqueueMigrateMemObjects`` on the queue).

Run:  python benchmarks/stress_threads.py [--allocator deferred,immediate] [--procs 48]
          [--par 8] [--threads 8] [--rounds 15] [--out FILE]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report

CHILD = r"""
import sys, threading, warnings
import numpy as np
import pyopencl.array as cla
import pyopencl.tools as clt
from daskcl import config, nmath
from daskcl.kernels import _transfer
from daskcl.runtime import device

allocator, rounds, nthreads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bound = device.current()
if allocator == "immediate":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = clt.MemoryPool(clt.ImmediateAllocator(bound.queue))
    _transfer.device_pool = lambda b: pool
xs = [cla.to_device(bound.queue, np.linspace(0.001, 0.999, 5000 + 37 * k))
      for k in range(nthreads)]
wrong = []
with config.set({"binning": "1"}):
    want = [nmath.pbeta(x.get(), 0.7, 45.0) for x in xs]

    def work(k):
        for _ in range(30):
            if not np.array_equal(nmath.pbeta(xs[k], 0.7, 45.0).get(), want[k], equal_nan=True):
                wrong.append(k)

    for _ in range(rounds):
        sys.setswitchinterval(1e-6)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(nthreads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sys.setswitchinterval(0.005)
print("wrong", len(wrong))
sys.exit(3 if wrong else 0)
"""


def child(allocator: str, rounds: int, threads: int, limit: float) -> str:
    """How one child process ended: ``ok``, ``wrong``, ``crashed`` or ``hung``."""
    root = str(Path(__file__).resolve().parents[1])
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, allocator, str(rounds), str(threads)],
                           capture_output=True, timeout=limit, cwd=root)
    except subprocess.TimeoutExpired:
        return "hung"
    return {0: "ok", 3: "wrong"}.get(r.returncode, "crashed")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allocator", default="deferred,immediate")
    ap.add_argument("--procs", type=int, default=48)
    ap.add_argument("--par", type=int, default=8)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--limit", type=float, default=60.0, help="seconds a child may take")
    ap.add_argument("--out")
    args = ap.parse_args()
    child("deferred", 1, 1, 600.0)        # builds the programs once, outside the counts
    rows = []
    for allocator in args.allocator.split(","):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.par) as ex:
            ends = list(ex.map(child, [allocator] * args.procs, [args.rounds] * args.procs,
                               [args.threads] * args.procs, [args.limit] * args.procs))
        rows.append({"allocator": allocator, "procs": args.procs, "par": args.par,
                     "threads": args.threads, "rounds": args.rounds,
                     **{k: ends.count(k) for k in ("ok", "wrong", "crashed", "hung")},
                     "s": round(time.perf_counter() - t0, 1)})
    report("stress-threads", rows, ["allocator", "procs", "par", "threads", "rounds", "ok",
                                    "wrong", "crashed", "hung", "s"], args.out)


if __name__ == "__main__":
    main()
