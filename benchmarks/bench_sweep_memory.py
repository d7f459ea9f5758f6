# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep's memory as its chunks go by: the client's and the scheduler's, and the workers'.

A pnorm sweep of tiny chunks (``--points-per-chunk`` values each) on a local cluster, as
``daskcl sweep`` runs it; the resident memory of this process (the client and the local
cluster's scheduler, which runs in it) and of the workers is sampled as each tenth of the
chunks finishes, with what the scheduler and the client hold (tasks, task groups, futures).
Flat means the last tenth holds no more than the first, beyond noise.  Distributed's own
buffers of each second (the workers' profiles, the system monitors, up to 1000 and 7200
entries) grow with time whatever the chunks; ``--no-monitors`` turns them off, leaving what the
chunks cost.

Run:  python benchmarks/bench_sweep_memory.py [--chunks 100000] [--points-per-chunk 4]
      [--workers 1] [--no-monitors] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from _common import machine, report


def _rss_mb(proc: psutil.Process) -> float:
    return proc.memory_info().rss / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--points-per-chunk", type=int, default=4)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-monitors", action="store_true",
                    help="no worker profiles, a short system-monitor log")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import dask
    from distributed import Client

    if args.no_monitors:     # the workers' nannies pass this configuration on
        dask.config.set({"distributed.worker.profile.enabled": False,
                         "distributed.admin.system-monitor.log-length": 10})

    from daskcl.cluster import local_cluster
    from daskcl.sweep import Sweep, run, runner

    n, per = args.chunks, args.points_per_chunk
    spec = Sweep.from_dict({"sweep": {"function": "pnorm", "chunks": {"q": per},
                                      "compressor": "none"},
                            "axes": {"q": {"linspace": [-6.0, 6.0, n * per]}}})
    tmp = Path(tempfile.mkdtemp(prefix="daskcl-bench-memory-"))
    rows: list[dict[str, Any]] = []
    me = psutil.Process()
    with local_cluster(args.workers, warm_names=["pnorm"], silence_logs=logging.WARNING) \
            as cluster, Client(cluster) as client:
        scheduler = cluster.scheduler
        workers = [psutil.Process(p) for p in client.run(lambda: __import__("os").getpid())
                   .values()]
        t0 = time.perf_counter()
        real_add = runner._Tally.add

        def add(self: Any, r: dict[str, Any]) -> None:
            real_add(self, r)
            done = self.computed
            if done % max(1, n // 10) == 0 or done == n:
                gc.collect()
                rows.append({
                    "chunks_done": done,
                    "seconds": round(time.perf_counter() - t0, 2),
                    "client_scheduler_MB": round(_rss_mb(me), 1),
                    "workers_MB": round(sum(_rss_mb(w) for w in workers), 1),
                    "scheduler_tasks": len(scheduler.tasks),
                    "task_groups": len(scheduler.task_groups),
                    "task_prefixes": len(scheduler.task_prefixes),
                    "client_futures": len(client.futures),
                })

        runner._Tally.add = add      # type: ignore[method-assign]
        try:
            res = run(spec, tmp / "m.zarr", client=client)
        finally:
            runner._Tally.add = real_add     # type: ignore[method-assign]
    shutil.rmtree(tmp, ignore_errors=True)
    assert res.computed == n
    first, last = rows[0], rows[-1]
    growth = {k: round(last[k] - first[k], 1) for k in ("client_scheduler_MB", "workers_MB")}
    report("sweep-memory", rows, list(rows[0]), args.out, info=machine(), chunks=n,
           points_per_chunk=per, workers=args.workers, no_monitors=args.no_monitors,
           growth_first_to_last=growth,
           chunk_ms=round(1e3 * (last["seconds"] - first["seconds"])
                          / max(1, last["chunks_done"] - first["chunks_done"]), 3))


if __name__ == "__main__":
    main()
