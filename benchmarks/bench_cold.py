# SPDX-License-Identifier: GPL-2.0-or-later
"""Cold start: a function's first result in a fresh process on a fresh node, and on a warm cache.

For each of ``--names`` (default qbeta, qnf, pf, pbinom, pnbeta, pt, qgamma, pnorm; ``all``:
every function of ``daskcl.nmath``), one after another:

* **cold**: a fresh process whose caches are all empty, as on a fresh node: daskcl's program
  cache in a new directory (``DASKCL_CACHE_DIR``), NVIDIA's compiled code in a new directory
  under it, where daskcl points the driver (``CUDA_CACHE_PATH`` and ``CUDA_CACHE_DISABLE``
  removed from the environment: ``drivercache.share_driver_cache``), PoCL's kernel cache in a
  new directory beside it (``POCL_CACHE_DIR``).
  Seconds from the process's start (before the interpreter is started) to the first result of
  the function's first docstring example, and the process's stages: import, device binding,
  the first call (its programs built: their seconds, source and binary bytes).  Programs that
  tier up in the background (``noinline`` ``tiered``) are waited for before the process ends
  (``background_s``), so that they do not overlap the next function's build.
* **warm**: ``--warm-repeat`` fresh processes on the cache the cold one filled: seconds from the
  start to the first result (median and least), and the same stages (the programs loaded from
  the disk cache).

The floors beside them: the interpreter's start (``python -c pass``), and its start with
``import numpy`` and ``import pyopencl``.  A function that fails or outlasts ``--timeout`` is
recorded with its error and the others are measured; the record is written again after each
function, so a run cut short keeps what it measured.

Run:  python3 benchmarks/bench_cold.py [--names qbeta,pf|all] [--warm-repeat 5]
                                       [--timeout 300] [--tree DIR] [--out FILE]
Writes results/cold-<device type>.json (``--out`` elsewhere).  Each function costs its cold
build, its background builds and ``--warm-repeat`` short processes; ``all`` is about 140 cold
builds (split it with ``--names`` where a command's time is limited).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import write  # noqa: E402

DEFAULT = "qbeta,qnf,pf,pbinom,pnbeta,pt,qgamma,pnorm"
#: the environment as the benchmark found it (before daskcl, imported in a child, sets anything)
ENV = dict(os.environ)
#: the checkout whose daskcl the children import (``--tree``; this one by default)
TREE = [HERE.parent]

CHILD = textwrap.dedent("""
    import time
    t_spawn = float(__import__("sys").argv[1])
    t_in = time.time()
    t0 = time.perf_counter()
    import daskcl.nmath as nm
    t_import = time.perf_counter()
    import json, sys, warnings
    from daskcl.runtime import device, program
    bound = device.current()
    t_bind = time.perf_counter()
    built = []
    plain = program._load_or_build

    def recording(bound, source, opts, key, mode="assembled"):
        import pyopencl as cl

        t = time.perf_counter()
        res = plain(bound, source, opts, key, mode)
        dt = time.perf_counter() - t
        try:
            size = int(sum(res.program.get_info(cl.program_info.BINARY_SIZES)))
        except cl.Error:
            size = None
        built.append({"origin": res.origin, "s": dt, "source_bytes": len(source.text),
                      "binary_bytes": size, "inlined": "-DDASKCL_NOINLINE" not in opts})
        return res

    program._load_or_build = recording
    name = sys.argv[2]
    f = getattr(nm, name)
    ex = f.fn.examples[0]
    flags = {k: v for k, v in ex.kwargs.items() if k in ("log", "lower_tail", "log_p")}
    t_call = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f(*ex.args, **flags)
    t_first = time.perf_counter()
    since = time.time() - t_spawn
    first_built = list(built)
    t_bg = time.perf_counter()
    done = program.wait_background(float(sys.argv[3]))
    row = {"since_start_s": since, "in_process_s": t_first - t0,
           "start_s": t_in - t_spawn, "import_s": t_import - t0, "bind_s": t_bind - t_import,
           "call_s": t_first - t_call,
           "programs": first_built, "build_s": sum(b["s"] for b in first_built),
           "background_s": time.perf_counter() - t_bg, "background_done": done,
           "background_programs": built[len(first_built):],
           "stats": {k: v for k, v in program.stats.items() if v},
           "result": [float(v) for v in __import__("numpy").ravel(out)[:4]]}
    if len(sys.argv) > 4:
        sys.path.insert(0, sys.argv[4])
        from _common import machine
        row["machine"] = machine()
    print(json.dumps(row))
""")


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in ENV.items()
           if k not in ("CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "DASKCL_NO_CACHE")}
    # this checkout's daskcl (or --tree's), whatever the directory the benchmark was started in
    env["PYTHONPATH"] = os.pathsep.join([str(TREE[0]), *filter(None, [ENV.get("PYTHONPATH")])])
    env["DASKCL_CACHE_DIR"] = str(cache)
    # PoCL's own cache (the machine code it makes at a kernel's first launch) beside it: empty
    # in the cold process, as on a fresh node, and filled by it for the warm ones
    env["POCL_CACHE_DIR"] = str(cache.parent / f"{cache.name}-pocl")
    env.pop("POCL_KERNEL_CACHE", None)
    return env


def child(name: str, cache: Path, timeout: float, with_machine: bool = False) -> dict[str, Any]:
    """One fresh process's first result of ``name`` on the cache ``cache``."""
    args = [sys.executable, "-c", CHILD, "", name, str(timeout),
            *([str(HERE)] if with_machine else [])]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    args[3] = repr(time.time())
    r = subprocess.run(args, capture_output=True, text=True, env=_env(cache), timeout=timeout,
                       cwd=cache.parent)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = time.perf_counter() - t0
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"exit {r.returncode}: {r.stderr.strip()[-1200:]}")
    row: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    row["process_s"] = process
    # the process's own CPU seconds (its helpers' not counted): what a loaded machine's wall
    # times hide
    row["cpu_s"] = (usage.ru_utime - cpu0.ru_utime) + (usage.ru_stime - cpu0.ru_stime)
    return row


def floor(code: str, repeat: int) -> float:
    """Median seconds of a fresh interpreter running ``code``, from start to exit."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def one(name: str, root: Path, repeat: int, timeout: float,
        info: dict[str, Any]) -> dict[str, Any]:
    cache = root / name
    row: dict[str, Any] = {"function": name}
    try:
        cold = child(name, cache, timeout, with_machine=not info)
        info.update(cold.pop("machine", {}))
        row["cold"] = cold
        row["cold_first_s"] = cold["since_start_s"]
        warm = [child(name, cache, timeout) for _ in range(repeat)]
        best = min(warm, key=lambda w: w["since_start_s"])
        row["warm"] = warm
        row["warm_first_s"] = statistics.median(w["since_start_s"] for w in warm)
        row["warm_min_s"] = best["since_start_s"]
        row["cold_cpu_s"] = cold["cpu_s"]
        for stage in ("start_s", "import_s", "bind_s", "call_s", "build_s", "process_s", "cpu_s"):
            row[f"warm_{stage}"] = statistics.median(w[stage] for w in warm)
    except subprocess.TimeoutExpired:
        row["error"] = f"timed out after {timeout:g} s"
    except Exception as exc:    # recorded; the other functions go on
        row["error"] = f"{type(exc).__name__}: {exc}"[-1500:]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--names", default=DEFAULT, help="comma-separated, or 'all'")
    ap.add_argument("--warm-repeat", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds a process may take (a cold build, and its background builds)")
    ap.add_argument("--tree", help="a checkout of another version (its daskcl/ and cl/) for "
                    "the children to import: before and after on one node")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.tree:
        TREE[0] = Path(args.tree).resolve()
    if args.names == "all":
        from daskcl.kernels import _registry

        names = list(_registry.names())
    else:
        names = args.names.split(",")
    floors = {"python_s": floor("pass", 5), "numpy_s": floor("import numpy", 5),
              "pyopencl_s": floor("import pyopencl", 5)}
    print("floors: " + ", ".join(f"{k} {v:.3f}" for k, v in floors.items()), flush=True)
    info: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    path = None
    with tempfile.TemporaryDirectory(prefix="daskcl-cold-") as tmp:
        for name in names:
            row = one(name, Path(tmp), args.warm_repeat, args.timeout, info)
            rows.append(row)
            if "error" in row:
                print(f"{name:10s} FAILED {row['error']}", flush=True)
            else:
                c = row["cold"]
                print(f"{name:10s} cold {row['cold_first_s']:6.2f} s (build {c['build_s']:.2f}"
                      f", bind {c['bind_s']:.2f}, import {c['import_s']:.2f}; source "
                      f"{sum(p['source_bytes'] for p in c['programs']) / 1e3:.0f} kB)   warm "
                      f"{row['warm_first_s']:.3f} s (import {row['warm_import_s']:.3f}, bind "
                      f"{row['warm_bind_s']:.3f}, call {row['warm_call_s']:.3f}, process "
                      f"{row['warm_process_s']:.3f}; CPU cold {row['cold_cpu_s']:.2f} warm "
                      f"{row['warm_cpu_s']:.3f})", flush=True)
            tag = f"cold-{info.get('device_type', 'unknown').lower()}"
            path = write(tag, {"machine": info, "floors": floors, "names": names,
                               "tree": args.tree, "results": rows}, args.out)
    ok = [r for r in rows if "error" not in r]
    if ok:
        worst = max(ok, key=lambda r: r["cold_first_s"])
        print(f"{len(ok)} of {len(rows)} measured; slowest cold {worst['function']} "
              f"{worst['cold_first_s']:.2f} s; warm median of medians "
              f"{statistics.median(r['warm_first_s'] for r in ok):.3f} s")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
