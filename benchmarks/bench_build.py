# SPDX-License-Identifier: GPL-2.0-or-later
"""Program build time: cold, from the disk cache in a fresh process, and from memory; the
minimal subset a kernel needs against a program holding the whole nmath library.

Run:  python benchmarks/bench_build.py [--out FILE] [--functions dnorm,dbinom]
Takes about a minute on PoCL with 2 cores (the whole-library builds dominate).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write  # noqa: E402

from daskcl import program  # noqa: E402
from daskcl._elementwise import kernel_source  # noqa: E402
from daskcl._nmath_table import ROWS  # noqa: E402
from daskcl.library import get_library  # noqa: E402

FRESH = textwrap.dedent("""
    import sys, time
    from daskcl import device, program
    from daskcl._elementwise import kernel_source
    from daskcl._nmath_table import ROWS
    from daskcl.library import get_library
    fn = {{r.name: r for r in ROWS}}[sys.argv[1]]
    whole = sys.argv[2] == "whole"
    lib = get_library()
    src = kernel_source(fn, 1, list(lib.units) if whole else None)
    device.current()
    t0 = time.perf_counter()
    b = program.build(src)
    print(b.origin, time.perf_counter() - t0)
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out")
    ap.add_argument("--functions", default="dnorm,dbinom")
    args = ap.parse_args()
    rows_by_name = {r.name: r for r in ROWS}
    lib = get_library()
    results = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["DASKCL_CACHE_DIR"] = cache
        for name in args.functions.split(","):
            fn = rows_by_name[name]
            for variant in ("minimal", "whole"):
                src = kernel_source(fn, 1, list(lib.units) if variant == "whole" else None)
                program.clear_memory_cache()
                t0 = time.perf_counter()
                b = program.build(src)
                cold = time.perf_counter() - t0
                assert b.origin == "source"
                t0 = time.perf_counter()
                program.build(src)
                mem = time.perf_counter() - t0
                r = subprocess.run([sys.executable, "-c", FRESH, name, variant], capture_output=True,
                                   text=True, check=True, env=dict(os.environ))
                origin, disk = r.stdout.split()
                assert origin == "disk", r.stdout
                nmath_units = [f for f in src.files if f.startswith("nmath/")]
                results.append({
                    "function": name, "program": variant, "nmath_units": len(nmath_units),
                    "source_bytes": len(src.text), "cold_s": cold, "disk_fresh_process_s": float(disk),
                    "memory_s": mem,
                })
    print(table(results, ["function", "program", "nmath_units", "source_bytes", "cold_s",
                          "disk_fresh_process_s", "memory_s"]))
    info = machine()
    path = write(f"build-{info['device_type'].lower()}", {"machine": info, "results": results}, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
