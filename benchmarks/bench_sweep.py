# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps through dask and zarr against the bare kernel and the store, and scaling over GPUs.

For a cheap kernel (``dnorm``) and costly ones (``qbeta``, ``glm.f2_f3`` binomial/logit), in one
run on one device:

* ``bare``: the sweep's chunks evaluated in this process on the same device (host arrays in and
  out, nothing written): the pace of the kernel;
* ``store``: what the store absorbs: the same chunks' values (as the bare run computed them)
  written through ``daskcl.sweep.store.Store.write_chunk`` with the sweep's codec into a fresh store
  in the same directory, as many chunks at a time as a sweep's worker has in flight (its
  window); no device work (``bench_store.py`` has the codecs side by side);
* ``sweep``: ``daskcl.sweep.run`` on a local cluster of one worker (one device), every chunk
  computed and written, its kernel running while earlier chunks are written.

``bound`` is the lower of bare and store (``kernel`` or ``store``): a sweep cannot beat either,
and ``sweep_over_bound`` is how close it comes.  ``device_busy`` is the share of the sweep's
time its chunks spent computing (summed, as the run's record in the store has it), and
``writing`` the same for writing (above 1 where several chunks are written at once): a device
busy near 1 says the kernel bounds the sweep.  Rates are points per second (float64 MB/s for
the store: 8 bytes a point, 8 * (1 + coefficients) for f2_f3's qf and grad).  Cluster start-up
and program builds are excluded (the cluster is started and warmed first, and a small sweep of
each function runs before the one timed: as many chunks as a worker holds at once, so that the
pinned memory of their results is made, as in a worker's later sweeps); the time of a sweep covers creating the store, every
chunk and the final attributes.  With ``--gpus 1,2,4`` the same sweeps run on local clusters of
that many workers (one GPU each): efficiency = rate(n) / (n * rate(1)).

On a CPU device (PoCL) the kernel and the compression share the same cores: there the sweep
comes to about 1 / (1 / bare + 1 / store), not to the lower of the two.

Run:  python benchmarks/bench_sweep.py [--size gpu|cpu] [--gpus 1,2] [--threads 1] [--repeat 3]
      [--compressor blosc-lz4] [--tmp DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import machine, report, table
from bench_store import absorb, cpu_name, filesystem

from daskcl.sweep import Sweep, run, runner
from daskcl.sweep.evaluate import evaluate_chunk
from daskcl.sweep.spec import DEFAULT_COMPRESSOR, parse_compressor
from daskcl.sweep.store import read_info

SIZES = {  # (dnorm x, dnorm mean), (qbeta p, shapes), (glm l1, values per coefficient), chunks
    # 2^28 dnorm points, 2^21 * 128 qbeta points (16 automatic chunks each), 18^6 GLM points
    # (162): about 1 to 7 s of one H200 each, the sweep's automatic chunks (0)
    "gpu": ((65536, 4096), (16384, 128), (20000, 18), 0),
    # 4x the points of dnorm and qbeta (2^30 each, 64 automatic chunks): the steady state, past
    # the sweep's fixed start and end
    "gpu-large": ((65536, 16384), (16384, 256), (20000, 18), 0),
    # PoCL on a small CPU: about 1 to 4 s each
    "cpu": ((8192, 1024), (512, 16), (2000, 5), 16),
}
#: chunk values kept from the bare run for the store measurement
_KEEP = 8


def cases(size: str, compressor: str, tmp: Path) -> dict[str, dict[str, Any]]:
    """Sweep specs of about ``nc`` chunks each, or (``nc`` = 0) the chunks a user gets by
    default (automatic chunks of 2^22 elements or 2^16 GLM points)."""
    (nx, nm), (npr, nsh), (l1, nv), nc = SIZES[size]
    rng = np.random.default_rng(1)
    l2 = 6
    x = rng.normal(size=(l1, l2 - 1))
    eta = -0.5 + x @ np.linspace(-0.5, 0.5, l2 - 1)
    y = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    names = [f"x{k}" for k in range(1, l2)]
    data = tmp / "glm.csv"
    np.savetxt(data, np.column_stack([y, x]), delimiter=",", header=",".join(["y", *names]),
               comments="")
    axes = {n: {"linspace": [-1.5, 1.5, nv]} for n in ["intercept", *names]}
    return {
        "dnorm": {
            "sweep": {"function": "dnorm", "compressor": compressor,
                      **({"chunks": {"x": nx // nc, "mean": nm}} if nc else {})},
            "axes": {"x": {"linspace": [-8.0, 8.0, nx]}, "mean": {"linspace": [-1.0, 1.0, nm]}},
            "args": {"sd": 1.5, "log": True},
        },
        "qbeta": {
            "sweep": {"function": "qbeta", "compressor": compressor,
                      **({"chunks": {"p": npr // nc, "shape1": nsh, "shape2": nsh}} if nc else {})},
            "axes": {"p": {"linspace": [0.0005, 0.9995, npr]},
                     "shape1": {"logspace": [-1.0, 1.7, nsh]},
                     "shape2": {"logspace": [-1.0, 1.7, nsh]}},
        },
        "glm.f2_f3": {
            "sweep": {"function": "glm.f2_f3", "compressor": compressor,
                      **({"chunks": {"intercept": 1, "x1": nv // 2}} if nc else {})},
            "glm": {"family": "binomial", "link": "logit", "data": str(data),
                    "response": "y", "predictors": names, "prior_precision": 0.01},
            "axes": axes,
        },
    }


def small(spec: dict[str, Any], chunks: int = 2) -> dict[str, Any]:
    """The spec cut to its first ``chunks`` chunks along the first axis (a warm-up sweep: as
    many as a worker holds at once, so that it has made the pinned memory of their results,
    60-77 ms a chunk of 128 MiB on an H100, before the sweep that is timed)."""
    s = Sweep.from_dict(spec)
    first = s.axes[0].name
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in spec.items()}
    out["axes"] = dict(spec["axes"])
    a = dict(spec["axes"][first])
    kind = next(iter(a))
    lo, hi, n = a[kind]
    keep = min(n, chunks * s.chunks[0])
    a[kind] = [lo, lo + (hi - lo) * (keep - 1) / max(1, n - 1), keep]
    out["axes"][first] = a
    return out


def bare(sweep: Sweep) -> tuple[float, list[dict[str, np.ndarray]]]:
    """Points per second of the chunks evaluated in this process (warm), and the values of
    the first few chunks."""
    first = next(sweep.chunk_indices())
    evaluate_chunk(sweep, first)
    kept: list[dict[str, np.ndarray]] = []
    t0 = time.perf_counter()
    for idx in sweep.chunk_indices():
        r = evaluate_chunk(sweep, idx)
        if len(kept) < _KEEP and r[sweep.output_names[0]].shape == tuple(sweep.chunks):
            kept.append(r)
    return math.prod(sweep.shape) / (time.perf_counter() - t0), kept


def swept(spec: dict[str, Any], client: Any, tmp: Path) -> dict[str, float]:
    """A sweep on the client's cluster (a store written, then removed): points per second,
    float64 MB/s, compression ratio, and the fractions of its time that its chunks spent
    computing (the device busy) and being written (summed over chunks written at once)."""
    out = tmp / "sweep.zarr"
    shutil.rmtree(out, ignore_errors=True)
    s = Sweep.from_dict(spec)
    res = run(s, out, client)
    assert res.computed == s.n_chunks
    last = (read_info(res.group) or {})["runs"][-1]
    disk = sum(f.stat().st_size for name in s.output_names for f in (out / name).rglob("*")
               if f.is_file() and f.name != "zarr.json")
    shutil.rmtree(out, ignore_errors=True)
    raw = sum(math.prod(o.shape) * 8 for o in s.outputs)
    return {"points_per_s": math.prod(s.shape) / res.seconds,
            "MB_per_s": raw / res.seconds / 1e6, "ratio": raw / disk,
            "device_busy": last["compute_seconds"] / res.seconds,
            "writing": last["write_seconds"] / res.seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="gpu", choices=sorted(SIZES), help="problem sizes")
    ap.add_argument("--gpus", default="1", help="worker counts for the scaling runs, e.g. 1,2,4")
    ap.add_argument("--threads", type=int, default=runner._SWEEP_THREADS,
                    help="threads per worker (a sweep's local workers have "
                    f"{runner._SWEEP_THREADS})")
    ap.add_argument("--cases", default="dnorm,qbeta,glm.f2_f3")
    ap.add_argument("--compressor", default=DEFAULT_COMPRESSOR, type=parse_compressor,
                    help=f"the stores' codec (default {DEFAULT_COMPRESSOR})")
    ap.add_argument("--store-seconds", type=float, default=3.0,
                    help="time of each store measurement")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each case (bare, store and sweep measured again in each)")
    ap.add_argument("--tmp", default=None, help="directory for the stores (default: a temp dir)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    load = round(os.getloadavg()[0], 2)  # other work on the machine when this started
    from distributed import Client

    from daskcl.cluster import local_cluster, worker_devices

    tmp = Path(args.tmp or tempfile.mkdtemp(prefix="daskcl-bench-sweep-"))
    tmp.mkdir(parents=True, exist_ok=True)
    specs = {k: v for k, v in cases(args.size, args.compressor, tmp).items()
             if k in args.cases.split(",")}
    writers = max(8, runner._WINDOW_PER_THREAD * args.threads)  # one worker's window
    rows: list[dict[str, Any]] = []
    #: (run, case) -> the bare kernel's rate and the store's, measured once for every worker count
    measured: dict[tuple[int, str], tuple[float, dict[str, float]]] = {}
    one: dict[str, float] = {}
    devices: dict[int, list[str]] = {}
    for n in [int(g) for g in args.gpus.split(",")]:
        warm = [k for k in specs if k != "glm.f2_f3"] + ["glm:binomial:logit"]
        with local_cluster(n, threads_per_worker=args.threads, warm_names=warm,
                           silence_logs=logging.WARNING) as cluster, Client(cluster) as client:
            client.wait_for_workers(n, timeout=300)
            devices[n] = sorted(f"{d['name']} pci {d.get('pci', '?')}"
                                for d in worker_devices(client).values())
            # each run measures the bare kernel, the store and the sweep again, one after the
            # other: the three vary from run to run on a shared host, and a ratio is only
            # as good as the runs it comes from
            for run in range(1, args.repeat + 1):
                for name, spec in specs.items():
                    if (run, name) not in measured:
                        s = Sweep.from_dict(spec)
                        rate_alone, kept = bare(s)
                        measured[run, name] = (rate_alone,
                                               absorb(s, kept, writers, tmp, args.store_seconds))
                        del kept
                    bare_rate, store = measured[run, name]
                    # warm: the sweep's programs, the store path, the pinned memory of the
                    # results a worker holds at once (its window of tasks, and one computing)
                    swept(small(spec, n * (runner._WINDOW_PER_THREAD * args.threads + 1)),
                          client, tmp)
                    got = swept(spec, client, tmp)
                    rate = got["points_per_s"]
                    if n == 1:
                        one[name] = rate
                    st = store["points_per_s"]
                    bound = min(bare_rate, st)
                    row: dict[str, Any] = {
                        "case": name, "workers": n, "run": run, **got,
                        "bare_points_per_s": bare_rate, "store_points_per_s": st,
                        "store_MB_per_s": store["MB_per_s"],
                        "bound": "kernel" if bare_rate <= st else "store"}
                    if n == 1:
                        row.update({"sweep_over_bare": rate / bare_rate,
                                    "sweep_over_store": rate / st,
                                    "sweep_over_bound": rate / bound})
                    else:
                        row["efficiency"] = rate / (n * one[name]) if name in one else ""
                    rows.append(row)
                    print(table([row], list(row)), flush=True)
    if args.repeat > 1:
        for name in specs:
            for n in sorted({r["workers"] for r in rows}):
                key = "sweep_over_bound" if n == 1 else "efficiency"
                got = sorted(r[key] for r in rows if r["case"] == name and r["workers"] == n
                             and r.get(key) != "")
                if got:
                    print(f"{name}, {n} worker(s): {key} median {statistics.median(got):.3f}, "
                          f"range {got[0]:.3f}-{got[-1]:.3f} over {len(got)} runs", flush=True)
    m = machine()
    m.update({"load_average": load, "threads_per_worker": args.threads,
              "compressor": args.compressor,
              "size": args.size, "repeat": args.repeat, "cpu": cpu_name(),
              "store_dir": filesystem(tmp),
              "store_writers": writers, "worker_devices": "; ".join(
                  f"{n}: {', '.join(d)}" for n, d in devices.items())})
    report("sweep", rows, list(dict.fromkeys(k for r in rows for k in r)), args.out, info=m,
           by_device=False)
    if not args.tmp:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
