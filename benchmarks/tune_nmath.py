# SPDX-License-Identifier: GPL-2.0-or-later
"""Launch configurations of the costly nmath kernels, side by side on the bound device.

For each function, the kernel alone (inputs on the device, OpenCL event timing, the inputs of
``bench_nmath.py``'s issue-3/issue-4 cases) under several variants:

- ``plainWG``: one element per work-item, work-groups of WG (256 is daskcl's default on GPUs);
- ``sortWGxEPI``: the launch sorted by class (``cl/kernels/elementwise.cl``: the element
  indices of the whole launch counting-sorted by the method the function takes for them, in
  blocks of WG x EPI, then computed in that order by work-groups of WG, so that a warp and the
  whole device run one method at a time), for rows with a class function;
- ``-rN``: built with ``-cl-nv-maxrregcount=N`` (NVIDIA only): fewer registers per work-item,
  more warps per multiprocessor, possibly spills.

Every variant's output is compared bit for bit with the first (the order of work must not change
a result).  On NVIDIA the compiler's resource report (``-cl-nv-verbose``: registers, stack,
spills) is recorded.  CuPy's peer, where it has one, is timed in the same run.

Run:  python benchmarks/tune_nmath.py [--functions pbeta,pgamma] [--n 16777216] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write

DEFAULT = "pgamma,pchisq,ppois,pbeta,pf,pbinom,pnbinom,qgamma,qbeta"
SLOW = {"qgamma": 4, "qbeta": 8}     # n divided by this for the slow quantile functions


DEFAULT_VARIANTS = ("plain256,plain256-r64,sort256x32,sort256x32r64,sort128x32r64,sort512x16r64,"
                    "sort256x32r80,sort256x32r48")


def variants(nvidia: bool, classify: bool, only: str | None = None
             ) -> list[tuple[str, Any, int, tuple[str, ...]]]:
    """(name, Binning or None, plain work-group size, build options) of the variants named in
    ``only`` (comma-separated ``plainWG`` or ``sortWGxEPI``, each optionally ``-rN``); sort
    variants are dropped for rows without a class function, ``-rN`` ones off NVIDIA."""
    from daskcl.kernels._elementwise import Binning

    out = []
    for v in (only or DEFAULT_VARIANTS).split(","):
        m = re.fullmatch(r"(plain(\d+)|sort(\d+x\d+(?:r\d+)?))(?:-r(\d+))?", v)
        if not m:
            raise SystemExit(f"unknown variant {v!r}")
        if (m.group(3) and not classify) or (m.group(4) and not nvidia):
            continue
        opts = (f"-cl-nv-maxrregcount={m.group(4)}",) if m.group(4) else ()
        bins = Binning.parse(m.group(3)) if m.group(3) else None
        out.append((v, bins, int(m.group(2) or 0), opts))
    return out


def resources(log: str) -> dict[str, Any]:
    """Registers, stack frame and spills from NVIDIA's ``-cl-nv-verbose`` build log."""
    out: dict[str, Any] = {}
    m = re.search(r"Used (\d+) registers", log)
    if m:
        out["regs"] = int(m.group(1))
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    if m:
        out["stack_B"], out["spill_st_B"], out["spill_ld_B"] = map(int, m.groups())
    return out


def kernel_run(impl: Any, inputs: tuple[Any, ...], repeat: int) -> tuple[float, np.ndarray]:
    """Median kernel seconds of ``impl`` on ``inputs`` after one warm-up run, and its output."""
    from bench_nmath import kernel_run as run

    return run(impl, inputs, repeat, warm=1)


def classes_of(fn: Any, inputs: tuple[Any, ...]) -> np.ndarray:
    """The row's class function on the inputs (the method each element takes)."""
    from daskcl.kernels._nmath_function import NmathFunction

    return np.asarray(NmathFunction(fn.class_row())(
        *inputs, *(fn.defaults.get(a, 0.0) for a in fn.arg_names[len(inputs):])))


def by_class(fn: Any, inputs: tuple[Any, ...], repeat: int) -> list[dict[str, Any]]:
    """The plain kernel's cost per element on the elements of each class alone, and each
    class's share of the elements and of the time: which of a function's methods costs most."""
    from daskcl.kernels._nmath_function import NmathFunction

    classes = classes_of(fn, inputs)
    plain = NmathFunction(fn)
    plain.binning = lambda: None   # type: ignore[method-assign]
    rows = []
    for c in np.unique(classes):
        sel = classes == c
        sub = tuple(a[sel] if isinstance(a, np.ndarray) and a.shape == classes.shape else a
                    for a in inputs)
        nc = int(sel.sum())
        t, _ = kernel_run(plain, sub, repeat) if nc >= 4096 else (float("nan"), None)
        rows.append({"function": fn.name, "variant": f"class{int(c)}", "n": nc,
                     "share": nc / classes.size, "ns_per_el": t / nc * 1e9})
    total = sum(r["n"] * r["ns_per_el"] for r in rows if np.isfinite(r["ns_per_el"]))
    for r in rows:
        r["time_share"] = r["n"] * r["ns_per_el"] / total if total else float("nan")
    print(table(rows, ["function", "variant", "n", "share", "ns_per_el", "time_share"]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--functions", default=DEFAULT)
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--by-class", action="store_true",
                    help="time each class of a classified function's elements alone")
    ap.add_argument("--presort", action="store_true",
                    help="also time every variant on the inputs sorted by class on the host "
                         "(the whole array in method order, not tile by tile)")
    ap.add_argument("--variants", help="comma-separated variant names (default: all)")
    ap.add_argument("--out", help="JSON result file (default benchmarks/results/tune-<type>.json)")
    args = ap.parse_args()

    os.environ.setdefault("DASKCL_NO_CACHE", "1")   # fresh builds: their logs hold the resources
    import pyopencl as cl
    from bench_nmath import _issue3_specs, _issue4_specs, cupy_times

    from daskcl.kernels._nmath_function import NmathFunction
    from daskcl.kernels._nmath_table import ROWS
    from daskcl.runtime import device

    bound = device.current()
    nvidia = "NVIDIA" in bound.info.platform
    row_of = {fn.name: fn for fn in ROWS}
    specs = {**_issue4_specs(), **_issue3_specs()}
    rows: list[dict[str, Any]] = []
    for name in args.functions.split(","):
        fn, spec = row_of[name], specs[name]
        n = args.n // SLOW.get(name, 1)
        inputs = spec.inputs(np.random.default_rng(20261124), n)
        cupy_s = None
        if spec.cupy is not None:
            peer = spec.peer_args(*inputs) if spec.peer_args else inputs
            cupy_s, _ = cupy_times(spec.cupy, peer)
        ref = None
        base_s = None
        if args.by_class and fn.classify:
            rows += by_class(fn, inputs, args.repeat)
        perm = None
        if args.presort and fn.classify:
            perm = np.argsort(classes_of(fn, inputs), kind="stable")
            sorted_inputs = tuple(a[perm] if isinstance(a, np.ndarray) and a.shape == (n,)
                                  else a for a in inputs)
        for vname, bins, pwg, opts in variants(nvidia, bool(fn.classify), args.variants):

            class Variant(NmathFunction):
                gpu_wg = pwg or 256

                def binning(self, _b: Any = bins) -> Any:
                    return _b

            impl = Variant(fn)
            impl.options = opts + (("-cl-nv-verbose",) if nvidia else ())
            try:
                t, res = kernel_run(impl, inputs, args.repeat)
            except Exception as exc:   # a configuration the device refuses is recorded
                rows.append({"function": name, "variant": vname, "error": str(exc)[:200]})
                print(f"{name} {vname}: {exc}", flush=True)
                continue
            if ref is None:
                ref, base_s = res, t
            same = bool(np.array_equal(res, ref, equal_nan=True))
            built = impl.program()
            log = built.program.get_build_info(bound.device, cl.program_build_info.LOG) or ""
            row = {"function": name, "variant": vname, "n": n, "kernel_s": t,
                   "Gel_s": n / t / 1e9, "vs_plain256": base_s / t, "identical": same,
                   **resources(log)}
            if cupy_s:
                row["vs_cupy"] = cupy_s / t
                row["cupy_Gel_s"] = n / cupy_s / 1e9
            rows.append(row)
            print(table([row], list(row)), flush=True)
            if perm is not None:
                ts, res_s = kernel_run(impl, sorted_inputs, args.repeat)
                row = {"function": name, "variant": vname + "+presort", "n": n,
                       "kernel_s": ts, "Gel_s": n / ts / 1e9, "vs_plain256": base_s / ts,
                       "identical": bool(np.array_equal(res_s, ref[perm], equal_nan=True))}
                if cupy_s:
                    row["vs_cupy"] = cupy_s / ts
                rows.append(row)
                print(table([row], list(row)), flush=True)
    cols = ["function", "variant", "Gel_s", "vs_plain256", "vs_cupy", "regs", "stack_B",
            "spill_st_B", "identical"]
    print(table(rows, cols))
    kind = "gpu" if bound.info.type == "GPU" else "cpu"
    path = write(f"tune-{kind}", {"machine": machine(), "results": rows}, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
