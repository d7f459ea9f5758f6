# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl: R's Mathlib and GLM kernels on OpenCL devices, for NumPy, Dask and sweeps to zarr.

commands:
  daskcl devices                   every OpenCL device, its fp64 status, and the one chosen
  daskcl devices --scheduler ADDR  the device of every worker of a running cluster
  daskcl index build | check       regenerate or check cl/nmath/kernel_dependency_index.tsv
  daskcl index build DIR ...       the same for your own unit trees (cl/README.md)
  daskcl index extract DEST ...    copy the subset of the library some kernels need
  daskcl stubs build | check       regenerate or check daskcl/nmath.pyi (the type stub)
  daskcl sweep SPEC --out STORE    evaluate a sweep spec (TOML) into a zarr store
  daskcl sweep verify STORE        exit 1 if a finished chunk no longer matches its checksum
  daskcl slurm SPEC --out STORE    a sweep on SLURM jobs, one GPU worker per job
  daskcl cache info | clear        the program cache: what it holds; delete its programs
  daskcl cache warm --all          build programs ahead of time on this device
  daskcl worker ADDRESS            one dask worker per device of this host, joined to a scheduler

examples:
  daskcl sweep workflows/tukey_critical/tukey.toml --out tukey.zarr
  daskcl sweep SPEC --out STORE --resume      finish an interrupted sweep
  daskcl cache warm --names qbeta,pf --glm    before scaling out a cluster on a shared cache
  daskcl cache warm --all --glm --jobs 8      8 processes building at once
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeAlias

from .errors import ClusterError, DaskclError, report_stop, sigterm_raises

if TYPE_CHECKING:
    from .sweep import Sweep

__all__ = ["main"]

_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: Seconds to wait for a scheduler (``--timeout``) before giving up.
_CONNECT_TIMEOUT = 10.0


def _client(args: argparse.Namespace) -> object:
    """A client of the scheduler at ``--scheduler`` (or in ``--scheduler-file``); one that does
    not answer within ``--timeout`` seconds is a :class:`ClusterError`, said in one line."""
    from distributed import Client

    timeout = getattr(args, "timeout", _CONNECT_TIMEOUT)
    where = args.scheduler_file or args.scheduler
    if not 0 < timeout < float("inf"):     # inf was dask's KeyError ("Invalid time unit")
        raise ClusterError(f"--timeout must be a positive number of seconds, not {timeout:g}")
    if args.scheduler_file and not os.path.isfile(args.scheduler_file):
        # distributed would wait for the file to appear, without end
        raise ClusterError(f"no scheduler file {args.scheduler_file}")
    if args.scheduler_file:     # distributed asserts what it holds: said in a line instead
        import json

        try:
            with open(args.scheduler_file, encoding="utf-8") as f:
                address = json.load(f).get("address")
        except (OSError, ValueError, AttributeError):
            address = None
        if not isinstance(address, str) or not address:
            raise ClusterError(f"{args.scheduler_file} is not a dask scheduler file (JSON with "
                               "the scheduler's \"address\", as `dask scheduler "
                               "--scheduler-file` writes it)")
    from .distributed.join import probe_scheduler

    probe_scheduler(address if args.scheduler_file else args.scheduler, timeout)
    try:
        if args.scheduler_file:
            return Client(scheduler_file=args.scheduler_file, timeout=timeout)
        return Client(args.scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(f"cannot reach the scheduler {where} within {timeout:g} s: "
                           f"{why}") from None
    except Exception as exc:    # a protocol not spoken here: tls:// without TLS settings,
        # ucx:// without ucx, ws:// at a server that is no websocket
        raise ClusterError(f"cannot connect to the scheduler {where}: {_first_line(exc)}"
                           ) from None


def _first_line(exc: BaseException) -> str:
    """``Type: the first line of its message``."""
    why = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {why[0]}" if why else type(exc).__name__


def _worker_devices(args: argparse.Namespace) -> int:
    from .distributed.plugin import worker_devices

    with _client(args) as client:  # type: ignore[attr-defined]
        found = worker_devices(client)
    if not found:
        print("error: the scheduler has no workers", file=sys.stderr)
        return 1
    bad = 0
    for addr, d in sorted(found.items()):
        pci = f", pci {d['pci']}" if "pci" in d else ""
        ok = "fp64" if d.get("fp64") else "NO fp64"
        bad += not d.get("fp64")
        print(f"{addr:28} {d['host']}: [{d['spec']}] {d['platform']} / {d['name']} "
              f"({d['type']}, driver {d['driver']}{pci}) {ok}")
    return 1 if bad else 0


def _add_devices(sub: _Commands) -> None:
    """``daskcl devices``: the options of the device listing."""
    p = sub.add_parser("devices", help="list OpenCL devices and the one daskcl would bind")
    p.add_argument("--device", default=None, help="'P:D' or a name substring (default: DASKCL_DEVICE)")
    p.add_argument("--scheduler", default=None,
                   help="show the device of every worker of the cluster at this address")
    p.add_argument("--scheduler-file", default=None, help="the same, scheduler from a file")
    p.add_argument("--timeout", type=float, default=_CONNECT_TIMEOUT, metavar="SECONDS",
                   help="give up on a scheduler that does not answer within this time "
                   "(default %(default)g s)")
    p.set_defaults(run=_devices)


def _devices(args: argparse.Namespace) -> int:
    from .runtime import device

    if args.scheduler or args.scheduler_file:
        return _worker_devices(args)

    try:
        found = device.list_devices()
    except DaskclError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        chosen, _ = device.choose(args.device)
    except DaskclError as exc:
        chosen, why = None, str(exc)
    print(f"{'spec':5} {'type':11} {'fp64':17} device")
    failed: list[tuple[str, str]] = []
    for info, dev in found:
        if not info.fp64:
            fp64 = "no (extension)"
        else:
            problem = device.probe_fp64(dev)
            fp64 = "yes (probed)" if problem is None else "no (probe failed)"
            if problem is not None:
                failed.append((info.spec, problem))
        mark = "  <- chosen" if chosen is not None and chosen.spec == info.spec else ""
        print(f"{info.spec:5} {info.type:11} {fp64:17} {info.platform} / {info.name} "
              f"(driver {info.driver_version}, {info.compute_units} CUs, "
              f"{info.global_mem / 2**30:.1f} GiB){mark}")
    if chosen is None:
        print(f"no device would be chosen: {why}", file=sys.stderr)
        return 1
    for spec, problem in failed:    # why a device beside the chosen one is not used
        print(f"{spec}: {' '.join(problem.split())}", file=sys.stderr)
    return 0


def _digits(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits: ``str.isdigit`` is also true of
    ``"²"``, which ``int`` refuses (a ``ValueError`` traceback instead of the option's error)."""
    return text.isascii() and text.isdigit()


def _listed(values: Sequence[str]) -> list[str]:
    """The names of repeated, comma-separated options (``--names a,b --names c``)."""
    return [n for n in ",".join(values).split(",") if n]


def _current(diff: Sequence[str], path: str, build: str, detail: str = "") -> int:
    """Report a generated file's check: 0 when current, else its differences and exit 1."""
    if diff:
        print("\n".join(diff))
        print(f"error: {path} is stale; run '{build}' and commit it", file=sys.stderr)
        return 1
    print(f"{path} is current{detail}")
    return 0


def _add_index(sub: _Commands) -> None:
    """``daskcl index build | check | extract``."""
    p = sub.add_parser("index", help="the kernel dependency index")
    p.add_argument("--root", default=None, help="library directory (default: the shipped cl/)")
    isub = p.add_subparsers(dest="index_cmd", required=True)
    dirs_help = ("unit trees of your own, and at most one kernel library (an extract's output), "
                 "read as get_library reads them: a tree is resolved against the library and "
                 "the trees before it (default: the shipped library's own index)")
    b = isub.add_parser("build", help="regenerate the index from the annotations")
    b.add_argument("dirs", nargs="*", metavar="DIR", help=dirs_help)
    b.add_argument("--verbose", "-v", action="store_true", help="print each pass of the sort")
    c = isub.add_parser("check", help="exit 1 if the index is stale, showing the difference")
    c.add_argument("dirs", nargs="*", metavar="DIR", help=dirs_help)
    e = isub.add_parser("extract", help="copy the units some kernels need, with their index",
                        description="Copy the units that some functions and kernel files need "
                        "(and OPENCL.cl, the shims and their index) into DEST, a kernel library "
                        "of its own.  Files of DEST are not overwritten: where one the copy would "
                        "write is there with other contents, the command lists them, writes "
                        "nothing and exits 1, unless --force is given.  The index, generated, "
                        "is written anew from the units in DEST.")
    e.add_argument("dest", metavar="DEST", help="the directory to write (made if missing)")
    e.add_argument("--force", action="store_true",
                   help="overwrite files of DEST that the copy writes with other contents")
    e.add_argument("--names", action="append", default=[], help="stems or symbols, comma-separated")
    e.add_argument("--kernels", action="append", default=[], help="kernel files (stems) in kernels/")
    p.set_defaults(run=_index)


def _index(args: argparse.Namespace) -> int:
    from .runtime.library import Library, split_roots

    if args.index_cmd == "extract":
        lib = Library(args.root)
        names = _listed(args.names)
        kernels = _listed(args.kernels)
        try:
            sub = lib.extract(args.dest, names, kernels, force=args.force)
        except OSError as exc:      # a directory above that cannot be made or written
            print(f"error: cannot extract into {args.dest}: {exc.strerror or exc} "
                  f"({exc.filename or args.dest})", file=sys.stderr)
            return 1
        print(f"extracted {len(sub.units)} units into {sub.root}: "
              + ", ".join(u.name for u in sub.units.values()))
        return 0
    # the DIRs as get_library reads them: the first kernel library is the base (else --root,
    # else the shipped one), the others are unit trees, each resolved against those before it
    dirs: list[str] = args.dirs
    base, trees = split_roots(([args.root] if args.root else []) + dirs)
    lib = Library(base, trees)
    targets = sorted({lib.root if (Path(d) / "OPENCL.cl").is_file() else Path(os.path.abspath(d))
                      for d in dirs}, key=lib.roots.index) if dirs else [lib.root]
    status = 0
    for root in targets:
        count = sum(1 for u in lib.units.values() if (u.tree or lib.root) == root)
        units = f"{count} unit{'s' if count != 1 else ''}"
        if args.index_cmd == "build":
            path = lib.write_index(verbose=args.verbose, root=root)
            print(f"wrote {path} ({units})")
        else:
            status |= _current(lib.check_index(root), f"{lib.index_file(root)}",
                               lib.index_command(root), f" ({units})")
    return status


def _add_cache(sub: _Commands) -> None:
    """``daskcl cache info | clear | warm``."""
    p = sub.add_parser("cache", help="the program cache: info, clear, warm")
    csub = p.add_subparsers(dest="cache_cmd", required=True)
    csub.add_parser("info", help="where the cache is and what it holds")
    csub.add_parser("clear", help="delete its programs, and the NVIDIA driver's code in the "
                    "directory daskcl made for it (nothing else in the directory)")
    w = csub.add_parser("warm", help="build programs ahead of time on this device, e.g. once "
                        "for a cluster whose workers share the cache directory")
    w.add_argument("--names", action="append", default=[],
                   help="daskcl.nmath functions (or glm:FAMILY:LINK), comma-separated")
    w.add_argument("--all", action="store_true", help="every daskcl.nmath function")
    w.add_argument("--glm", action="store_true", help="every f2_f3 family and link")
    w.add_argument("--jobs", type=int, default=1,
                   help="processes building at once (a process builds one program at a time "
                        "on NVIDIA's OpenCL; default 1)")
    p.set_defaults(run=_cache)


def _cache(args: argparse.Namespace) -> int:
    if args.cache_cmd != "warm" and _no_cache(args.cache_cmd):
        return 1
    if args.cache_cmd == "info":
        return _cache_info()
    if args.cache_cmd == "clear":
        from .runtime import program

        n = program.clear_disk_cache()
        print(f"deleted {n} files of the program cache at {program.cache_dir()}")
        return 0
    return _cache_warm(args)


def _cache_info() -> int:
    """``daskcl cache info``: where the program cache is and what it holds."""
    from .runtime import program

    info = program.cache_info()
    if info["directory"] is None:
        print("no disk cache (DASKCL_NO_CACHE is set)")
        return 0
    print(f"directory   {info['directory']}{'  (shared by a group)' if info['shared'] else ''}")
    print(f"entries     {info['entries']} programs, {info['bytes'] / 2**20:.1f} MiB")
    print(f"locks       {info['locks']} (one per program built since the last clear)")
    if info["driver_bytes"]:
        print(f"driver      {info['driver_bytes'] / 2**20:.1f} MiB of the NVIDIA driver's "
              f"compiled code ({program.DRIVER_CACHE}/)")
    if info["driver_refused"]:
        print(f"driver      {program.DRIVER_CACHE}/ is not daskcl's, so it is neither used "
              f"nor cleared: {info['driver_refused']}")
    if info["old_driver"]:
        print("note        nvidia/ is left alone (daskcl cannot tell it from another "
              "program's): if it is the driver cache of an earlier daskcl, delete it "
              "yourself")
    if info["unfinished"]:
        print(f"unfinished  {info['unfinished']} writes of processes that died")
    return 0


def _cache_warm(args: argparse.Namespace) -> int:
    """``daskcl cache warm``: build the named programs ahead of time on this device."""
    import time

    from . import glm, nmath
    from .runtime import device, program

    names = _listed(args.names)
    if args.all:
        names += sorted(nmath.FUNCTIONS)
    if args.glm:
        names += [f"glm:{f}:{lk}" for f, lk in glm.FAMILIES]
    if not names:
        print("error: name the programs to build: --names pnorm,qbeta, --all, --glm",
              file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2
    models = [f"glm:{f}:{lk}" for f, lk in glm.FAMILIES]
    unknown = [n for n in names if n not in nmath.FUNCTIONS and n not in models]
    if unknown:     # all refused before anything is built
        print(f"error: {'; '.join(_unknown_kernel(n, models) for n in unknown)}; nothing was "
              "built", file=sys.stderr)
        return 2
    if _no_cache("warm"):
        return 1
    bound = device.current()
    # the programs daskcl's workers use: on GPUs also the inlined ones they tier up to
    program.long_lived()
    t0 = time.perf_counter()
    if args.jobs > 1 and len(names) > 1:
        built, loaded = _warm_in_processes(names, args.jobs)
    else:
        built, loaded, unstored = _warm_here(names)
        if unstored:     # built, but not into the cache: nothing warmed (the warning says why)
            print(f"error: the cache at {program.cache_dir()} could not store what was "
                  f"built ({unstored} entries not written)", file=sys.stderr)
            return 1
    print(f"{len(names)} kernels on {bound.info.name}: {built} programs built, {loaded} loaded "
          f"from the cache at {program.cache_dir()}, {time.perf_counter() - t0:.1f} s")
    return 0


def _warm_here(names: list[str]) -> tuple[int, int, int]:
    """``daskcl cache warm`` of ``names`` in this process: the programs built, loaded from the
    cache, and built but not stored."""
    from .distributed.plugin import warm
    from .runtime import program

    before = dict(program.stats)
    warm(names)
    program.wait_background()     # the inlined programs of kernels that tier up (GPUs)
    built = (program.stats["source"] - before["source"]
             + program.stats["helper"] - before["helper"])
    loaded = program.stats["disk"] - before["disk"]
    unstored = (program.stats["unstored"] - before["unstored"]
                + program.stats["object_unstored"] - before["object_unstored"])
    return built, loaded, unstored


def _no_cache(cmd: str) -> bool:
    """Whether ``daskcl cache CMD`` has no disk cache to work on, said in one line: a directory
    daskcl does not use (another user's, writable by others, a file, ...), or, but for
    ``info``, the disk cache turned off."""
    from .runtime import program

    refused = program.cache_refused(create=cmd == "warm")
    if refused is not None:
        print(f"error: daskcl does not use the program cache at {program.cache_dir()}: "
              f"{refused}. Point DASKCL_CACHE_DIR at a directory of yours that others cannot "
              "write (or see DASKCL_CACHE_SHARED for a group's cache)", file=sys.stderr)
        return True
    if program.cache_dir() is None and cmd != "info":
        print(f"error: no disk cache to {cmd} (DASKCL_NO_CACHE is set)", file=sys.stderr)
        return True
    return False


def _unknown_kernel(name: str, models: list[str]) -> str:
    """What ``daskcl cache warm`` says of a name it does not know, with the names nearest to
    it ("did you mean"), as the library suggests them for its own names."""
    from . import nmath
    from .runtime.library import closest_names

    if name.startswith("glm:"):
        said, close = f"no GLM family and link {name!r}", closest_names(name, models)
    else:
        said, close = f"no daskcl.nmath function {name!r}", closest_names(name, nmath.FUNCTIONS)
    if close:
        said += f" (did you mean {', '.join(close[:-1]) + ' or ' if close[1:] else ''}{close[-1]}?)"
    return said


def _warm_in_processes(names: list[str], jobs: int) -> tuple[int, int]:
    """``daskcl cache warm`` of ``names`` in ``jobs`` processes at once (each one slice, the
    same device and cache): programs built and loaded, summed.  A process that fails is an
    error naming its names."""
    import re
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    slices = [names[i::jobs] for i in range(min(jobs, len(names)))]

    def one(part: list[str]) -> tuple[int, int]:
        r = subprocess.run([sys.executable, "-m", "daskcl", "cache", "warm", "--names",
                            ",".join(part)], capture_output=True, text=True)
        m = re.search(r"(\d+) programs built, (\d+) loaded", r.stdout)
        if r.returncode != 0 or m is None:     # said in a line by main, not a traceback
            raise DaskclError(f"daskcl cache warm of {','.join(part)} failed: "
                              f"{(r.stderr or r.stdout).strip()[-2000:]}")
        return int(m.group(1)), int(m.group(2))

    with ThreadPoolExecutor(len(slices)) as pool:
        counts = list(pool.map(one, slices))
    return sum(b for b, _ in counts), sum(d for _, d in counts)


def _add_stubs(sub: _Commands) -> None:
    """``daskcl stubs build | check``."""
    p = sub.add_parser("stubs", help="the type stub of daskcl.nmath (nmath.pyi)")
    ssub = p.add_subparsers(dest="stubs_cmd", required=True)
    ssub.add_parser("build", help="regenerate nmath.pyi from the rows")
    ssub.add_parser("check", help="exit 1 if nmath.pyi is stale")
    p.set_defaults(run=_stubs)


def _stubs(args: argparse.Namespace) -> int:
    from . import _stubs

    if args.stubs_cmd == "build":
        print(f"wrote {_stubs.write()}")
        return 0
    return _current(_stubs.check(), f"{_stubs.stub_path()}", "daskcl stubs build")


def _verify(store: str) -> int:
    from .sweep.store import Store

    total, bad, missing = Store(store).verify()
    coordinates = Store(store).damaged_coordinates()
    if coordinates:
        print(f"{store}: the coordinate array(s) {', '.join(coordinates)} no longer hold the "
              "sweep's axes (corrupted or deleted)")
    if not bad and not missing and not coordinates:
        print(f"{store}: all {total} chunks match their checksums")
        return 0
    if bad:
        print(f"{store}: {len(bad)} of {total} finished chunks do not match their checksums "
              "(corrupted or deleted):")
        for idx in bad[:100]:
            print(f"  chunk {idx}")
        if len(bad) > 100:
            print(f"  ... and {len(bad) - 100} more")
    if missing:
        print(f"{store}: {len(missing)} of {total} chunks are not computed yet")
    print(f"run the sweep again to compute them: daskcl sweep SPEC --resume --out "
          f"{shlex.quote(store)}", file=sys.stderr)    # a path with spaces as a shell takes it
    return 1


def _clash(args: argparse.Namespace) -> str | None:
    """What contradicts what among the options of ``daskcl sweep``, or None."""
    remote = [o for o, v in (("--scheduler", args.scheduler),
                             ("--scheduler-file", args.scheduler_file)) if v]
    if len(remote) == 2:
        return "give --scheduler or --scheduler-file, not both"
    if args.resume and args.overwrite:
        return "--resume keeps the store's finished chunks, --overwrite replaces them: give one"
    if args.quiet and args.verbose:
        return "--quiet and --verbose contradict each other: give one"
    if args.sync and remote:
        return f"--sync computes in this process; it cannot go with {remote[0]}"
    if args.workers is not None and _digits(args.workers.lstrip("-")) and int(args.workers) < 1:
        return f"--workers {args.workers}: a local cluster has at least one worker"
    for opt, value in (("--workers", args.workers), ("--listen", args.listen)):
        if value is not None and (args.sync or remote):
            return (f"{opt} is for the local cluster; it cannot go with "
                    f"{'--sync' if args.sync else remote[0]}")
    return None


def _add_sweep(sub: _Commands) -> None:
    """``daskcl sweep SPEC --out STORE`` and ``daskcl sweep verify STORE``."""
    p = sub.add_parser("sweep", help="evaluate a sweep spec (TOML) into a zarr v3 store")
    p.add_argument("spec", help="the sweep spec (TOML), or 'verify' to check STORE")
    p.add_argument("store", nargs="?", default=None,
                   help="with 'verify': the store whose finished chunks to check against their "
                   "checksums (exit 1, listing them, if any do not match)")
    p.add_argument("--out", help="the zarr store: a directory or an fsspec URL (s3://...)")
    p.add_argument("--resume", action="store_true", help="finish a sweep: compute the chunks missing, or no longer matching their checksums")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a store daskcl wrote (anything else there is refused, and kept)")
    p.add_argument("--dry-run", action="store_true", help="print the plan, compute nothing")
    p.add_argument("--scheduler", default=None, help="run on this dask scheduler (tcp://host:port)")
    p.add_argument("--scheduler-file", default=None, help="run on the scheduler in this file")
    p.add_argument("--workers", default=None,
                   help="local cluster: a worker count, or the devices to use, by name or P:D, "
                   "comma-separated (default: one per GPU, else one on the CPU)")
    p.add_argument("--sync", action="store_true", help="compute in this process, no cluster")
    p.add_argument("--listen", default=None, metavar="HOST",
                   help="local cluster: listen on HOST instead of 127.0.0.1 (anyone who reaches "
                   "its ports runs code as you: only on a network you trust)")
    p.add_argument("--timeout", type=float, default=_CONNECT_TIMEOUT, metavar="SECONDS",
                   help="give up on a --scheduler that does not answer within this time "
                   "(default %(default)g s)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print nothing but errors and the result line")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="show the log of dask's workers (hidden otherwise)")
    p.set_defaults(run=_sweep)


def _dry_run(args: argparse.Namespace, sweep: Sweep) -> int:
    """``daskcl sweep --dry-run``: the plan, and what the run would do with the store."""
    if not args.out:
        print(sweep.plan())
        return 0
    # what the run would do with the store, or refuse: decided, not done
    from .sweep.store import Store

    print(Store(args.out).plan(sweep, resume=args.resume, overwrite=args.overwrite))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from .sweep import Sweep, run

    if args.store is not None:
        if args.spec != "verify":
            print(f"error: unexpected argument {args.store!r} (did you mean "
                  f"'daskcl sweep verify {args.store}'?)", file=sys.stderr)
            return 2
        return _verify(args.store)
    if args.spec == "verify" and not os.path.exists(args.spec):
        print("error: daskcl sweep verify STORE: name the store to check", file=sys.stderr)
        return 2
    clash = _clash(args)
    if clash:
        print(f"error: {clash}", file=sys.stderr)
        return 2
    sweep = Sweep.from_toml(args.spec)
    if args.dry_run:
        return _dry_run(args, sweep)
    if not args.out:
        print("error: --out STORE is needed (a directory path or an fsspec URL)", file=sys.stderr)
        return 2
    client: object = None
    if args.sync:
        client = "sync"
    elif args.scheduler or args.scheduler_file:
        try:
            client = _client(args)
        except KeyboardInterrupt as exc:    # Ctrl-C or SIGTERM while the scheduler is awaited
            return report_stop(exc, f"nothing was computed (the scheduler "
                               f"{args.scheduler or args.scheduler_file} had not answered yet)")
    try:
        res = run(sweep, args.out, client, resume=args.resume, overwrite=args.overwrite,
                  progress=not args.quiet, listen=args.listen,
                  workers=int(args.workers) if _digits(args.workers or "") else args.workers)
    except KeyboardInterrupt as exc:
        return report_stop(exc)
    finally:
        if client not in (None, "sync"):
            client.close()  # type: ignore[attr-defined]
    print(f"wrote {res.store}: {res.computed} chunks computed, {res.skipped} already done, "
          f"{res.seconds:.1f} s on {', '.join(res.devices) or 'no device (nothing to do)'}")
    return 0


def _warning_line(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
    """A warning as the command line says it: ``warning: <message>``, without the source line
    Python's default shows (``cli.py:328 ... res = run(...``)."""
    print(f"warning: {message}", file=file or sys.stderr)


def _add_slurm(sub: _Commands) -> None:
    """``daskcl slurm``: its options are :mod:`daskcl.deploy`'s."""
    from .deploy import slurm_arguments

    p = slurm_arguments(sub.add_parser(
        "slurm", help="run a sweep spec on SLURM jobs, one GPU worker per job"))
    p.set_defaults(run=_slurm)


def _slurm(args: argparse.Namespace) -> int:
    from .deploy import run_slurm

    return run_slurm(args)


def _worker_usage(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments of ``daskcl worker``, or None: said before anything
    starts (not as every nanny's traceback)."""
    if not args.scheduler and not args.scheduler_file:
        return "give the scheduler's address (tcp://host:8786) or --scheduler-file FILE"
    if args.scheduler and args.scheduler_file:
        return "give the scheduler's address or --scheduler-file, not both"
    if args.scheduler:
        from distributed.comm.addressing import parse_address, parse_host_port

        try:
            protocol, location = parse_address(args.scheduler)
            if protocol in ("tcp", "tls"):
                parse_host_port(location)
        except ValueError as exc:
            hint = (" (a scheduler file? give --scheduler-file)"
                    if os.path.isfile(args.scheduler) else "")
            return f"{args.scheduler!r} is not a scheduler address (tcp://host:port): {exc}{hint}"
    if args.nthreads < 1:
        return f"--nthreads must be at least 1, not {args.nthreads}"
    if not 0 < args.timeout < float("inf"):
        return f"--timeout must be a positive number of seconds, not {args.timeout:g}"
    spec: str | None = args.devices
    if spec is not None:
        if not [d for d in spec.split(",") if d.strip()]:
            return "--devices: give 'all', a count, or devices by name or P:D, comma-separated"
        if _digits(spec.strip().lstrip("+-")) and int(spec) < 1:
            return f"--devices {spec}: at least one worker is needed"
    return None


def _add_worker(sub: _Commands) -> None:
    """``daskcl worker``: one dask worker per device of this host."""
    p = sub.add_parser("worker", help="start one dask worker per device of this host")
    p.add_argument("scheduler", nargs="?", default=None, help="scheduler address (tcp://host:port)")
    p.add_argument("--scheduler-file", default=None, help="read the scheduler address from a file")
    p.add_argument("--devices", default=None,
                   help="'all' (default: every fp64 GPU, else the CPU), a count, or P:D,P:D")
    p.add_argument("--nthreads", type=int, default=1, help="threads per worker (default 1)")
    p.add_argument("--name", default=None, help="worker name prefix (default: the host name)")
    p.add_argument("--local-directory", default=None, help="dask's scratch directory")
    p.add_argument("--listen", default=None, metavar="HOST",
                   help="address to listen on (default: this host's address towards the "
                   "scheduler, loopback for a local one); whoever reaches it can run code")
    p.add_argument("--timeout", type=float, default=_CONNECT_TIMEOUT, metavar="SECONDS",
                   help="give up on a scheduler that does not answer within this time, and "
                   "on a --scheduler-file that does not appear within it (default %(default)g s)")
    p.set_defaults(run=_worker)


def _worker(args: argparse.Namespace) -> int:
    from .distributed.join import run_workers

    usage = _worker_usage(args)
    if usage:
        print(f"error: {usage}", file=sys.stderr)
        return 2
    spec: str | None = args.devices
    devices: str | int | None = int(spec) if spec is not None and _digits(spec) else spec
    return run_workers(args.scheduler, scheduler_file=args.scheduler_file, devices=devices,
                       nthreads=args.nthreads, name=args.name,
                       local_directory=args.local_directory, listen=args.listen,
                       timeout=args.timeout)


def _parser() -> argparse.ArgumentParser:
    """The ``daskcl`` parser: a subcommand each, from the ``_add_*`` builders above."""
    parser = argparse.ArgumentParser(prog="daskcl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    from ._version import __version__

    parser.add_argument("--version", action="version", version=f"daskcl {__version__}")
    sub = parser.add_subparsers(dest="cmd")
    for add in (_add_devices, _add_index, _add_stubs, _add_sweep, _add_slurm, _add_cache,
                _add_worker):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``daskcl`` command with ``argv`` (the process's arguments by default); return
    its exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.cmd is None:
        parser.print_help()
        return 0
    if args.cmd in ("sweep", "slurm"):
        # dask's own log (each worker's start-up, its preload, cancelled tasks at Ctrl-C, a
        # failed task's traceback at each of its tries) only with -v: daskcl says what failed
        # in its own line.  Worker processes read it from their environment at start.
        level = "info" if getattr(args, "verbose", False) else "critical"
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", level)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command: a :class:`DaskclError` is its one-line error (exit 1); a sweep,
    SLURM run or worker stops at SIGTERM as at Ctrl-C."""
    shown = warnings.showwarning
    try:
        if args.cmd in ("sweep", "slurm", "worker"):
            if args.cmd != "worker" and not getattr(args, "verbose", False):
                warnings.showwarning = _warning_line   # a warning is a line, not its source's
            with sigterm_raises():    # stops as at Ctrl-C: the worker processes closed
                try:
                    return int(args.run(args))
                except KeyboardInterrupt as exc:    # reading the spec, verify, a dry run
                    return report_stop(exc, "nothing was written")
        return int(args.run(args))
    except DaskclError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader of our output went away (daskcl devices | head): no traceback; stdout is
        # pointed at /dev/null so that the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        warnings.showwarning = shown
