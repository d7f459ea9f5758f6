# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep chunk's own cost: what a chunk costs beyond its computation.

The same pnorm grid is swept in few chunks and in many, on a local cluster of one worker (as
``daskcl sweep`` runs) and in this process (``--sync``); the chunk's own cost is
``(T(many) - T(few)) / (many - few)``: the task, the store's writes, marks and checksums, the
bookkeeping of the run.  Beside it, the floors a sweep cannot go under: the same chunks'
function calls alone (``nmath.pnorm`` on each chunk's values, nothing written); dask's own, on
the same cluster: the sweep's tasks with an empty body ("sweep tasks alone": the run's own
submission loop, the same arguments, the sweep they name, results of the same kind, nothing
computed or written) and as many bare empty tasks, submitted and gathered as a sweep does (its
window in flight, the next half submitted together, the results finished together gathered
together).  ``cpu_ms`` is the CPU time an extra chunk costs, this process's and the
workers' together: steadier than the wall time on a machine shared with other work.  The
cases take turns, ``--repeat`` rounds (each sweep into a fresh store), and each keeps its
lowest time; cluster start-up and program builds are excluded.

Run:  python benchmarks/bench_chunk_cost.py [--points 1048576] [--few 16] [--many 512]
      [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import os
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


def _cpu(client: Any = None) -> float:
    """CPU seconds of this process, and of the client's workers."""
    t = os.times()
    own = t.user + t.system
    return own if client is None else own + sum(client.run(_cpu).values())


def _sweep(points: int, chunks: int, client: Any, tmp: Path) -> None:
    from daskcl.sweep import run

    out = tmp / f"o-{chunks}.zarr"
    res = run(_spec(points, chunks), out, client=client)
    assert res.computed == chunks
    shutil.rmtree(out)


def _empty_chunk(sweep: Any, url: str, options: Any, index: tuple[int, ...],
                 fresh: bool = False) -> dict[str, Any]:
    """A chunk task that computes and writes nothing, and reports as a chunk does."""
    return {"index": index, "skipped": False, "device": "none", "compute_s": 0.0,
            "write_s": 0.0}


def _sweep_tasks(points: int, chunks: int, client: Any, tmp: Path) -> None:
    """The run's submission loop over the sweep's chunks, each task :func:`_empty_chunk`."""
    from daskcl.sweep import runner
    from daskcl.sweep.store import Store

    sweep, url = _spec(points, chunks), str(tmp / "none.zarr")
    real, runner.chunk_task = runner.chunk_task, _empty_chunk   # type: ignore[assignment]
    try:
        tally = runner._Tally(url)
        runner._run_client(sweep, Store(url), client, sweep.chunk_indices(), None, tally)
    finally:
        runner.chunk_task = real    # type: ignore[assignment]
    assert tally.computed == chunks


def _calls(points: int, chunks: int) -> None:
    from daskcl import nmath

    for row in np.linspace(-6.0, 6.0, points).reshape(chunks, -1):
        nmath.pnorm(row)


def _empty(i: int) -> dict[str, Any]:
    return {"index": i}


_ROUND = [0]


def _tasks(n: int, client: Any) -> None:
    """``n`` empty tasks through the run's window, the next half submitted together, the
    results finished together gathered together."""
    from distributed import as_completed

    from daskcl.sweep import runner

    _ROUND[0] += 1
    width = (runner._window(client, quick=True) if hasattr(runner, "_window") else  # else: before
             max(8, runner._WINDOW_PER_THREAD * sum(client.nthreads().values())))  # it had one
    todo, k = iter(range(n)), _ROUND[0]
    first = [next(todo) for _ in range(min(width, n))]
    running = as_completed(client.map(_empty, first, pure=False,
                                      key=[f"e{k}-{i}" for i in first]))
    finished, inflight = 0, len(first)
    for batch in running.batches():
        client.gather(batch)
        finished, inflight = finished + len(batch), inflight - len(batch)
        if finished >= width // 2 or not inflight:
            more = [i for i, _ in zip(todo, range(finished))]
            if more:
                running.update(client.map(_empty, more, pure=False,
                                          key=[f"e{k}-{i}" for i in more]))
            finished, inflight = 0, inflight + len(more)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2**20)
    ap.add_argument("--few", type=int, default=16)
    ap.add_argument("--many", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from distributed import Client

    from daskcl.cluster import local_cluster

    tmp = Path(tempfile.mkdtemp(prefix="daskcl-bench-chunks-"))
    n_few, n_many, pts = args.few, args.many, args.points
    extra = n_many - n_few
    best: dict[tuple[str, int], tuple[float, float]] = {}

    def timed(path: str, n: int, fn: Any, client: Any = None) -> None:
        c0, t0 = _cpu(client), time.perf_counter()
        fn(n)
        wall, cpu = time.perf_counter() - t0, _cpu(client) - c0
        got = best.get((path, n))
        best[path, n] = (wall, cpu) if got is None or wall < got[0] else got

    _sweep(pts, n_few, "sync", tmp)      # builds the program
    with local_cluster(1, warm_names=["pnorm"], silence_logs=logging.WARNING) as cluster, \
            Client(cluster) as client:
        _sweep(pts, n_few, client, tmp)
        cases: list[tuple[str, Any, Any]] = [
            ("sync", lambda n: _sweep(pts, n, "sync", tmp), None),
            ("cluster", lambda n: _sweep(pts, n, client, tmp), client),
            ("sweep tasks alone", lambda n: _sweep_tasks(pts, n, client, tmp), client),
            ("tasks alone", lambda n: _tasks(n, client), client),
            ("calls alone", lambda n: _calls(pts, n), None)]
        for _ in range(args.repeat):
            for path, fn, on in cases:
                for n in (n_few, n_many):
                    timed(path, n, fn, on)
    shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for path, _, _ in cases:
        (few, few_cpu), (many, many_cpu) = best[path, n_few], best[path, n_many]
        rows.append({"path": path, "few_s": few, "many_s": many,
                     "chunk_ms": 1e3 * (many - few) / extra,
                     "cpu_ms": 1e3 * (many_cpu - few_cpu) / extra})
    report("chunk-cost", rows, ["path", "few_s", "many_s", "chunk_ms", "cpu_ms"], args.out,
           info=machine(), points=pts, few=n_few, many=n_many, repeat=args.repeat)


if __name__ == "__main__":
    main()
