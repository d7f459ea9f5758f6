# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps through dask and zarr against the bare kernel, and scaling over the GPUs of one host.

* Overhead: for a cheap kernel (``dnorm``) and costly ones (``qbeta``, ``glm.f2_f3``), the
  throughput of ``Sweep.run`` on a local cluster of one worker (one device), writing every chunk
  to a zarr store, against the bare kernel: the same chunks evaluated in this process on the same
  device (host arrays in and out, nothing written).  Ratio = sweep / bare.
* Scaling: the same sweep on local clusters of 1, 2, 4, ... workers (one GPU each); efficiency
  = rate(n) / (n * rate(1)).

Cluster start-up and program builds are excluded (clusters are started and warmed first);
the time of a sweep covers creating the store, every chunk and the final attributes.

Run:  python benchmarks/bench_sweep.py [--size gpu|cpu] [--gpus 1,2] [--threads 1]
"""

from __future__ import annotations

import argparse
import logging
import math
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import machine, table, write

from daskcl.sweep import Sweep, run

HERE = Path(__file__).resolve().parent


SIZES = {  # (dnorm x, dnorm mean), (qbeta p, shapes), (glm l1, values per coefficient), chunks
    "gpu": ((16384, 4096), (16384, 128), (20000, 18), 0),  # 0: the sweep's automatic chunks
    "cpu": ((2048, 512), (512, 16), (2000, 6), 16),
}


def cases(size: str, compressor: str, tmp: Path) -> dict[str, dict[str, Any]]:
    """Sweep specs of about ``nc`` chunks each, or (``nc`` = 0) the chunks a user gets by
    default (GPU sizes: about 2 to 8 s of one H200 per sweep; automatic chunks of 2^22
    elements or 2^16 GLM points give 16 to 512 chunks, enough for 4 workers to end together)."""
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


def bare(sweep: Sweep) -> float:
    """Points per second of the chunks evaluated in this process (warm)."""
    first = next(sweep.chunk_indices())
    sweep.evaluate(first)
    t0 = time.perf_counter()
    for idx in sweep.chunk_indices():
        sweep.evaluate(idx)
    return math.prod(sweep.shape) / (time.perf_counter() - t0)


def swept(spec: dict[str, Any], client: Any, tmp: Path) -> tuple[float, float]:
    """Points per second of a sweep on the client's cluster (a store written, then removed)."""
    out = tmp / "sweep.zarr"
    shutil.rmtree(out, ignore_errors=True)
    s = Sweep.from_dict(spec)
    res = run(s, out, client)
    assert res.computed == s.n_chunks
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    shutil.rmtree(out, ignore_errors=True)
    return math.prod(s.shape) / res.seconds, size / res.seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="gpu", choices=sorted(SIZES), help="problem sizes")
    ap.add_argument("--gpus", default="1", help="worker counts for the scaling runs, e.g. 1,2,4")
    ap.add_argument("--threads", type=int, default=2, help="threads per worker (sweeps use 2)")
    ap.add_argument("--cases", default="dnorm,qbeta,glm.f2_f3")
    ap.add_argument("--compressor", default="zstd", choices=["zstd", "none"])
    ap.add_argument("--tmp", default=None, help="directory for the stores (default: a temp dir)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from distributed import Client

    from daskcl.cluster import local_cluster, worker_devices

    tmp = Path(args.tmp or tempfile.mkdtemp(prefix="daskcl-bench-sweep-"))
    tmp.mkdir(parents=True, exist_ok=True)
    specs = {k: v for k, v in cases(args.size, args.compressor, tmp).items()
             if k in args.cases.split(",")}
    rows: list[dict[str, Any]] = []
    bare_rate = {}
    for name, spec in specs.items():
        s = Sweep.from_dict(spec)
        bare_rate[name] = bare(s)
        print(f"{name}: {math.prod(s.shape)} points, {s.n_chunks} chunks of {math.prod(s.chunks)}; "
              f"bare {bare_rate[name]:.4g} points/s", flush=True)
    one: dict[str, float] = {}
    devices: dict[int, list[str]] = {}
    for n in [int(g) for g in args.gpus.split(",")]:
        warm = [k for k in specs if k != "glm.f2_f3"] + ["glm:binomial:logit"]
        with local_cluster(n, threads_per_worker=args.threads, warm_names=warm,
                           silence_logs=logging.WARNING) as cluster, Client(cluster) as client:
            client.wait_for_workers(n, timeout=300)
            devices[n] = sorted(f"{d['name']} pci {d.get('pci', '?')}"
                                for d in worker_devices(client).values())
            for name, spec in specs.items():
                swept(spec, client, tmp)  # warm: the sweep's own programs, the store path
                rate, bps = swept(spec, client, tmp)
                if n == 1:
                    one[name] = rate
                row = {"case": name, "workers": n, "points_per_s": rate,
                       "store_MB_per_s": bps / 1e6, "bare_points_per_s": bare_rate[name],
                       "sweep_over_bare": rate / bare_rate[name] if n == 1 else "",
                       "efficiency": rate / (n * one[name]) if name in one else ""}
                rows.append(row)
                print(table([row], list(row)), flush=True)
    m = machine()
    m.update({"threads_per_worker": args.threads, "compressor": args.compressor,
              "size": args.size, "worker_devices": "; ".join(
                  f"{n}: {', '.join(d)}" for n, d in devices.items())})
    print(table(rows, list(rows[0])))
    path = write("sweep", {"machine": m, "results": rows}, args.out)
    print(f"wrote {path}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
