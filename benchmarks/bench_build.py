# SPDX-License-Identifier: GPL-2.0-or-later
"""Program build time: cold, from the disk cache in a fresh process, and from memory; the
minimal subset a kernel needs against a program holding the whole nmath library.

Each figure is the time to the first result of a one-element call (build, kernel creation and
the first launch: PoCL, like several drivers, generates machine code at the first launch, so the
build alone would flatter it).  The driver's own caches are turned off so that only daskcl's are
measured, and an unrelated program is built first so that compiler start-up is not counted.

Run:  python benchmarks/bench_build.py [--out FILE] [--functions dnorm,dbinom,pbeta,qt,pnbeta,ptukey]
Takes under a minute on PoCL with 2 cores.

Census (``--census``): the cold first result of every non-random ``daskcl.nmath`` function,
every random generator and f2_f3's six family/links, each in a fresh process with every cache
off (daskcl's, PoCL's, ``CUDA_CACHE_DISABLE=1``), on the bound device: seconds to bind the
device, seconds to the first result of a 4096-element call (a 4096-point grid for f2_f3, l1 =
100, l2 = 16), the programs it built and their source and binary sizes.  ``--options`` adds
build options to every program; ``DASKCL_NOINLINE=0`` or ``1`` in the environment chooses
whether the heavy library routines are kept out of line (cl/OPENCL.cl; out of line on GPUs by
default); ``--jobs`` runs that many processes at once (each build is one compiler
thread); ``--names`` limits the census (``nmath:pbeta,random:rgamma,glm:binomial:logit``).

    DASKCL_NOINLINE=0 python benchmarks/bench_build.py --census [--jobs 8] --out F
"""

from __future__ import annotations

import os

os.environ["POCL_KERNEL_CACHE"] = "0"
os.environ["CUDA_CACHE_DISABLE"] = "1"

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write

from daskcl.kernels._elementwise import Binning, Elementwise, kernel_source
from daskcl.kernels._nmath_table import ROWS
from daskcl.runtime import program
from daskcl.runtime.library import ProgramSource, get_library


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
    from daskcl.runtime import device, program
    device.current()
    impl = make(sys.argv[1], sys.argv[2])
    t = first_result(impl)
    print(program.stats["disk"], t)
""")


def census_names() -> list[str]:
    """Every census entry: ``nmath:NAME``, ``random:NAME``, ``glm:FAMILY:LINK``."""
    from daskcl import glm, random

    out = [f"nmath:{r.name}" for r in ROWS]
    out += [f"random:{r.name}" for r in random.ROWS]
    out += [f"glm:{f}:{lk}" for f, lk in glm.FAMILIES]
    return out


def census_one(entry: str, options: tuple[str, ...]) -> dict[str, object]:
    """The first result of ``entry`` in this (fresh) process, with ``options`` added to every
    build; what was built is recorded by wrapping the program cache's builder."""
    import warnings

    import numpy as np
    import pyopencl as cl

    from daskcl import glm, nmath
    from daskcl.runtime import device

    built: list[dict[str, int]] = []
    plain_options = program.default_options
    program.default_options = lambda t="CPU": plain_options(t) + options  # type: ignore[assignment]
    plain_build = program._load_or_build

    def recording(bound, source, opts, key):  # type: ignore[no-untyped-def]
        res = plain_build(bound, source, opts, key)
        sizes = res.program.get_info(cl.program_info.BINARY_SIZES)
        built.append({"source_bytes": len(source.text), "binary_bytes": int(sum(sizes))})
        return res

    program._load_or_build = recording  # type: ignore[assignment]
    t0 = time.perf_counter()
    device.current()
    bind = time.perf_counter() - t0
    n = 4096
    kind, _, name = entry.partition(":")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "nmath":
            fn = {r.name: r for r in ROWS}[name]
            x = np.linspace(0.05, 0.95, n)
            getattr(nmath, name)(x, *([2.0] * (len(fn.args) - 1 - len(fn.defaults))))
        elif kind == "random":
            from daskcl import random

            rfn = {r.name: r for r in random.ROWS}[name]
            getattr(nmath, name)(n, *([2.0] * (len(rfn.args) - len(rfn.defaults))), seed=1)
        else:
            family, link = name.split(":")
            rng = np.random.default_rng(1)
            l1, l2 = 100, 16
            x = rng.normal(size=(l1, l2))
            y = rng.uniform(0.1, 0.9, l1) if family == "binomial" else rng.uniform(1, 5, l1)
            glm.f2_f3(family, link, rng.normal(0, 0.1, (n, l2)), y, x, np.zeros(l2), np.eye(l2),
                      np.zeros(l1), np.ones(l1))
    first = time.perf_counter() - t0
    return {"entry": entry, "bind_s": bind, "first_s": first, "programs": len(built),
            "source_bytes": sum(b["source_bytes"] for b in built),
            "binary_bytes": sum(b["binary_bytes"] for b in built)}


CENSUS_CHILD = textwrap.dedent("""
    import os, sys, json
    os.environ["POCL_KERNEL_CACHE"] = "0"; os.environ["CUDA_CACHE_DISABLE"] = "1"
    os.environ["DASKCL_NO_CACHE"] = "1"
    sys.path.insert(0, sys.argv[1])
    from bench_build import census_one
    print(json.dumps(census_one(sys.argv[2], tuple(sys.argv[3:]))))
""")


def census(names: list[str], options: tuple[str, ...], jobs: int) -> list[dict[str, object]]:
    """Run the census entries in fresh processes, ``jobs`` at a time, in the order given."""
    from concurrent.futures import ThreadPoolExecutor

    here = str(Path(__file__).resolve().parent)

    def one(entry: str) -> dict[str, object]:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", CENSUS_CHILD, here, entry, *options],
                           capture_output=True, text=True, env=dict(os.environ))
        if r.returncode != 0:
            return {"entry": entry, "error": (r.stderr.strip().splitlines() or ["?"])[-1]}
        row: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
        row["process_s"] = time.perf_counter() - t0
        print(f"{entry:32s} {row['first_s']:8.2f} s  {row['programs']} program(s)", flush=True)
        return row

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, names))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out")
    ap.add_argument("--functions", default="dnorm,dbinom,pbeta,qt,pnbeta,ptukey")
    ap.add_argument("--census", action="store_true", help="the census (see the module docstring)")
    ap.add_argument("--names", help="census entries, comma-separated (default: all)")
    ap.add_argument("--options", default="", help="extra build options, space-separated")
    ap.add_argument("--jobs", type=int, default=1, help="census processes at once")
    args = ap.parse_args()
    if args.census:
        names = args.names.split(",") if args.names else census_names()
        options = tuple(args.options.split())
        t0 = time.perf_counter()
        rows = census(names, options, args.jobs)
        wall = time.perf_counter() - t0
        ok = [r for r in rows if "error" not in r]
        total = sum(float(r["first_s"]) for r in ok)  # type: ignore[arg-type]
        print(f"{len(ok)} of {len(rows)} entries; first results add up to {total:.1f} s "
              f"({wall:.1f} s wall with {args.jobs} at once)")
        for r in rows:
            if "error" in r:
                print(f"FAILED {r['entry']}: {r['error']}")
        info = machine()
        tag = "census"
        path = write(f"{tag}-{info['device_type'].lower()}",
                     {"machine": info, "options": list(options),
                      "noinline": os.environ.get("DASKCL_NOINLINE", "default"), "jobs": args.jobs,
                      "total_first_s": total, "wall_s": wall, "results": rows}, args.out)
        print(f"wrote {path}")
        return
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
