# SPDX-License-Identifier: GPL-2.0-or-later
"""Where an NVIDIA cold build goes after the OpenCL compiler: the PTX compilation, whole-program
against separately compiled functions.

NVIDIA's OpenCL binary of a program is PTX, and loading it compiles the PTX for the GPU
(``bench_build.py --split``: 65-94% of a cold build).  The library's heavy routines are already
out of line (``NMATH_NOINLINE``), yet the PTX has no mark that keeps the GPU compiler from
treating the program as one whole.  For each program this times, with the driver's cache off:

* ``ptxas_whole`` / ``ptxas_reloc``: the CUDA toolkit's ``ptxas`` on the program's PTX, as one
  whole program (what the driver does when OpenCL loads it) and with ``-c`` (each function
  compiled on its own against the standard calling convention, then linked); where ``ptxas``
  is on the PATH;
* ``driver_load`` / ``driver_link``: the same two through the CUDA driver (CuPy's
  ``moduleLoadData`` and ``linkCreate``/``linkAddData``/``linkComplete``), the compiler every
  machine with NVIDIA's OpenCL has;
* ``opencl_cubin``: whether NVIDIA's OpenCL takes the linked machine code (a cubin) as a
  program binary, and if so whether its kernel gives the PTX program's bits and how fast it
  runs (``speed_cubin``: the PTX program's kernel time over the cubin's, on the function's
  ``bench_nmath.py`` inputs).

Run on an NVIDIA machine with CuPy:  CUDA_CACHE_DISABLE=1 python benchmarks/bench_jit.py
[--names pbeta,qbeta,pf,qf] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report


def _ptxas(ptx: Path, arch: str, reloc: bool) -> float | None:
    exe = shutil.which("ptxas")
    if exe is None:
        return None
    cmd = [exe, f"-arch=sm_{arch}", str(ptx), "-o", str(ptx.with_suffix(".cubin"))]
    if reloc:
        cmd.insert(1, "-c")
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def _kernel_ms(kernel: Any, program: Any, inputs: list[Any]) -> tuple[float, np.ndarray]:
    """Median OpenCL event time of ``kernel``'s launch over ``inputs`` with ``program`` as its
    built program, and the result."""
    import pyopencl as cl
    import pyopencl.array as cla

    from daskcl.runtime import device

    bound = device.current()
    q = bound.queue
    call = kernel.prepare(inputs, [1, 0])
    out = cla.empty(q, call.shape, np.float64)
    status = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 8)
    kernel.program = lambda variant=None: program      # this launch's program, not the cache's
    try:
        times = []
        for _ in range(7):
            evs = kernel.enqueue(call, [out], status)
            evs[-1].wait()
            times.append((evs[-1].profile.end - evs[0].profile.start) * 1e-6)
    finally:
        del kernel.program
    return float(np.median(times[2:])), out.get()


def run(names: list[str], n: int) -> list[dict[str, Any]]:
    import cupy as cp

    from daskcl import config, nmath
    from daskcl.runtime import device

    cp.zeros(1)                            # the CUDA context of CuPy's device
    arch = "".join(str(v) for v in cp.cuda.Device().compute_capability)
    bound = device.current()
    rng = np.random.default_rng(1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-jit-"))
    rows = []
    for name in names:
        with config.set(binning="0"):       # the plain program: no sorted launches
            rows.append(_one(name, nmath, arch, bound, rng, n, tmp))
    shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _one(name: str, nmath: Any, arch: str, bound: Any, rng: np.random.Generator, n: int,
         tmp: Path) -> dict[str, Any]:
    import pyopencl as cl
    from cupy.cuda import driver as drv

    from daskcl.runtime.program import BuiltProgram

    k = getattr(nmath, name)
    t0 = time.perf_counter()
    built = k.program(k._variant(1))
    row: dict[str, Any] = {"function": name, "opencl_build_s": time.perf_counter() - t0}
    ptx = built.program.get_info(cl.program_info.BINARIES)[0].rstrip(b"\0")
    row["ptx_bytes"] = len(ptx)
    path = tmp / f"{name}.ptx"
    path.write_bytes(ptx)
    row["ptxas_whole_s"] = _ptxas(path, arch, False)
    row["ptxas_reloc_s"] = _ptxas(path, arch, True)
    t0 = time.perf_counter()
    drv.moduleLoadData(ptx + b"\0")
    row["driver_load_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    state = drv.linkCreate()
    drv.linkAddData(state, 1, ptx + b"\0", name)      # CU_JIT_INPUT_PTX
    cubin = bytes(drv.linkComplete(state))
    drv.linkDestroy(state)
    row["driver_link_s"] = time.perf_counter() - t0
    try:
        prg = cl.Program(bound.context, [bound.device], [cubin]).build()
        row["opencl_cubin"] = "built"
    except Exception as exc:       # the answer is the error
        row["opencl_cubin"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
        return row
    inputs = _inputs(name, rng, n, k)
    ms_ptx, ref = _kernel_ms(k, built, inputs)
    other = BuiltProgram(prg, built.source, built.options, "source")
    ms_cubin, got = _kernel_ms(k, other, inputs)
    row["same_bits"] = bool(np.array_equal(ref.view(np.int64), got.view(np.int64)))
    row["kernel_ptx_ms"], row["kernel_cubin_ms"] = ms_ptx, ms_cubin
    row["speed_cubin"] = ms_ptx / ms_cubin
    return row


def _inputs(name: str, rng: np.random.Generator, n: int, kernel: Any) -> list[Any]:
    """Inputs of the kind each function takes: probabilities for quantiles, positive
    quantiles and shapes otherwise."""
    nargs = len(kernel.input_names)
    first = rng.uniform(0, 1, n) if name.startswith("q") else rng.uniform(0, 3, n)
    return [first] + [rng.uniform(0.5, 20, n) for _ in range(nargs - 1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--names", default="pnorm,pgamma,pbeta,qbeta,pf,qf")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    if os.environ.get("CUDA_CACHE_DISABLE") != "1":
        print("note: CUDA_CACHE_DISABLE=1 is not set; the driver's cache may answer the loads")
    rows = run(args.names.split(","), args.n)
    report("jit", rows, ["function", "ptx_bytes", "opencl_build_s", "ptxas_whole_s",
                         "ptxas_reloc_s", "driver_load_s", "driver_link_s", "opencl_cubin",
                         "same_bits", "speed_cubin"], args.out, key="rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
