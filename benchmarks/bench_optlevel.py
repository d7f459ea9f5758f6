# SPDX-License-Identifier: GPL-2.0-or-later
"""Build options against cold-build time and kernel speed, side by side in one run.

For each variant (extra build options added to every program, e.g. NVIDIA's
``-cl-nv-opt-level=0``, the optimisation level of its PTX assembler; the empty variant is
today's build) and each function of ``--functions``:

- ``first_s``: the first result of a 4096-element call in a fresh process with empty caches
  (daskcl's and the CUDA driver's, private to the variant; ``POCL_KERNEL_CACHE=0``),
  ``--jobs`` processes at once;
- ``gels``: the kernel alone (inputs on the device, event timing, median of 10) on the inputs
  of ``bench_nmath.py``, in one process per variant that loads the programs the first phase
  cached (so that builds do not disturb the timing);
- ``same_bits``: whether the kernel's output is bit for bit that of the first variant.

This is the evidence for how daskcl builds on a device: a variant that builds faster at the
same bits and speed is a better default; one that builds much faster but runs slower serves a
first result while the full build runs (``build.tiered``).

Run:  python benchmarks/bench_optlevel.py [--variants ",-cl-nv-opt-level=0"]
          [--functions qbeta,pf] [--n 4194304] [--jobs 8] [--out FILE]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report, table

FUNCTIONS = "pnorm,qnorm,dbinom,pgamma,pbeta,qbeta,pf,qt,qf,qnf"

#: functions whose kernels are slow per element: timed on fewer elements
SLOW = {"ptukey": 1 << 14, "qtukey": 1 << 12, "qnbeta": 1 << 16, "qnchisq": 1 << 16,
        "qnt": 1 << 16, "qnf": 1 << 16, "qf": 1 << 18, "qt": 1 << 18}

BUILD = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from bench_build import call_entry
    import os
    os.environ.pop("CUDA_CACHE_DISABLE")       # bench_build turns the driver's cache off
    from daskcl.runtime import device, program
    extra = tuple(sys.argv[3].split())
    plain = program.default_options
    program.default_options = lambda t="CPU": plain(t) + extra
    device.current()
    t0 = time.perf_counter()
    call_entry(sys.argv[2])
    print(json.dumps({"first_s": time.perf_counter() - t0}))
""")

SPEED = textwrap.dedent("""
    import hashlib, json, sys, warnings
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from bench_nmath import CASES, kernel_run
    from daskcl import nmath
    from daskcl.runtime import program
    extra = tuple(sys.argv[2].split())
    plain = program.default_options
    program.default_options = lambda t="CPU": plain(t) + extra
    n_default = int(sys.argv[3])
    slow = json.loads(sys.argv[4])
    specs = {}
    for case in ("default", "issue3", "issue4"):
        specs.update(CASES[case]())
    def generic(r, n, k):   # functions without a bench_nmath case: probabilities, then shapes
        return (r.uniform(0.01, 0.99, n),) + tuple(r.uniform(0.5, 20, n) for _ in range(k - 1))
    rows = {}
    for name in sys.argv[5:]:
        n = slow.get(name, n_default)
        rng = np.random.default_rng(7)
        k = len(getattr(nmath, name).fn.arg_names) - len(getattr(nmath, name).fn.defaults)
        inputs = specs[name].inputs(rng, n) if name in specs else generic(rng, n, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, out = kernel_run(getattr(nmath, name), inputs)
        rows[name] = {"n": n, "gels": n / t * 1e-9,
                      "sha256": hashlib.sha256(out.tobytes()).hexdigest()}
    print(json.dumps(rows))
""")


def _env(cache: Path) -> dict[str, str]:
    """Caches private to a variant: daskcl's, and the CUDA driver's (so that the timing
    process loads the programs without compiling them again)."""
    env = dict(os.environ, DASKCL_CACHE_DIR=str(cache), CUDA_CACHE_PATH=str(cache / "cuda"),
               CUDA_CACHE_MAXSIZE=str(4 << 30), POCL_KERNEL_CACHE="0")
    for k in ("DASKCL_NO_CACHE", "CUDA_CACHE_DISABLE"):
        env.pop(k, None)
    return env


def run(variants: list[str], names: list[str], n: int, jobs: int, root: Path
        ) -> list[dict[str, object]]:
    here = str(Path(__file__).resolve().parent)
    caches = {v: root / f"v{k}" for k, v in enumerate(variants)}

    def build(v: str, name: str) -> tuple[str, str, float]:
        r = subprocess.run([sys.executable, "-c", BUILD, here, name, v], capture_output=True,
                           text=True, env=_env(caches[v]))
        if r.returncode != 0:
            raise RuntimeError(f"{name} [{v}]: {r.stderr.strip()[-1500:]}")
        return v, name, float(json.loads(r.stdout.strip().splitlines()[-1])["first_s"])

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        firsts = {(v, name): t for v, name, t in
                  ex.map(lambda a: build(*a), [(v, m) for m in names for v in variants])}
    print(f"built {len(firsts)} programs in {time.perf_counter() - t0:.1f} s", flush=True)
    print(table([{"function": m, "variant": v or "(default)", "first_s": t}
                 for (v, m), t in sorted(firsts.items(), key=lambda kv: kv[0][::-1])],
                ["function", "variant", "first_s"]), flush=True)
    speeds = {}
    for v in variants:
        r = subprocess.run([sys.executable, "-c", SPEED, here, v, str(n), json.dumps(SLOW),
                            *names], capture_output=True, text=True, env=_env(caches[v]))
        if r.returncode != 0:
            raise RuntimeError(f"speed [{v}]: {r.stderr.strip()[-1500:]}")
        speeds[v] = json.loads(r.stdout.strip().splitlines()[-1])
    rows: list[dict[str, object]] = []
    for name in names:
        base = speeds[variants[0]][name]
        for v in variants:
            s = speeds[v][name]
            rows.append({"function": name, "variant": v or "(default)",
                         "first_s": firsts[(v, name)], "n": s["n"], "gels": s["gels"],
                         "speed_vs_default": s["gels"] / base["gels"],
                         "same_bits": s["sha256"] == base["sha256"]})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default=",-cl-nv-opt-level=0",
                    help="comma-separated extra build options, the first the reference")
    ap.add_argument("--functions", default=FUNCTIONS)
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="daskcl-optlevel-") as tmp:
        rows = run(args.variants.split(","), args.functions.split(","), args.n, args.jobs,
                   Path(tmp))
    report("optlevel", rows, ["function", "variant", "first_s", "gels", "speed_vs_default",
                              "same_bits"], args.out, key="rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
