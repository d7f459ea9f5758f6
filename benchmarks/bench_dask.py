# SPDX-License-Identifier: GPL-2.0-or-later
"""What ``dask.array`` code receives: a daskcl function mapped over the chunks of NumPy-backed
dask arrays (dask's threaded scheduler, each chunk a call from NumPy), against one call on the
whole NumPy array and against CuPy mapped over the same chunks, in one run on identical inputs.

For each function and chunk size (seconds per ``compute()``, median):

- ``dask``: ``fn(*[da.from_array(a, chunks=c) for a in inputs]).compute()``;
- ``one_call``: ``fn(*inputs)`` on the whole NumPy arrays (the host path's own pieces);
- ``dask_numpy``: the same graph with each chunk's inputs summed in NumPy instead: what dask
  itself costs here (slicing, scheduling, the final concatenation into one array);
- ``cupy_dask``: the same dask graph, in a process of its own, with each chunk through
  ``cupy.asarray``, the CuPy function (``bench_delivered.CASES``) and ``cupy.asnumpy``;
- ``ceiling_s``: the bytes of the call at the host's measured ceilings (``bench_transfer.py``:
  the faster input path, the pinned download, one after the other, as in
  ``bench_delivered.py``).

Ratios: ``dask_vs_cupy`` is ``cupy_dask`` over ``dask`` (above 1: daskcl faster);
``dask_of_one_call`` is ``one_call`` over ``dask``; ``dask_of_numpy`` is ``dask_numpy`` over
``dask`` (1: daskcl's chunks cost no more than NumPy's sum of them); ``of_ceiling`` is
``ceiling_s`` over ``dask``.  A chunk's result is concatenated into the array ``compute()``
returns, in every graph.

Run:  python benchmarks/bench_dask.py [--n 67108864] [--chunks 1048576,4194304]
          [--functions pnorm,pbeta] [--repeat 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time, table, write
from bench_delivered import CASES, _cupy, ceilings


def _cupy_dask(name: str, n: int, chunk: int, repeat: int) -> float | None:
    """Seconds per ``compute()`` of the CuPy graph (``None``: no CuPy or no CUDA device), in a
    process of its own that never loads OpenCL: NVIDIA's OpenCL in the process left CuPy's
    kernels invalid on dask's threads (CUDA_ERROR_INVALID_HANDLE)."""
    proc = subprocess.run([sys.executable, __file__, "--cupy-child", name, str(n), str(chunk),
                           str(repeat)], capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        print(f"CuPy peer of {name}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    got = json.loads(lines[-1])
    return None if got is None else float(got)


def _cupy_child(name: str, n: int, chunk: int, repeat: int) -> None:
    import dask.array as da

    peers = _cupy()
    if peers is None:
        print("null")
        return
    cp, cs = peers
    f = CASES[name][1](cs)

    def block(*blocks: np.ndarray) -> np.ndarray:
        out = cp.asnumpy(f(*[cp.asarray(b) for b in blocks]))
        cp.cuda.Stream.null.synchronize()
        return out

    inputs = CASES[name][0](np.random.default_rng(1), n)
    graph = da.map_blocks(block, *[da.from_array(a, chunks=chunk) for a in inputs],
                          dtype=np.float64)
    print(json.dumps(median_time(lambda: graph.compute(), repeat, warmup=1)))


def _numpy_block(*blocks: np.ndarray) -> np.ndarray:
    """A chunk's inputs summed in NumPy: the bytes of a call's chunk read and written on the
    host, nothing else (the graph's own floor)."""
    out = np.array(blocks[0], dtype=np.float64)
    for b in blocks[1:]:
        out += b
    return out


def _row(name: str, n: int, chunk: int, repeat: int, up: float, down: float,
         peers: bool) -> dict[str, Any]:
    import dask.array as da

    from daskcl import nmath

    make = CASES[name][0]
    inputs = make(np.random.default_rng(1), n)
    fn = getattr(nmath, name)
    in_bytes = sum(a.nbytes for a in inputs)
    row: dict[str, Any] = {"function": name, "n": n, "chunk": chunk, "chunks": -(-n // chunk)}
    darrs = [da.from_array(a, chunks=chunk) for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = fn(*inputs)
        got = fn(*darrs).compute()
        row["same"] = bool(np.array_equal(got.view(np.int64), ref.view(np.int64)))
        del got, ref
        row["dask"] = median_time(lambda: fn(*darrs).compute(), repeat, warmup=1)
        floor = da.map_blocks(_numpy_block, *darrs, dtype=np.float64)
        row["dask_numpy"] = median_time(lambda: floor.compute(), repeat, warmup=1)
        row["one_call"] = median_time(lambda: fn(*inputs), repeat, warmup=1)
    row["ceiling_s"] = in_bytes / (up * 1e9) + 8 * n / (down * 1e9)
    row["of_ceiling"] = row["ceiling_s"] / row["dask"]
    row["dask_of_one_call"] = row["one_call"] / row["dask"]
    row["dask_of_numpy"] = row["dask_numpy"] / row["dask"]
    if peers:
        t = _cupy_dask(name, n, chunk, repeat)
        if t is not None:
            row["cupy_dask"] = t
            row["dask_vs_cupy"] = t / row["dask"]
    return row


def run(names: list[str], n: int, chunks: list[int], repeat: int,
        peers: bool = True) -> dict[str, Any]:
    import dask

    rates, up, down = ceilings()
    rows = []
    for name in names:
        for chunk in chunks:
            row = _row(name, n, chunk, repeat, up, down, peers)
            gc.collect()
            rows.append(row)
            print(table([row], [c for c in ("function", "chunk", "same", "dask", "one_call",
                                            "dask_numpy", "cupy_dask", "dask_vs_cupy",
                                            "dask_of_one_call", "of_ceiling") if c in row]),
                  flush=True)
    info = machine()
    info["dask_threads"] = dask.config.get("num_workers", None) or "default (the cores)"
    return {"machine": info, "ceilings_GB_s": rates, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 26, help="elements of each input")
    ap.add_argument("--chunks", default=f"{1 << 20},{1 << 22}", help="chunk sizes, elements")
    ap.add_argument("--functions", default="pnorm,pbeta")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-peer", action="store_true", help="daskcl alone (no CuPy)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--cupy-child", nargs=4, metavar=("NAME", "N", "CHUNK", "REPEAT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cupy_child:
        name, n, chunk, repeat = args.cupy_child
        _cupy_child(name, int(n), int(chunk), int(repeat))
        return
    payload = run(args.functions.split(","), args.n, [int(c) for c in args.chunks.split(",")],
                  args.repeat, not args.no_peer)
    print("wrote", write("dask", payload, args.out))


if __name__ == "__main__":
    main()
