# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep chunk's own cost: what a chunk costs beyond its computation.

The same pnorm grid is swept in few chunks and in many, on a local cluster of one worker (as
``daskcl sweep`` runs) and in this process (``--sync``); the chunk's own cost is
``(T(many) - T(few)) / (many - few)``: the task, the store's writes, marks and checksums, the
bookkeeping of the run.  Beside it, two floors a sweep cannot go under: the same chunks'
function calls alone (``nmath.pnorm`` on each chunk's values, nothing written), and as many
empty tasks on the same cluster, submitted as a sweep submits its chunks (a window of 8 in
flight, the next half submitted together).  Each time is the lower of ``--repeat`` runs, each
into a fresh store, cluster start-up and program builds excluded.

Run:  python benchmarks/bench_chunk_cost.py [--points 1048576] [--few 16] [--many 1024]
      [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import machine, report


def _spec(points: int, chunks: int) -> Any:
    from daskcl.sweep import Sweep

    return Sweep.from_dict({"sweep": {"function": "pnorm", "chunks": {"q": points // chunks},
                                      "compressor": "none"},
                            "axes": {"q": {"linspace": [-6.0, 6.0, points]}}})


def _sweep_time(points: int, chunks: int, client: Any, tmp: Path, repeat: int) -> float:
    from daskcl.sweep import run

    best = float("inf")
    for k in range(repeat):
        out = tmp / f"o-{chunks}-{k}.zarr"
        t0 = time.perf_counter()
        res = run(_spec(points, chunks), out, client=client)
        best = min(best, time.perf_counter() - t0)
        assert res.computed == chunks
        shutil.rmtree(out)
    return best


def _calls_time(points: int, chunks: int, repeat: int) -> float:
    from daskcl import nmath

    q = np.linspace(-6.0, 6.0, points).reshape(chunks, -1)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for row in q:
            nmath.pnorm(row)
        best = min(best, time.perf_counter() - t0)
    return best


def _empty(i: int) -> dict[str, Any]:
    return {"index": i}


def _tasks_time(n: int, client: Any, repeat: int) -> float:
    """``n`` empty tasks through a window of 8, the next half submitted together."""
    from distributed import as_completed

    best = float("inf")
    for k in range(repeat):
        todo = iter(range(n))
        t0 = time.perf_counter()
        running = as_completed(client.map(_empty, [next(todo) for _ in range(min(8, n))],
                                          pure=False, key=[f"e{k}-{i}" for i in range(min(8, n))]))
        finished, inflight = 0, min(8, n)
        for fut in running:
            fut.result()
            finished, inflight = finished + 1, inflight - 1
            if finished >= 4 or not inflight:
                more = [i for i, _ in zip(todo, range(finished))]
                if more:
                    running.update(client.map(_empty, more, pure=False,
                                              key=[f"e{k}-{i}" for i in more]))
                finished, inflight = 0, inflight + len(more)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2**20)
    ap.add_argument("--few", type=int, default=16)
    ap.add_argument("--many", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from distributed import Client

    from daskcl.cluster import local_cluster

    tmp = Path(tempfile.mkdtemp(prefix="daskcl-bench-chunks-"))
    rows: list[dict[str, Any]] = []
    n_few, n_many = args.few, args.many
    extra = n_many - n_few

    def row(path: str, few: float, many: float) -> None:
        rows.append({"path": path, "few_s": few, "many_s": many,
                     "chunk_ms": 1e3 * (many - few) / extra})

    _sweep_time(args.points, n_few, "sync", tmp, 1)      # builds the program
    row("sync", _sweep_time(args.points, n_few, "sync", tmp, args.repeat),
        _sweep_time(args.points, n_many, "sync", tmp, args.repeat))
    with local_cluster(1, warm_names=["pnorm"], silence_logs=logging.WARNING) as cluster, \
            Client(cluster) as client:
        _sweep_time(args.points, n_few, client, tmp, 1)
        row("cluster", _sweep_time(args.points, n_few, client, tmp, args.repeat),
            _sweep_time(args.points, n_many, client, tmp, args.repeat))
        row("tasks alone", _tasks_time(n_few, client, args.repeat),
            _tasks_time(n_many, client, args.repeat))
    row("calls alone", _calls_time(args.points, n_few, args.repeat),
        _calls_time(args.points, n_many, args.repeat))
    shutil.rmtree(tmp, ignore_errors=True)
    report("chunk-cost", rows, ["path", "few_s", "many_s", "chunk_ms"], args.out,
           info=machine(), points=args.points, few=n_few, many=n_many, repeat=args.repeat)


if __name__ == "__main__":
    main()
