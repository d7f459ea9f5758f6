# SPDX-License-Identifier: GPL-2.0-or-later
"""Two kernel libraries side by side: kernel speed and bits of each function, built from the
library of this checkout and from another (``--before``: a directory laid out like ``cl/``,
such as the ``cl/`` of an earlier commit: ``git archive HEAD~1 cl | tar -x -C /tmp/old``).

For a change to ``cl/`` that must keep every result (the costly built-ins kept out of line, a
rewritten routine): each function of ``bench_nmath.py``'s cases runs in one process per
library (``DASKCL_LIBRARY``), the kernel alone on the same inputs (event timing, median of 10
after 2 warm-ups, through the public kernel layer), with the build options of the device's
default.  The libraries take turns per function (``--rounds`` times, the best of each kept)
so that a drift of the machine falls on both.  The cold builds of both are compared by
``bench_build.py --census`` with ``DASKCL_LIBRARY`` set.

Run:  python benchmarks/bench_library.py --before /tmp/old/cl [--functions pnorm,qbeta]
          [--n 4194304] [--rounds 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report
from bench_inline import SLOW  # functions timed on fewer elements

HERE = Path(__file__).resolve().parent

CHILD = textwrap.dedent("""
    import hashlib, json, sys, warnings
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from bench_nmath import CASES, kernel_run
    from daskcl import nmath
    specs = {}
    for case in ("default", "issue3", "issue4"):
        specs.update(CASES[case]())
    name, n = sys.argv[2], int(sys.argv[3])
    inputs = specs[name].inputs(np.random.default_rng(7), n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, out = kernel_run(getattr(nmath, name), inputs)
    digest = hashlib.sha256(np.ascontiguousarray(out).view(np.uint8)).hexdigest()
    print(json.dumps({"s": t, "sha256": digest}))
""")


def run_one(library: str | None, name: str, n: int, cache: str) -> dict[str, object]:
    """The kernel seconds and the SHA-256 of the result of ``name`` built from ``library``
    (``None``: this checkout's), in a fresh process."""
    env = {**os.environ, "DASKCL_CACHE_DIR": cache}
    env.pop("DASKCL_LIBRARY", None)
    if library is not None:
        env["DASKCL_LIBRARY"] = library
    r = subprocess.run([sys.executable, "-c", CHILD, str(HERE), name, str(n)], env=env,
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{name} ({library or 'this checkout'}): {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--before", required=True, help="the other library (a directory like cl/)")
    ap.add_argument("--functions", help="comma-separated (default: every function of the cases)")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    before = str(Path(args.before).resolve())
    if not (Path(before) / "OPENCL.cl").is_file():
        ap.error(f"{before} is not a kernel library (no OPENCL.cl)")
    from bench_nmath import CASES

    names = args.functions.split(",") if args.functions else sorted(
        {n for case in ("default", "issue3", "issue4") for n in CASES[case]()})
    rows = []
    with tempfile.TemporaryDirectory(prefix="daskcl-library-") as cache:
        for name in names:
            n = SLOW.get(name, args.n)
            best: dict[str, dict[str, object]] = {}
            for _ in range(args.rounds):
                for label, lib in (("before", before), ("after", None)):
                    got = run_one(lib, name, n, cache)
                    if label not in best or float(got["s"]) < float(best[label]["s"]):  # type: ignore[arg-type]
                        best[label] = got
            t_b, t_a = float(best["before"]["s"]), float(best["after"]["s"])  # type: ignore[arg-type]
            rows.append({"function": name, "n": n, "before_gels": n / t_b * 1e-9,
                         "after_gels": n / t_a * 1e-9, "after_speed": t_b / t_a,
                         "same_bits": best["before"]["sha256"] == best["after"]["sha256"]})
            print(f"{name:10s} {t_b / t_a:5.2f}x  same bits: {rows[-1]['same_bits']}", flush=True)
    report("library", rows, ["function", "n", "before_gels", "after_gels", "after_speed",
                             "same_bits"], args.out, before=before,
           checkout=hashlib.sha256(Path(HERE.parent / "cl" / "OPENCL.cl").read_bytes()).hexdigest()[:12])


if __name__ == "__main__":
    main()
