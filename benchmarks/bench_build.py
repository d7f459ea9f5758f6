# SPDX-License-Identifier: GPL-2.0-or-later
"""Program build time: cold, from the disk cache in a fresh process, and from memory; the
minimal subset a kernel needs against a program holding the whole nmath library.

Each figure is the time to the first result of a one-element call (build, kernel creation and
the first launch: PoCL, like several drivers, generates machine code at the first launch, so the
build alone would flatter it).  The driver's own caches are turned off so that only daskcl's are
measured, and an unrelated program is built first so that compiler start-up is not counted.

Run:  python benchmarks/bench_build.py [--out FILE] [--functions dnorm,dbinom,pbeta,qt,pnbeta,ptukey]
Takes under a minute on PoCL with 2 cores.
"""

from __future__ import annotations

import os

os.environ["POCL_KERNEL_CACHE"] = "0"
os.environ["CUDA_CACHE_DISABLE"] = "1"

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write

from daskcl import program
from daskcl._elementwise import Binning, Elementwise, kernel_source
from daskcl._nmath_table import ROWS
from daskcl.library import ProgramSource, get_library


class WholeLibrary(Elementwise):
    """The same kernel, but in a program that holds every nmath unit."""

    def _source(self, ndim: int, bins: Binning | None) -> ProgramSource:
        return kernel_source(self.fn, ndim, list(get_library().units), binning=bins)


def make(name: str, variant: str) -> Elementwise:
    fn = {r.name: r for r in ROWS}[name]
    return WholeLibrary(fn) if variant == "whole" else Elementwise(fn)


def first_result(impl: Elementwise) -> float:
    args = [1.0] * len(impl.fn.args)
    t0 = time.perf_counter()
    impl(*args)
    return time.perf_counter() - t0


FRESH = textwrap.dedent("""
    import os, sys
    os.environ["POCL_KERNEL_CACHE"] = "0"; os.environ["CUDA_CACHE_DISABLE"] = "1"
    sys.path.insert(0, sys.argv[3])
    from bench_build import make, first_result
    from daskcl import device, program
    device.current()
    impl = make(sys.argv[1], sys.argv[2])
    t = first_result(impl)
    print(program.stats["disk"], t)
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out")
    ap.add_argument("--functions", default="dnorm,dbinom,pbeta,qt,pnbeta,ptukey")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parent)
    results = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["DASKCL_CACHE_DIR"] = cache
        first_result(make("log1pexp", "minimal"))  # compiler start-up, not counted
        for name in args.functions.split(","):
            for variant in ("minimal", "whole"):
                impl = make(name, variant)
                src = impl.source(1)
                program.clear_memory_cache()
                cold = first_result(impl)
                mem = first_result(impl)
                r = subprocess.run([sys.executable, "-c", FRESH, name, variant, here],
                                   capture_output=True, text=True, check=True, env=dict(os.environ))
                from_disk, disk = r.stdout.split()
                assert from_disk == "1", r.stdout
                results.append({
                    "function": name, "program": variant,
                    "nmath_units": sum(f.startswith("nmath/") for f in src.files),
                    "source_bytes": len(src.text), "cold_s": cold,
                    "disk_fresh_process_s": float(disk), "memory_s": mem,
                })
    print(table(results, ["function", "program", "nmath_units", "source_bytes", "cold_s",
                          "disk_fresh_process_s", "memory_s"]))
    info = machine()
    path = write(f"build-{info['device_type'].lower()}", {"machine": info, "results": results}, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
