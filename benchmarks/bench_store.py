# SPDX-License-Identifier: GPL-2.0-or-later
"""What a sweep store absorbs: MB/s of float64 written through daskcl's own write path, per codec.

A sweep cannot write faster than its store takes chunks in: compression, the zarr write and
the checksum, on the CPU threads of the worker's host.  This measures that ceiling without a
device, for the outputs sweeps write:

* ``dnorm``: the log density of a normal over a grid (x in [-8, 8], mean in [-1, 1], sd 1.5),
  as ``bench_sweep.py``'s dnorm sweep writes it: a smooth field whose bits still vary in every
  mantissa byte;
* ``noisy``: uniform random numbers in (0, 1): full-entropy mantissas, the worst case (the
  outputs of quantile functions such as qbeta come close).

Two measurements:

* ``codec``: one chunk of 2^20 values encoded by the codec alone, on one thread, in memory
  (MB/s of float64 in, compression ratio);
* ``store``: whole task chunks (2^22 values, 32 MiB) written by ``daskcl.sweep.store.Store.write_chunk``
  (zarr chunks of 2^20 values, one zarr shard per task or one file per zarr chunk, the CRC-32C of
  each chunk, its mark) to a fresh store on local disk, ``--writers`` chunks at a time (a
  sweep's worker writes several chunks while the next computes), with zarr's thread pool
  limited to ``threads`` threads (``zarr.config`` ``threading.max_workers``, one process per
  thread count).  MB/s of float64 absorbed (not bytes on disk) and the compression ratio
  (float64 bytes over bytes on disk).  The files land in the page cache: a store larger than
  the memory the kernel lets it hold dirty is bound by the disk instead.

Run:  python benchmarks/bench_store.py [--threads 1,2,4,8,16] [--codecs ...] [--kinds dnorm,noisy]
      [--layouts shards,chunks] [--seconds 1.5] [--tmp DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import machine, report, table

from daskcl.sweep import Sweep, store
from daskcl.sweep.spec import parse_compressor

#: every codec, measured alone; the store part writes the fast ones (``--codecs``)
CODECS = ["none", "blosc-lz4:5", "blosc-lz4:1", "blosc-zstd:1", "zstd:1", "zstd:3", "zstd:5",
          "gzip:1"]
STORE_CODECS = ["none", "blosc-lz4:5", "blosc-lz4:1", "blosc-zstd:1", "zstd:1", "zstd:3"]
KINDS = ["dnorm", "noisy"]
#: the task chunk (x values by mean values) and the whole grid of the store benchmark: 2^22
#: values a task, as a sweep's automatic chunks, 32 task chunks a store
CHUNK = (1024, 4096)
GRID = (32 * 1024, 4096)


def field(kind: str, rows: slice, seed: int = 0) -> np.ndarray:
    """The values of ``rows`` of the benchmark grid (C-ordered float64)."""
    nx, nm = GRID
    if kind == "dnorm":
        x = np.linspace(-8.0, 8.0, nx)[rows, None]
        mean = np.linspace(-1.0, 1.0, nm)[None, :]
        z = (x - mean) / 1.5
        return np.ascontiguousarray(-0.5 * z * z - math.log(1.5 * math.sqrt(2 * math.pi)))
    if kind == "noisy":
        n = rows.stop - rows.start
        return np.random.default_rng([seed, rows.start]).random((n, nm))
    raise ValueError(f"unknown kind {kind!r}; known: {KINDS}")


def codec_rate(codec: str, values: np.ndarray, seconds: float) -> tuple[float, float]:
    """MB/s of float64 encoded by ``codec`` (not ``"none"``) on one thread (numcodecs'
    implementation, which zarr's codecs call), and the compression ratio."""
    import numcodecs

    name, _, level = parse_compressor(codec).partition(":")
    numcodecs.blosc.set_nthreads(1)
    enc: Any
    if name.startswith("blosc-"):
        enc = numcodecs.Blosc(cname=name.removeprefix("blosc-"), clevel=int(level),
                              shuffle=numcodecs.Blosc.SHUFFLE, typesize=8)
    elif name == "zstd":
        enc = numcodecs.Zstd(level=int(level))
    else:
        enc = numcodecs.GZip(level=int(level))
    out = enc.encode(values)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < 2:
        enc.encode(values)
        n += 1
    dt = (time.perf_counter() - t0) / n
    return values.nbytes / dt / 1e6, values.nbytes / len(out)


def grid_sweep(codec: str, grid: tuple[int, int] = GRID, chunk: tuple[int, int] = CHUNK
               ) -> Sweep:
    """A dnorm sweep over the benchmark grid (its values are written, never computed here)."""
    return Sweep.from_dict({
        "sweep": {"function": "dnorm", "compressor": codec,
                  "chunks": {"x": chunk[0], "mean": chunk[1]}},
        "axes": {"x": {"linspace": [-8.0, 8.0, grid[0]]},
                 "mean": {"linspace": [-1.0, 1.0, grid[1]]}},
        "args": {"sd": 1.5, "log": True}})


def absorb(sweep: Sweep, chunks: Sequence[dict[str, np.ndarray]], writers: int, tmp: Path,
           seconds: float, shards: bool = False) -> dict[str, float]:
    """Write the arrays ``chunks`` (full chunks of ``sweep``, cycled; cut to size at the
    edges) as the sweep's chunks, in order, ``writers`` at a time, through
    ``daskcl.sweep.store.Store.write_chunk`` (each array opened once, as a sweep's worker has them)
    into a fresh store under ``tmp``, until every chunk of
    the sweep is written or ``seconds`` have passed (the first chunk, of a sweep of several,
    warms the threads and is not timed).  Returns points/s, MB/s of float64 absorbed, the
    compression ratio and files per chunk."""
    out = tmp / f"absorb-{os.getpid()}.zarr"
    shutil.rmtree(out, ignore_errors=True)
    url = str(out)
    st = store.Store(url)
    sweep, _ = st.open(sweep, resume=False, overwrite=False)
    st.create(sweep, None, shards=shards)
    st.writer()    # each array opened once, as a sweep's worker has them

    def values(k: int, idx: tuple[int, ...]) -> dict[str, np.ndarray]:
        cut = tuple(slice(0, s.stop - s.start) for s in sweep.chunk_slices(idx))
        return {n: a[cut] for n, a in chunks[k % len(chunks)].items()}

    indices: Iterator[tuple[int, ...]] = sweep.chunk_indices()
    warm = [next(indices) for _ in range(sweep.n_chunks > 1)]
    written = points = nbytes = 0
    with ThreadPoolExecutor(writers) as pool:
        for i in warm:
            st.write_chunk(sweep, i, values(0, i))
        t0 = time.perf_counter()
        pending = []
        for k, idx in enumerate(indices):
            data = values(k, idx)
            pending.append(pool.submit(st.write_chunk, sweep, idx, data))
            points += data[sweep.output_names[0]].size
            nbytes += sum(a.nbytes for a in data.values())
            written += 1
            if len(pending) >= writers:
                pending.pop(0).result()
            if time.perf_counter() - t0 > seconds and written >= 2 * writers:
                break
        for f in pending:
            f.result()
        dt = time.perf_counter() - t0
    files = [f for name in sweep.output_names for f in (out / name).rglob("*")
             if f.is_file() and f.name != "zarr.json"]
    disk = sum(f.stat().st_size for f in files)
    marked = int(st.read_book().done.sum())
    shutil.rmtree(out, ignore_errors=True)
    if marked != written + len(warm):
        raise RuntimeError(f"{marked} chunks marked, {written + len(warm)} written")
    raw = sum(math.prod(o.shape) * 8 for o in sweep.outputs) * marked / sweep.n_chunks
    return {"points_per_s": points / dt, "MB_per_s": nbytes / dt / 1e6,
            "ratio": raw / disk if disk else float("inf"),
            "files_per_chunk": len(files) / marked}


def child(args: argparse.Namespace) -> None:
    """One thread count: every codec, kind and layout; JSON rows on stdout."""
    import zarr

    zarr.config.set({"threading.max_workers": args.threads})
    tmp = Path(args.tmp)
    for kind in args.kinds.split(","):
        data = [{"dnorm": field(kind, slice(i * CHUNK[0], (i + 1) * CHUNK[0]))}
                for i in range(4)]
        for codec in args.codecs.split(","):
            for layout in args.layouts.split(","):
                r = absorb(grid_sweep(codec), data, args.writers or args.threads, tmp,
                           args.seconds, shards=layout == "shards")
                print(json.dumps({"part": "store", "kind": kind, "codec": codec,
                                  "layout": layout, "threads": args.threads,
                                  "writers": args.writers or args.threads, **r}), flush=True)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def filesystem(path: Path) -> str:
    """The file system type and device holding ``path`` (Linux), else ''."""
    try:
        r = subprocess.run(["df", "-T", str(path)], capture_output=True, text=True, check=True)
        dev, fstype = r.stdout.splitlines()[1].split()[:2]
        return f"{fstype} on {dev}"
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError):
        return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default=None,
                    help="zarr thread counts, e.g. 1,2,4,16 (default: 1, 2, 4, ... up to the "
                    "cores)")
    ap.add_argument("--writers", type=int, default=0,
                    help="chunks written at once (default: as many as threads)")
    ap.add_argument("--codecs", default=",".join(STORE_CODECS),
                    help="codecs of the store part (the codec part measures all of "
                    + ", ".join(CODECS) + ")")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--layouts", default="chunks,shards",
                    help="chunks: one file per zarr chunk (daskcl's default); shards: one zarr "
                    "shard per task")
    ap.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    ap.add_argument("--tmp", default=None, help="directory of the stores (default: a temp dir)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    load = round(os.getloadavg()[0], 2)  # other work on the machine when this started
    if args.child:
        args.threads = int(args.threads)
        child(args)
        return
    cores = os.cpu_count() or 1
    threads = ([int(t) for t in args.threads.split(",")] if args.threads else
               sorted({min(2 ** k, cores) for k in range(int(math.log2(cores)) + 2)}))
    tmp = Path(args.tmp or tempfile.mkdtemp(prefix="daskcl-bench-store-"))
    tmp.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for kind in args.kinds.split(","):
        values = field(kind, slice(0, 256))  # 2^20 values, one zarr chunk
        for codec in CODECS[1:]:  # not "none"
            rate, ratio = codec_rate(codec, values, min(args.seconds, 1.0))
            row = {"part": "codec", "kind": kind, "codec": codec, "layout": "", "threads": 1,
                   "writers": "", "MB_per_s": rate, "ratio": ratio}
            rows.append(row)
            print(table([row], list(row)), flush=True)
    for n in threads:
        cmd = [sys.executable, __file__, "--child", "--threads", str(n), "--writers",
               str(args.writers), "--codecs", args.codecs, "--kinds", args.kinds, "--layouts",
               args.layouts, "--seconds", str(args.seconds), "--tmp", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            sys.exit(f"bench_store child ({n} threads) failed:\n{proc.stderr[-4000:]}")
        for line in proc.stdout.splitlines():
            row = json.loads(line)
            rows.append(row)
            print(table([row], list(row)), flush=True)
    m = machine()
    m.update({"load_average": load, "cpu": cpu_name(), "cores": cores,
              "store_dir": filesystem(tmp),
              "chunk": "x".join(map(str, CHUNK)), "zarr_chunk": "256x4096"})
    cols = ["part", "kind", "codec", "layout", "threads", "writers", "MB_per_s", "ratio",
            "points_per_s", "files_per_chunk"]
    report("store", rows, cols, args.out, info=m, by_device=False)
    if not args.tmp:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
