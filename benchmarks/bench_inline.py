# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel speed with the heavy library routines inlined and kept out of line
(``DASKCL_NOINLINE=0`` and ``1``, cl/OPENCL.cl), and tiered (``tiered``, the default of daskcl's GPU workers: the
program in use once the background build of the inlined one has ended), side by side in one
run, and whether the three give the same bits.

For each function of ``bench_nmath.py``'s cases: the kernel alone (inputs on the device, event
timing, median of 10 after 2 warm-ups) on the inputs of its benchmark, built both ways.  The
programs are built first, ``--warm-jobs`` processes at a time, into a private cache directory,
so that the timing process loads them from disk.  The choice of the build default per device
rests on this and on ``bench_build.py --census``.

Run:  python benchmarks/bench_inline.py [--cases issue3,issue4] [--functions pbeta,qbeta]
          [--n 4194304] [--warm-jobs 8] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report
from bench_nmath import CASES, kernel_run

from daskcl.runtime import program

#: functions whose kernels are slow per element: timed on fewer elements
SLOW = {"ptukey": 1 << 14, "qtukey": 1 << 12, "qnbeta": 1 << 16, "qnchisq": 1 << 16,
        "qnt": 1 << 16, "qnf": 1 << 16}


WARM = textwrap.dedent("""
    import sys, warnings
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from daskcl import nmath
    warnings.simplefilter("ignore")
    for name in sys.argv[3:]:
        nargs = len(getattr(nmath, name).fn.arg_names)
        getattr(nmath, name)(np.linspace(0.05, 0.95, 64), *([2.0] * (nargs - 1)))
""")


def warm(names: list[str], jobs: int) -> float:
    """Build every program of ``names``, both ways, ``jobs`` processes at once: a process per
    function and way, the inlined builds of the slowest functions first (one process building
    several in turn left the run waiting on the one that drew qnf)."""
    here = str(Path(__file__).resolve().parent)
    order = sorted(((variant, name) for variant in ("0", "1") for name in names),
                   key=lambda vn: (vn[0] != "0", vn[1] not in SLOW))
    t0 = time.perf_counter()
    running: list[subprocess.Popen[bytes]] = []
    for variant, name in order:
        while len(running) >= max(jobs, 1):
            time.sleep(0.05)
            running = [p for p in running if p.poll() is None]
        running.append(subprocess.Popen([sys.executable, "-c", WARM, here, variant, name],
                                        env={**os.environ, "DASKCL_NOINLINE": variant}))
        running = [p for p in running if p.poll() is None]
    for p in running:
        p.wait()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", default="default,issue3,issue4")
    ap.add_argument("--functions")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--warm-jobs", type=int, default=8)
    ap.add_argument("--out")
    args = ap.parse_args()
    specs = {}
    for case in args.cases.split(","):
        specs.update(CASES[case]())
    names = args.functions.split(",") if args.functions else list(specs)
    os.environ.setdefault("DASKCL_CACHE_DIR", tempfile.mkdtemp(prefix="daskcl-inline-"))
    print(f"built both ways in {warm(names, args.warm_jobs):.1f} s", flush=True)
    from daskcl import nmath

    rng = np.random.default_rng(7)
    rows = []
    for name in names:
        n = SLOW.get(name, args.n)
        inputs = specs[name].inputs(rng, n)
        kernel = getattr(nmath, name)
        out = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for variant, env in (("inline", "0"), ("noinline", "1")):
                program.clear_memory_cache()
                os.environ["DASKCL_NOINLINE"] = env
                out[variant] = kernel_run(kernel, inputs)
            # tiered (daskcl's GPU workers' default): the program in use once the background build is done
            program.clear_memory_cache()
            os.environ["DASKCL_NOINLINE"] = "tiered"
            kernel_run(kernel, inputs, repeat=1, warm=0)  # asks for the inlined program...
            kernel.warm()               # ...whose build starts here, as at a call's end
            program.wait_background()
            out["tiered"] = kernel_run(kernel, inputs)
        (t_in, r_in), (t_out, r_out) = out["inline"], out["noinline"]
        t_tier, r_tier = out["tiered"]
        same = (np.array_equal(r_in.view(np.int64), r_out.view(np.int64))
                and np.array_equal(r_in.view(np.int64), r_tier.view(np.int64)))
        rows.append({"function": name, "n": n, "inline_gels": n / t_in * 1e-9,
                     "noinline_gels": n / t_out * 1e-9, "noinline_speed": t_in / t_out,
                     "tiered_gels": n / t_tier * 1e-9, "tiered_speed": t_in / t_tier,
                     "same_bits": bool(same)})
        print(f"{name:10s} inline {n / t_in * 1e-9:8.3f}  noinline {n / t_out * 1e-9:8.3f}  "
              f"tiered {n / t_tier * 1e-9:8.3f} G el/s  ratios {t_in / t_out:5.2f} "
              f"{t_in / t_tier:5.2f}  same bits {same}", flush=True)
    report("inline", rows, ["function", "n", "inline_gels", "noinline_gels", "noinline_speed",
                            "tiered_gels", "tiered_speed", "same_bits"], args.out)


if __name__ == "__main__":
    main()
