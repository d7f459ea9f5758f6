# SPDX-License-Identifier: GPL-2.0-or-later
"""Run a daskcl kernel through CUDA so that Nsight Compute can profile it.

Nsight Compute (``ncu``) does not see OpenCL launches.  NVIDIA's OpenCL binary of a program is
PTX, so this takes the PTX of a ``daskcl.nmath`` function's program, loads it with CuPy
(``cupy.RawModule``: the driver compiles the same PTX the same way), and launches the kernel
with the arguments daskcl gives it (OpenCL buffers replaced by CuPy arrays), on the inputs of
``bench_cheap.py``.  It checks that the result has the OpenCL launch's bits and prints the
kernel's time (CUDA events); run it under ``ncu`` for the counters:

    ncu --clock-control none -k regex:ew_pnorm -c 1 --set full --csv --page details \\
        python benchmarks/profile_cheap.py pnorm
    ncu ... --page source --print-source sass ...     # per-instruction counts and stalls

What it found for pnorm and qnorm is in benchmarks/README.md ("Cheap kernels").

Run:  python benchmarks/profile_cheap.py [pnorm|qnorm|dnorm] [--n 16777216]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

#: each function's inputs (as bench_cheap.py: N(0, 3), or uniform probabilities) and flags
CASES = {
    "pnorm": (lambda r, n: [r.normal(0, 3, n), 0.0, 1.0], [1, 0]),
    "qnorm": (lambda r, n: [r.uniform(0, 1, n), 0.0, 1.0], [1, 0]),
    "dnorm": (lambda r, n: [r.normal(0, 3, n), 0.0, 1.0], [0]),
}


def cuda_kernel(name: str, n: int) -> tuple[Any, tuple[int, ...], tuple[int, ...], tuple[Any, ...],
                                            Any, np.ndarray]:
    """The CuPy function of ``name``'s kernel, its grid, block and arguments for ``n``
    elements, its output array and the OpenCL launch's result on the same inputs."""
    import cupy as cp
    import pyopencl as cl

    from daskcl import config, nmath

    make, flags = CASES[name]
    inputs = make(np.random.default_rng(0), n)
    k = getattr(nmath, name)
    with config.set(binning="0"):
        built = k.program(k._variant(1))
        ref = k(*inputs)
    ptx = built.program.get_info(cl.program_info.BINARIES)[0].rstrip(b"\0")
    path = Path(tempfile.mkdtemp(prefix="profile-cheap-")) / f"{name}.ptx"
    path.write_bytes(ptx)
    fn = cp.RawModule(path=str(path)).get_function(k.definition.kernel_name)
    call = k.prepare(inputs, flags)
    ndims, _ = k._variant(len(call.dims))
    # daskcl's own argument list, with a marker object where each input's buffer goes
    marks = [object() for _ in call.operands]
    tail = k._args(call, ndims, call.dims, [0] * len(call.operands), marks, 0)
    dev = [cp.asarray(a) if isinstance(a, np.ndarray) else cp.zeros(1) for a in inputs]
    status, out = cp.zeros(2, dtype=cp.int32), cp.empty(n)
    args = [np.int64(n), status, out, np.int64(0), np.int64(0)]
    for a in tail:
        hit = [j for j, m in enumerate(marks) if a is m]
        args.append(dev[hit[0]] if hit else a)
    wg = k.gpu_wg
    return fn, (-(-n // wg),), (wg,), tuple(args), out, ref


def main(argv: list[str] | None = None) -> int:
    import cupy as cp

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name", nargs="?", default="pnorm", choices=sorted(CASES))
    ap.add_argument("--n", type=int, default=1 << 24)
    args = ap.parse_args(argv)
    fn, grid, block, kargs, out, ref = cuda_kernel(args.name, args.n)
    fn(grid, block, kargs)
    cp.cuda.Device().synchronize()
    same = bool(np.array_equal(cp.asnumpy(out).view(np.int64), ref.view(np.int64)))
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(10):
        start.record()
        fn(grid, block, kargs)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    print(f"{args.name}: {args.n} elements, {np.median(times[2:]):.4f} ms through CUDA; "
          f"the OpenCL launch's bits: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
