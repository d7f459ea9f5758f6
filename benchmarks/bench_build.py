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

Separate compilation (``--link``): for each of ``--names`` (nmath names, or census entries), the
first result of a 4096-element call in fresh processes, every driver cache off, daskcl's disk
cache in a new directory per way of building: the assembled program cold (``DASKCL_LINK=0``),
linked from an object per library unit cold (``DASKCL_LINK=1``), linked from one object for the
kernel's units cold (``DASKCL_LINK=closure``), linked per unit with every object already in the
cache but not the program (what a kernel sharing its units with earlier ones pays), and each
way's program loaded from daskcl's cache in a fresh process.  A linked build records seconds
compiling objects (summed over threads, and until all were there) and linking: where NVIDIA
generates code (at compile or at link) shows there, with the first bytes of an object's binary
(LLVM bitcode ``BC``/``0x0b17c0de``, PTX text ``//``, ELF).  Then the names are built one after
another in one cache, cold, each way (``--sequence``, alone or after ``--link``'s rows): what
objects shared between kernels save.  An entry that fails is recorded with its error and the
others are measured.

    python3 benchmarks/bench_build.py --link --names pnorm,pbeta,qbeta,pf,qnf,pgamma --out F
    python3 benchmarks/bench_build.py --sequence --names pnorm,pbeta,pf,qbeta --out F

Where the cold build goes (``--split``): for each of ``--names`` (default qbeta, pf, qnf, pbeta,
pgamma), the programs of its first call built from source (clBuildProgram, every cache off),
their binaries saved, then loaded in a fresh process and context
(``cl.Program(ctx, devs, [binary]).build()``, then its kernels created), with CUDA's own
ComputeCache off (``CUDA_CACHE_DISABLE=1``: on NVIDIA the binary is PTX and loading it runs the
PTX JIT) and then on, in a new directory, filled by one load and read by the next.  Assembled
and linked (``DASKCL_LINK=1``) programs both.

    python3 benchmarks/bench_build.py --split --out F

Tiered builds (``--tiered``): for each of ``--names`` (default the functions measured faster
inlined, ``INLINE_FASTER``), in a fresh process with every cache empty or off and
``DASKCL_NOINLINE=tiered`` (the default of daskcl's GPU workers): the first result, from the program with the heavy
routines out of line, and the time until the inlined program, built in the background, is the
one in use.

    python3 benchmarks/bench_build.py --tiered --jobs 5 --out F

A fresh node with a shared cache (``--node``): for each of ``--names``, its first result in a
fresh process whose caches are all empty (daskcl's program cache in a new directory, the NVIDIA
driver's compiled code under it, as daskcl sets it: ``program.share_driver_cache``), then in
another fresh process with that cache, as on a second node or worker: what ``daskcl cache
warm`` on a shared cache saves a cluster.  ``--jobs`` entries at once.

    python3 benchmarks/bench_build.py --node --names pnorm,pbeta,qbeta,qf --jobs 4 --out F
"""

from __future__ import annotations

import os

os.environ["POCL_KERNEL_CACHE"] = "0"
os.environ["CUDA_CACHE_DISABLE"] = "1"

import argparse
import contextlib
import functools
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write

from daskcl.kernels._nmath_function import INLINE_FASTER, NmathFunction
from daskcl.kernels._nmath_table import ROWS
from daskcl.runtime import diskcache, program
from daskcl.runtime.library import get_library


class WholeLibrary(NmathFunction):
    """The same kernel, but in a program that holds every nmath unit."""

    @property
    def depends(self) -> tuple[str, ...]:
        return tuple(get_library().units)


def make(name: str, variant: str) -> NmathFunction:
    fn = {r.name: r for r in ROWS}[name]
    return WholeLibrary(fn) if variant == "whole" else NmathFunction(fn)


def first_result(impl: NmathFunction) -> float:
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
    from daskcl import glm
    from daskcl.kernels import _random as random

    out = [f"nmath:{r.name}" for r in ROWS]
    out += [f"random:{r.name}" for r in random.ROWS]
    out += [f"glm:{f}:{lk}" for f, lk in glm.FAMILIES]
    return out


def record_builds(built: list[dict[str, object]], keep: dict[str, object] | None = None) -> None:
    """Wrap the program cache's builder: each program it returns is recorded in ``built`` (its
    sizes, seconds, origin, how a linked build went, its disk entry); with ``keep``, the
    program's binary and options too (``keep["programs"]``)."""
    import pyopencl as cl

    plain_build = program._load_or_build

    def recording(bound, source, opts, key, mode="assembled"):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        res = plain_build(bound, source, opts, key, mode)
        dt = time.perf_counter() - t0
        sizes = res.program.get_info(cl.program_info.BINARY_SIZES)
        binary = res.program.get_info(cl.program_info.BINARIES)[0]
        built.append({"source_bytes": len(source.text), "binary_bytes": int(sum(sizes)),
                      "build_s": dt, "origin": res.origin, "linked": res.linked,
                      "binary_head": binary[:16].hex(),
                      "entry": str(diskcache._disk_path(key, bound)), **res.detail})
        if keep is not None:
            keep.setdefault("programs", []).append((binary, list(opts)))  # type: ignore[union-attr]
        return res

    program._load_or_build = recording  # type: ignore[assignment]


def call_entry(entry: str, n: int = 4096) -> str:
    """One ``n``-element call of a census entry (an ``n``-point grid for f2_f3, l1 = 100,
    l2 = 16; a plain name is ``nmath:NAME``); the SHA-256 of its result's bytes."""
    import hashlib
    import warnings

    import numpy as np

    from daskcl import glm, nmath

    kind, _, name = entry.partition(":") if ":" in entry else ("nmath", "", entry)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "nmath":
            fn = {r.name: r for r in ROWS}[name]
            x = np.linspace(0.05, 0.95, n)
            out = getattr(nmath, name)(x, *([2.0] * (len(fn.args) - 1 - len(fn.defaults))))
        elif kind == "random":
            from daskcl.kernels import _random as random

            rfn = {r.name: r for r in random.ROWS}[name]
            out = getattr(nmath, name)(n, *([2.0] * (len(rfn.args) - len(rfn.defaults))), seed=1)
        else:
            family, link = name.split(":")
            rng = np.random.default_rng(1)
            l1, l2 = 100, 16
            x = rng.normal(size=(l1, l2))
            y = rng.uniform(0.1, 0.9, l1) if family == "binomial" else rng.uniform(1, 5, l1)
            out = glm.f2_f3(family, link, rng.normal(0, 0.1, (n, l2)), y, x, np.zeros(l2),
                            np.eye(l2), np.zeros(l1), np.ones(l1))
    h = hashlib.sha256()
    for a in out if isinstance(out, tuple) else (out,):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def census_one(entry: str, options: tuple[str, ...]) -> dict[str, object]:
    """The first result of ``entry`` in this (fresh) process, with ``options`` added to every
    build; what was built is recorded by wrapping the program cache's builder."""
    from daskcl.runtime import device

    built: list[dict[str, object]] = []
    plain_options = program.default_options
    program.default_options = (  # type: ignore[assignment]
        lambda t="CPU", inlined=False: plain_options(t, inlined) + options)
    record_builds(built)
    t0 = time.perf_counter()
    device.current()
    bind = time.perf_counter() - t0
    t0 = time.perf_counter()
    call_entry(entry)
    first = time.perf_counter() - t0
    return {"entry": entry, "bind_s": bind, "first_s": first, "programs": len(built),
            "source_bytes": sum(int(b["source_bytes"]) for b in built),  # type: ignore[call-overload]
            "binary_bytes": sum(int(b["binary_bytes"]) for b in built)}  # type: ignore[call-overload]


def first_build(entry: str, calls_n: int = 0) -> dict[str, object]:
    """The first result of ``entry`` in this (fresh) process, with the disk cache as the
    environment sets it: seconds, the SHA-256 of the result, every program built or loaded
    (:func:`record_builds`); with ``calls_n``, the median seconds of three calls of that size
    after it (the kernel's speed, end to end)."""
    import pyopencl as cl

    from daskcl.runtime import device

    built: list[dict[str, object]] = []
    record_builds(built)
    bound = device.current()
    t0 = time.perf_counter()
    digest = call_entry(entry)
    first = time.perf_counter() - t0
    calls: list[float] = []
    if calls_n:
        for _ in range(3):
            t0 = time.perf_counter()
            call_entry(entry, calls_n)
            calls.append(time.perf_counter() - t0)
    heads = set()
    for obj in program._objects.values():
        with contextlib.suppress(cl.Error):  # PoCL keeps no binary of objects it loaded
            heads.add(bytes(obj.get_info(cl.program_info.BINARIES)[0][:16]).hex())
    heads = sorted(heads)
    return {"entry": entry, "first_s": first, "sha256": digest,
            "call_s": sorted(calls)[1] if calls else None, "programs": built,
            "stats": dict(program.stats), "object_binary_head": heads[:1],
            "device": bound.info.describe()}


LINK_CHILD = textwrap.dedent("""
    import os, sys, json
    os.environ["POCL_KERNEL_CACHE"] = "0"; os.environ["CUDA_CACHE_DISABLE"] = "1"
    sys.path.insert(0, sys.argv[1])
    from bench_build import first_build
    print(json.dumps(first_build(sys.argv[2], int(sys.argv[3]))))
""")


def link_child(entry: str, mode: str, cache: Path, calls_n: int = 0) -> dict[str, object]:
    """:func:`first_build` of ``entry`` in a fresh process, built the way ``mode`` says
    (``DASKCL_LINK``), with the disk cache at ``cache``."""
    here = str(Path(__file__).resolve().parent)
    env = dict(os.environ, DASKCL_LINK=mode, DASKCL_CACHE_DIR=str(cache))
    env.pop("DASKCL_NO_CACHE", None)
    r = subprocess.run([sys.executable, "-c", LINK_CHILD, here, entry, str(calls_n)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{entry} ({mode}): {r.stderr.strip()[-2000:]}")
    out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def _sum(res: dict[str, object], key: str) -> float:
    return float(sum(float(p.get(key, 0.0)) for p in res["programs"]))  # type: ignore[attr-defined,union-attr]


def link_entry(name: str, root: Path, calls_n: int) -> tuple[dict[str, object], object]:
    """One row of :func:`link_bench`, and what its child processes said."""
    caches = {m: root / f"{m}-{name.replace(':', '_')}" for m in ("0", "1", "closure")}
    got = {
        "assembled_cold": link_child(name, "0", caches["0"]),
        "assembled_disk": link_child(name, "0", caches["0"], calls_n),
        "unit_cold": link_child(name, "1", caches["1"]),
        "unit_disk": link_child(name, "1", caches["1"], calls_n),
        "closure_cold": link_child(name, "closure", caches["closure"]),
    }
    for p in got["unit_cold"]["programs"]:  # type: ignore[attr-defined]
        Path(p["entry"]).unlink(missing_ok=True)       # the programs go, the objects stay
    got["unit_warm_objects"] = link_child(name, "1", caches["1"])
    cold, warm = got["unit_cold"], got["unit_warm_objects"]
    row = {
        "entry": name,
        "assembled_cold_s": got["assembled_cold"]["first_s"],
        "unit_cold_s": cold["first_s"],
        "closure_cold_s": got["closure_cold"]["first_s"],
        "unit_warm_objects_s": warm["first_s"],
        "assembled_disk_s": got["assembled_disk"]["first_s"],
        "unit_disk_s": got["unit_disk"]["first_s"],
        "assembled_build_s": _sum(got["assembled_cold"], "build_s"),
        "objects": int(_sum(cold, "objects")),
        "compile_sum_s": _sum(cold, "compile_s"),
        "objects_wall_s": _sum(cold, "objects_s"),
        "link_s": _sum(cold, "link_s"),
        "warm_compile_s": _sum(warm, "compile_s"),
        "warm_link_s": _sum(warm, "link_s"),
        "closure_compile_sum_s": _sum(got["closure_cold"], "compile_s"),
        "closure_link_s": _sum(got["closure_cold"], "link_s"),
        "object_head": (cold["object_binary_head"] or [""])[0],  # type: ignore[index]
        "same_bits": len({g["sha256"] for g in got.values()}) == 1,
        "calls_n": calls_n,
        "assembled_call_s": got["assembled_disk"]["call_s"],
        "unit_call_s": got["unit_disk"]["call_s"],
    }
    return row, got


def link_bench(names: list[str], root: Path, calls_n: int, with_rows: bool,
               with_sequence: bool) -> dict[str, object]:
    """The ``--link`` measurements (see the module docstring) under the directory ``root``,
    one row per name (``with_rows``; the programs loaded from the cache then timed on calls of
    ``calls_n`` elements), and the names built one after another in one cache each way
    (``with_sequence``)."""
    rows: list[dict[str, object]] = []
    raw: dict[str, object] = {}
    for name in names if with_rows else ():
        try:
            row, raw[name] = link_entry(name, root, calls_n)
        except RuntimeError as exc:           # recorded; the other entries are still measured
            row = {"entry": name, "error": str(exc)[-1500:]}
        rows.append(row)
        print("  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()), flush=True)
    sequence: dict[str, object] = {}
    for mode, label in (("0", "assembled"), ("1", "unit"), ("closure", "closure")):
        if not with_sequence:
            break
        cache = root / f"sequence-{mode}"
        try:
            sequence[label] = sum(float(link_child(n, mode, cache)["first_s"])  # type: ignore[arg-type]
                                  for n in names)
        except RuntimeError as exc:
            sequence[label] = str(exc)[-1500:]
        print(f"sequence {label}: {sequence[label]} s for {len(names)} kernels", flush=True)
    if not with_rows:        # the sequence alone: its sums are the rows
        rows = [{"build": label, "names": ",".join(names), "first_s_summed": v}
                for label, v in sequence.items()]
    return {"results": rows, "sequence_first_s": sequence, "raw": raw}


SPLIT_BUILD = textwrap.dedent("""
    import os, sys, json, pickle
    os.environ["POCL_KERNEL_CACHE"] = "0"; os.environ["CUDA_CACHE_DISABLE"] = "1"
    os.environ["DASKCL_NO_CACHE"] = "1"
    sys.path.insert(0, sys.argv[1])
    from bench_build import record_builds, call_entry
    from daskcl.runtime import device
    device.current()
    built, keep = [], {}
    record_builds(built, keep)
    call_entry(sys.argv[2])
    with open(sys.argv[3], "wb") as f:
        pickle.dump(keep["programs"], f)
    print(json.dumps(built))
""")

SPLIT_LOAD = textwrap.dedent("""
    import os, sys, json, pickle, time
    os.environ["POCL_KERNEL_CACHE"] = "0"
    sys.path.insert(0, sys.argv[1])
    import pyopencl as cl
    from daskcl.runtime import device
    bound = device.current()
    out = []
    for binary, options in pickle.load(open(sys.argv[2], "rb")):
        ctx = cl.Context([bound.device])
        t0 = time.perf_counter()
        prg = device.build_program(cl.Program(ctx, [bound.device], [binary]), options)
        t1 = time.perf_counter()
        prg.all_kernels()
        out.append({"load_s": t1 - t0, "kernels_s": time.perf_counter() - t1})
    print(json.dumps(out))
""")


def split_bench(names: list[str], root: Path) -> list[dict[str, object]]:
    """The ``--split`` measurements (see the module docstring) under the directory ``root``."""
    here = str(Path(__file__).resolve().parent)
    rows: list[dict[str, object]] = []

    def run(code: str, *args: str, **env: str) -> list[dict[str, float]]:
        e = dict(os.environ, **env)
        r = subprocess.run([sys.executable, "-c", code, here, *args], capture_output=True,
                           text=True, env=e)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip()[-2000:])
        out: list[dict[str, float]] = json.loads(r.stdout.strip().splitlines()[-1])
        return out

    for name in names:
        for mode in ("0", "1"):
            saved = root / f"{name.replace(':', '_')}-{mode}.pickle"
            cuda_cache = str(root / f"cuda-cache-{name.replace(':', '_')}-{mode}")
            try:
                built = run(SPLIT_BUILD, name, str(saved), DASKCL_LINK=mode)
                jit = run(SPLIT_LOAD, str(saved), CUDA_CACHE_DISABLE="1")
                fill = run(SPLIT_LOAD, str(saved), CUDA_CACHE_DISABLE="0",
                           CUDA_CACHE_PATH=cuda_cache)
                warm = run(SPLIT_LOAD, str(saved), CUDA_CACHE_DISABLE="0",
                           CUDA_CACHE_PATH=cuda_cache)
            except RuntimeError as exc:        # recorded; the other entries are still measured
                rows.append({"entry": name, "build": mode, "error": str(exc)[-1500:]})
                print(rows[-1], flush=True)
                continue
            row = {
                "entry": name, "build": "assembled" if mode == "0" else "linked",
                "programs": len(built),
                "source_build_s": sum(float(b["build_s"]) for b in built),
                "binary_bytes": sum(int(b["binary_bytes"]) for b in built),
                "binary_head": str(built[0]["binary_head"]) if built else "",
                "load_no_cuda_cache_s": sum(x["load_s"] for x in jit),
                "kernels_no_cuda_cache_s": sum(x["kernels_s"] for x in jit),
                "load_filling_cuda_cache_s": sum(x["load_s"] for x in fill),
                "load_cuda_cache_warm_s": sum(x["load_s"] for x in warm),
            }
            rows.append(row)
            print("  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in row.items()), flush=True)
    return rows


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


NODE_CHILD = textwrap.dedent("""
    import os, sys, json, time
    sys.path.insert(0, sys.argv[1])
    from bench_build import call_entry
    os.environ.pop("CUDA_CACHE_DISABLE")       # bench_build turns the driver's cache off
    from daskcl.runtime import device, program
    t0 = time.perf_counter()
    device.current()
    bind = time.perf_counter() - t0
    t0 = time.perf_counter()
    call_entry(sys.argv[2])
    print(json.dumps({"first_s": time.perf_counter() - t0, "bind_s": bind,
                      "stats": dict(program.stats)}))
""")


def node_bench(names: list[str], root: Path, jobs: int) -> list[dict[str, object]]:
    """The ``--node`` rows (see the module docstring) under the directory ``root``."""
    from concurrent.futures import ThreadPoolExecutor

    here = str(Path(__file__).resolve().parent)

    def child(entry: str, cache: Path) -> dict[str, object]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "DASKCL_NO_CACHE")}
        env["DASKCL_CACHE_DIR"] = str(cache)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", NODE_CHILD, here, entry], capture_output=True,
                           text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"{entry}: {r.stderr.strip()[-1500:]}")
        out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
        out["process_s"] = time.perf_counter() - t0
        return out

    def one(entry: str) -> dict[str, object]:
        cache = root / entry.replace(":", "_")
        cold, warm = child(entry, cache), child(entry, cache)
        row = {"entry": entry, "cold_first_s": cold["first_s"], "cold_process_s": cold["process_s"],
               "shared_first_s": warm["first_s"], "shared_bind_s": warm["bind_s"],
               "shared_process_s": warm["process_s"], "shared_stats": warm["stats"]}
        print(f"{entry:24s} cold {row['cold_first_s']:7.2f} s   shared cache "
              f"{row['shared_first_s']:6.3f} s (process {row['shared_process_s']:.2f} s)",
              flush=True)
        return row

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, names))


TIERED_CHILD = textwrap.dedent("""
    import json, os, sys, time
    # the driver's cache is daskcl's, in the empty cache directory (program.share_driver_cache):
    # cold, and shared with the helper process that builds the inlined program, as in use
    os.environ["POCL_KERNEL_CACHE"] = "0"; os.environ.pop("CUDA_CACHE_DISABLE", None)
    os.environ.pop("CUDA_CACHE_PATH", None)
    sys.path.insert(0, sys.argv[1])
    from daskcl import nmath
    from daskcl.runtime import device, program
    device.current()
    from bench_build import call_entry
    t0 = time.perf_counter()
    call_entry(sys.argv[2])
    first = time.perf_counter() - t0
    row = {"first_s": first}
    if len(sys.argv) > 3:             # the next function's cold first result meanwhile
        t1 = time.perf_counter()
        call_entry(sys.argv[3])
        row["then"], row["then_first_s"] = sys.argv[3], time.perf_counter() - t1
    program.wait_background()
    kernel = getattr(nmath, sys.argv[2].split(":")[-1])
    row["inlined_ready_s"] = time.perf_counter() - t0
    row["inlined_in_use"] = "-DDASKCL_NOINLINE" not in kernel.program().options
    print(json.dumps(row))
""")


def tiered_bench(names: list[str], root: Path, jobs: int,
                 then: str | None = None) -> list[dict[str, object]]:
    """The ``--tiered`` rows: for each of ``names``, in a fresh process with every cache empty
    and ``noinline`` as the environment says (``auto``: tiered on GPUs, the inlined program
    built by a helper process), the first result (from the out-of-line program) and the time
    until the inlined program is in use; with ``then``, that function's cold first result
    called right after the first (whether the background build holds it back: run once with
    ``DASKCL_NOINLINE=1`` beside, no background build at all)."""
    from concurrent.futures import ThreadPoolExecutor

    here = str(Path(__file__).resolve().parent)

    def one(name: str) -> dict[str, object]:
        env = {k: v for k, v in os.environ.items() if k != "DASKCL_NO_CACHE"}
        env["DASKCL_CACHE_DIR"] = str(root / name)
        r = subprocess.run([sys.executable, "-c", TIERED_CHILD, here, name,
                            *([then] if then else [])], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"{name}: {r.stderr.strip()[-1500:]}")
        row: dict[str, object] = {"function": name,
                                  "noinline": os.environ.get("DASKCL_NOINLINE", "auto"),
                                  **json.loads(r.stdout.strip().splitlines()[-1])}
        after = (f", then {then} {row['then_first_s']:6.2f} s" if then else "")
        print(f"{name:10s} first result {row['first_s']:6.2f} s{after}, inlined in use after "
              f"{row['inlined_ready_s']:6.2f} s ({row['inlined_in_use']})", flush=True)
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
    ap.add_argument("--link", action="store_true",
                    help="separate compilation against the assembled build (module docstring)")
    ap.add_argument("--sequence", action="store_true",
                    help="build the names one after another in one cache, each way (with --link "
                    "also, after the rows)")
    ap.add_argument("--call-n", type=int, help="--link: elements of the timed calls "
                    "(default 2^22 on GPUs, 2^16 elsewhere; 0: none)")
    ap.add_argument("--split", action="store_true",
                    help="cold build: source to binary against loading the binary")
    ap.add_argument("--node", action="store_true",
                    help="a fresh node, then a fresh process sharing its cache")
    ap.add_argument("--tiered", action="store_true",
                    help="out of line first, inlined in the background: both times, cold")
    ap.add_argument("--then", help="--tiered: a function called cold right after the first")
    args = ap.parse_args()
    if args.tiered or args.node:
        tag, bench, default = (("tiered", functools.partial(tiered_bench, then=args.then),
                                ",".join(sorted(INLINE_FASTER)))
                               if args.tiered else ("node", node_bench, "pnorm,pbeta,qbeta,pf,qf"))
        with tempfile.TemporaryDirectory() as tmp:
            rows = bench((args.names or default).split(","), Path(tmp), args.jobs)
        info = machine()
        path = write(f"{tag}-{info['device_type'].lower()}", {"machine": info, "jobs": args.jobs,
                                                             "results": rows}, args.out)
        print(f"wrote {path}")
        return
    if args.link or args.sequence or args.split:
        linking = args.link or args.sequence
        default = "pnorm,pbeta,qbeta,pf,qnf,pgamma" if linking else "qbeta,pf,qnf,pbeta,pgamma"
        names = (args.names or default).split(",")
        with tempfile.TemporaryDirectory() as tmp:
            if linking:
                from daskcl.runtime import device

                calls_n = args.call_n if args.call_n is not None else (
                    1 << 22 if device.current().info.type == "GPU" else 1 << 16)
                payload = link_bench(names, Path(tmp), calls_n, args.link, args.sequence)
            else:
                payload = {"results": split_bench(names, Path(tmp))}
        info = machine()
        tag = "link" if linking else "build-split"
        path = write(f"{tag}-{info['device_type'].lower()}", {"machine": info, **payload},
                     args.out)
        print(f"wrote {path}")
        return
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
                src = impl.source()
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
