# SPDX-License-Identifier: GPL-2.0-or-later
"""The ``daskcl`` command.

``daskcl devices``                  every OpenCL device, its fp64 status, and the one chosen
``daskcl index build [--verbose]``  regenerate cl/nmath/kernel_dependency_index.tsv
``daskcl index check``              exit 1 if the index is stale (CI runs it)
``daskcl index extract DEST ...``   copy the subset of the library some kernels need
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import DaskclError

__all__ = ["main"]


def _devices(args: argparse.Namespace) -> int:
    from . import device

    try:
        found = device.list_devices()
    except DaskclError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        chosen, _ = device.choose(args.device)
    except DaskclError as exc:
        chosen, why = None, str(exc)
    print(f"{'spec':5} {'type':11} {'fp64':16} device")
    for info, dev in found:
        if not info.fp64:
            fp64 = "no (extension)"
        else:
            problem = device.probe_fp64(dev)
            fp64 = "yes (probed)" if problem is None else "no (probe failed)"
        mark = "  <- chosen" if chosen is not None and chosen.spec == info.spec else ""
        print(f"{info.spec:5} {info.type:11} {fp64:16} {info.platform} / {info.name} "
              f"(driver {info.driver_version}, {info.compute_units} CUs, "
              f"{info.global_mem / 2**30:.1f} GiB){mark}")
    if chosen is None:
        print(f"no device would be chosen: {why}", file=sys.stderr)
        return 1
    return 0


def _index(args: argparse.Namespace) -> int:
    from .library import Library

    lib = Library(args.root)
    if args.index_cmd == "build":
        path = lib.write_index(verbose=args.verbose)
        print(f"wrote {path} ({len(lib.units)} units)")
        return 0
    if args.index_cmd == "check":
        diff = lib.check_index()
        if diff:
            print("\n".join(diff))
            print(f"error: {lib.index_path} is stale; run 'daskcl index build' and commit it",
                  file=sys.stderr)
            return 1
        print(f"{lib.index_path} is current ({len(lib.units)} units)")
        return 0
    names = [n for n in ",".join(args.names).split(",") if n]
    kernels = [k for k in ",".join(args.kernels).split(",") if k]
    sub = lib.extract(args.dest, names, kernels)
    print(f"extracted {len(sub.units)} units into {sub.root}: "
          + ", ".join(u.name for u in sub.units.values()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="daskcl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("devices", help="list OpenCL devices and the one daskcl would bind")
    p.add_argument("--device", default=None, help="'P:D' or a name substring (default: DASKCL_DEVICE)")
    p.set_defaults(run=_devices)
    p = sub.add_parser("index", help="the kernel dependency index")
    p.add_argument("--root", default=None, help="library directory (default: the shipped cl/)")
    isub = p.add_subparsers(dest="index_cmd", required=True)
    b = isub.add_parser("build", help="regenerate the index from the annotations")
    b.add_argument("--verbose", "-v", action="store_true", help="print each pass of the sort")
    isub.add_parser("check", help="exit 1 if the index is stale")
    e = isub.add_parser("extract", help="copy the units some kernels need, with their index")
    e.add_argument("dest")
    e.add_argument("--names", action="append", default=[], help="stems or symbols, comma-separated")
    e.add_argument("--kernels", action="append", default=[], help="kernel files (stems) in kernels/")
    p.set_defaults(run=_index)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except DaskclError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
