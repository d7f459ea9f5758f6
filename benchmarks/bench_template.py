# SPDX-License-Identifier: GPL-2.0-or-later
"""What the elementwise template itself costs: a trivial function (a0 + a1) through three
launch schemes, against the device's copy bandwidth.

  grid-stride/long   the template as shipped (64-bit grid-stride loop, strided loads)
  grid-stride/int    the same loop with 32-bit indices (valid while n < 2^31)
  one-per-item       one element per work-item, global size = n

Run:  python benchmarks/bench_template.py [--n 67108864] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write

SRC = r"""
__kernel void gs_long(const long n, __global double *restrict out, __global const double *restrict p0,
                      const long st0, __global const double *restrict p1, const long st1)
{
    for (long i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = p0[i * st0] + p1[i * st1];
}
__kernel void gs_int(const int n, __global double *restrict out, __global const double *restrict p0,
                     const int st0, __global const double *restrict p1, const int st1)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = p0[i * st0] + p1[i * st1];
}
__kernel void one(const long n, __global double *restrict out, __global const double *restrict p0,
                  const long st0, __global const double *restrict p1, const long st1)
{
    const long i = get_global_id(0);
    if (i < n) out[i] = p0[i * st0] + p1[i * st1];
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--out")
    args = ap.parse_args()
    import pyopencl as cl
    from bench_nmath import copy_bandwidth

    from daskcl.runtime import device, program
    from daskcl.runtime.library import ProgramSource, get_library

    bound = device.current()
    lib = get_library()
    src = lib.program_source([], SRC, "bench_template")
    built = program.build(ProgramSource(src.text, src.files, src.line_map))
    n = args.n
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=n), rng.normal(size=n)
    mf = cl.mem_flags
    da = cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    out = cl.Buffer(bound.context, mf.WRITE_ONLY, n * 8)
    bw = copy_bandwidth()
    gpu = bound.info.type == "GPU"
    local = (256,) if gpu else None
    cap = bound.info.compute_units * 2048
    rows = []
    for name, it, g in (("gs_long", np.int64, min(n, cap)), ("gs_int", np.int32, min(n, cap)),
                        ("one", np.int64, n)):
        k, _ = built.kernel(name)
        gs = -(-g // 256) * 256 if gpu else g
        times = []
        for _ in range(12):
            ev = k(bound.queue, (gs,), local, it(n), out, da, it(1), db, it(1))
            ev.wait()
            times.append((ev.profile.end - ev.profile.start) * 1e-9)
        t = float(np.median(times[2:]))
        res = np.empty(n)
        cl.enqueue_copy(bound.queue, res, out)
        assert np.array_equal(res, a + b)
        rows.append({"scheme": name, "Gel_s": n / t / 1e9, "bandwidth_fraction": 24 * n / t / bw})
    print(table(rows, ["scheme", "Gel_s", "bandwidth_fraction"]))
    info = machine()
    info["copy_bandwidth_GB_s"] = bw / 1e9
    print(f"wrote {write('template-' + info['device_type'].lower(), {'machine': info, 'results': rows}, args.out)}")


if __name__ == "__main__":
    main()
