# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl workers on a SLURM cluster, through dask-jobqueue.

:func:`slurm_cluster` returns a ``dask_jobqueue.SLURMCluster`` whose every job is one dask
worker on one GPU:

* the job asks SLURM for the GPU (``#SBATCH --gres=gpu:1`` by default); SLURM then sets
  ``CUDA_VISIBLE_DEVICES`` (``ROCR_VISIBLE_DEVICES``/``GPU_DEVICE_ORDINAL`` on AMD) to the GPU it
  gave the job, so the vendor's OpenCL driver shows the worker that GPU alone and daskcl binds it;
* the worker is ``dask worker ... --nthreads 1 --preload daskcl.cluster``: the preload binds the
  worker's device before the first task (see :mod:`daskcl.cluster`);
* ``DASKCL_CACHE_DIR`` points at node-local disk (expanded by the job's shell on the compute
  node), so each node builds a program once and no job writes to a shared filesystem.  The
  directory is the user's own: the job makes it with mode 0700, and where that path exists but
  belongs to someone else (who made it first, in a shared ``/tmp``), the job uses a fresh private
  directory from ``mktemp -d`` instead (see :func:`cache_prologue`).  A cache shared by a group,
  built once per cluster, is an explicit choice (``cache_shared=True``, a directory prepared for
  it);
* ``minimum``/``maximum`` make the worker count adaptive (``cluster.adapt``): jobs are submitted
  while tasks wait, and retired when idle;
* the scheduler runs in this process and listens on one address, the one the jobs' workers are
  given (that of ``interface=``, else this host's address on its route out), not on every
  interface; its dashboard on ``127.0.0.1:8787`` unless ``dashboard_address=`` says otherwise.

The command form runs a sweep spec on such a cluster, from a login node::

    python -m daskcl.deploy slurm sweep.toml --out /scratch/$USER/out.zarr \\
        --maximum 8 --queue gpu --walltime 02:00:00

Sites that forbid long-running processes on login nodes use the batch form instead,
``deploy/slurm/sweep.sbatch`` (scheduler, workers and sweep inside one allocation).

Example
-------
>>> from distributed import Client
>>> from daskcl.deploy import slurm_cluster
>>> from daskcl.sweep import Sweep, run
>>> cluster = slurm_cluster(maximum=8, queue="gpu", walltime="02:00:00")  # doctest: +SKIP
>>> with Client(cluster) as client:                                       # doctest: +SKIP
...     run(Sweep.from_toml("sweep.toml"), "/scratch/out.zarr", client)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .errors import ClusterError, DaskclError, report_stop, sigterm_raises

__all__ = ["NODE_LOCAL_CACHE", "cache_prologue", "check_submission", "main", "run_slurm",
           "slurm_arguments", "slurm_cluster"]

NODE_LOCAL_CACHE = "${TMPDIR:-/tmp}/daskcl-cache-$(id -u)"
"""Default ``DASKCL_CACHE_DIR`` of a SLURM worker: shell text, expanded on the compute node."""

_PRIVATE_CACHE = ('{ mkdir -p -m 700 -- "$DASKCL_CACHE_DIR" && [ -O "$DASKCL_CACHE_DIR" ]; } '
                  '2>/dev/null || DASKCL_CACHE_DIR=$(mktemp -d)')


def cache_prologue(cache_dir: str = NODE_LOCAL_CACHE, shared: bool = False) -> list[str]:
    """Shell lines that set ``DASKCL_CACHE_DIR`` of a job to ``cache_dir`` (shell text).

    A private cache (the default) is made with mode 0700; when the path exists and does not
    belong to the user (someone else made it first), the job takes a fresh directory from
    ``mktemp -d`` instead, so a predictable path in a shared ``/tmp`` cannot be planted.  A cache
    shared by a group (``shared``) is used as it is, with ``DASKCL_CACHE_SHARED=group``: the
    directory must be prepared beforehand (owned by the group, setgid, not writable by others;
    see :mod:`daskcl.runtime.program`).

    Example
    -------
    >>> print("\n".join(cache_prologue("/shared/daskcl-cache", shared=True)))
    export DASKCL_CACHE_SHARED=group
    export DASKCL_CACHE_DIR="/shared/daskcl-cache"
    """
    if shared:
        return ["export DASKCL_CACHE_SHARED=group", f'export DASKCL_CACHE_DIR="{cache_dir}"']
    return [f'DASKCL_CACHE_DIR="{cache_dir}"', _PRIVATE_CACHE, "export DASKCL_CACHE_DIR"]


def _slurm_cluster_class() -> Any:
    """``dask_jobqueue.SLURMCluster``, imported without the SIGINT handler that dask-jobqueue's
    runner module installs as it is imported (``sys.exit()`` on Ctrl-C: a sweep stopped with
    Ctrl-C exited 0 without a word instead of keeping its chunks and saying so, exit 130).
    The handler of the main thread from before the import is put back."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError as exc:
        raise ClusterError("SLURM clusters need dask-jobqueue: pip install dask-jobqueue") from exc
    finally:
        if before is not None and signal.getsignal(signal.SIGINT) is not before:
            signal.signal(signal.SIGINT, before)
    global _CLASS
    if _CLASS is None or not issubclass(_CLASS, SLURMCluster):
        _CLASS = type("SLURMCluster", (SLURMCluster,), {
            "__module__": __name__, "dashboard_link": property(_dashboard_link),
            "__doc__": "dask-jobqueue's ``SLURMCluster``, its ``dashboard_link`` where the "
                       "dashboard listens"})
    return _CLASS


_CLASS: Any = None


def _dashboard_link(cluster: Any) -> str:
    """The dashboard's link at the host it listens on.  distributed names the scheduler's host
    (the node's address on the network), where nothing answers when the dashboard listens on
    loopback, as :func:`slurm_cluster`'s does unless told otherwise."""
    from distributed.utils import format_dashboard_link

    try:
        port = cluster.scheduler_info["services"]["dashboard"]
    except KeyError:
        return ""
    host = getattr(cluster, "_daskcl_dashboard_host", None)
    if not host:
        host = cluster.scheduler_address.split("://")[1].split("/")[0].split(":")[0]
    return str(format_dashboard_link(host, port))


#: Where the scheduler's dashboard of :func:`slurm_cluster` listens unless told otherwise: this
#: host's loopback only (reach it through ``ssh -L 8787:127.0.0.1:8787 LOGIN-NODE``).
_DASHBOARD_ADDRESS = "127.0.0.1:8787"

#: The keyword arguments of dask-jobqueue's ``JobQueueCluster`` that are the cluster's or the
#: scheduler's, not the worker job's (the rest go to the job class).
_CLUSTER_ONLY = frozenset({"n_workers", "job_cls", "loop", "security", "shared_temp_directory",
                           "silence_logs", "name", "asynchronous", "dashboard_address", "host",
                           "scheduler_options", "scheduler_cls", "protocol"})

#: The scheduler's address in a job script rendered without a scheduler (dask-jobqueue's own).
_NO_SCHEDULER = "tcp://<insert-scheduler-address-here>:8786"


def slurm_cluster(
    n_workers: int = 0,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    gres: str | None = "gpu:1",
    device: str | None = None,
    cache_dir: str = NODE_LOCAL_CACHE,
    cache_shared: bool = False,
    cores: int = 1,
    memory: str = "16GB",
    local_directory: str = "${TMPDIR:-/tmp}",
    dashboard_address: str | None = _DASHBOARD_ADDRESS,
    **options: Any,
) -> Any:
    """A ``dask_jobqueue.SLURMCluster`` of daskcl workers, one SLURM job and one GPU each.

    Its scheduler runs in this process and must be reachable from the compute nodes, so it
    listens on the network -- on one address only, the one its workers are given: that of
    ``interface`` (``interface="ib0"``) where one is named, else this host's address that
    dask advertises (on the route out of the host), never every interface.  Its dashboard
    listens on ``dashboard_address``: this host's loopback unless told otherwise.  Whoever
    can connect to a dask scheduler can run code as you: a cluster network you trust, or
    TLS (``security=``), is up to you.

    Parameters
    ----------
    n_workers : int
        Jobs to submit now (``cluster.scale``); ignored when ``maximum`` is given.
    minimum, maximum : int, optional
        Adaptive worker count: ``cluster.adapt(minimum=minimum or 0, maximum=maximum)``.
    gres : str or None
        The ``--gres`` request of each job (``"gpu:1"``, ``"gpu:a100:1"``); ``None`` for sites
        that want ``--gpus=1`` or a constraint instead (give it in ``job_extra_directives``).
    device : str, optional
        ``DASKCL_DEVICE`` of every worker, e.g. ``"NVIDIA"``: a worker that cannot bind such a
        device fails at start-up instead of falling back to a CPU driver.
    cache_dir : str
        ``DASKCL_CACHE_DIR`` of every worker, shell text expanded on the node (node-local disk),
        made private to the user (see :func:`cache_prologue`).
    cache_shared : bool
        ``cache_dir`` is a cache shared by the user's group, prepared for it (group-owned,
        setgid, not writable by others), e.g. on a shared filesystem so that a cluster builds
        each program once; the workers get ``DASKCL_CACHE_SHARED=group``.
    cores : int
        Threads of the worker and ``--cpus-per-task`` (give ``job_cpu=`` to book more CPUs).
    memory : str
        Memory of the job (``--mem``) and the worker's memory limit.
    local_directory : str
        The worker's scratch directory (shell text, node-local).
    dashboard_address : str or None
        Where the scheduler's dashboard listens: ``"HOST:PORT"``; a port alone (``":8787"``)
        listens on ``127.0.0.1``; ``None``: no dashboard.  Default ``127.0.0.1:8787``.  A
        ``dashboard_address`` in ``scheduler_options`` wins.
    **options
        Passed to ``SLURMCluster``: ``queue``, ``account``, ``walltime``, ``job_cpu``,
        ``job_extra_directives``, ``job_script_prologue`` (both extended, not replaced),
        ``worker_extra_args``, ``interface``, ``log_directory``, ``python``,
        ``scheduler_options`` (a ``host`` or ``interface`` there is where the scheduler
        listens), ...

    Returns
    -------
    dask_jobqueue.SLURMCluster

    Raises
    ------
    ClusterError
        dask-jobqueue is not installed; the scheduler did not start (an ``interface`` this
        host does not have, an address it cannot listen on).
    ValueError
        ``cache_shared`` without a ``cache_dir`` of its own.
    """
    SLURMCluster = _slurm_cluster_class()
    kwargs = _cluster_options(
        cache_dir=cache_dir, cache_shared=cache_shared, gres=gres, device=device, cores=cores,
        memory=memory, local_directory=local_directory, options=options)
    kwargs["scheduler_options"] = _scheduler_options(kwargs, dashboard_address)
    try:
        cluster = SLURMCluster(**kwargs)
    except (OSError, RuntimeError) as exc:  # "Cluster failed to start": no such interface, ...
        from .distributed.slots import first_cause

        raise ClusterError(f"the SLURM cluster's scheduler did not start: {first_cause(exc)}"
                           ) from exc
    listen = str(kwargs["scheduler_options"].get("dashboard_address") or "")
    host = listen.rpartition(":")[0].strip("[]") if ":" in listen else ""
    if host not in ("", "0.0.0.0", "::"):    # every interface: the scheduler's host serves it
        cluster._daskcl_dashboard_host = host
    if maximum is not None:
        cluster.adapt(minimum=minimum or 0, maximum=maximum)
    elif n_workers:
        cluster.scale(n_workers)
    return cluster


def _cluster_options(*, cache_dir: str, cache_shared: bool, gres: str | None,
                     device: str | None, cores: int, memory: str, local_directory: str,
                     options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``SLURMCluster`` that :func:`slurm_cluster` gives it (but the
    scheduler's options): the one GPU, the private node-local cache, the preload."""
    if cache_shared and cache_dir == NODE_LOCAL_CACHE:
        raise ValueError("slurm_cluster: cache_shared=True needs cache_dir=, the directory "
                         "prepared for your group's cache")
    options = dict(options)
    directives = [f"--gres={gres}"] if gres else []
    directives += list(options.pop("job_extra_directives", None) or ())
    prologue = cache_prologue(cache_dir, cache_shared)
    if device:
        prologue.append(f'export DASKCL_DEVICE="{device}"')
    prologue += list(options.pop("job_script_prologue", None) or ())
    extra = ["--preload", "daskcl.cluster", *(options.pop("worker_extra_args", None) or ())]
    options.setdefault("job_name", "daskcl-worker")
    return dict(cores=cores, processes=1, memory=memory, local_directory=local_directory,
                job_extra_directives=directives, job_script_prologue=prologue,
                worker_extra_args=extra, **options)


def _scheduler_options(kwargs: dict[str, Any], dashboard_address: str | None) -> dict[str, Any]:
    """The ``scheduler_options`` of the cluster of ``kwargs``: those given (else dask-jobqueue's
    configured ones), with where the scheduler listens -- one address: the workers'
    ``interface`` (dask-jobqueue gives the scheduler the same one) or, without one, this host's
    address that the scheduler advertises (dask-jobqueue's default listens on every
    interface) -- and its dashboard on loopback unless ``dashboard_address`` says otherwise."""
    import dask

    config_name = kwargs.get("config_name") or "slurm"
    given = kwargs.get("scheduler_options")
    sched = dict(given if given is not None else
                 dask.config.get(f"jobqueue.{config_name}.scheduler-options", {}) or {})
    interface = kwargs.get("interface") or dask.config.get(f"jobqueue.{config_name}.interface",
                                                           None)
    if "host" not in sched and "interface" not in sched and not interface:
        from distributed.utils import get_ip

        sched["host"] = get_ip()    # what a scheduler on every interface would advertise
    if "dashboard_address" not in sched:
        if dashboard_address is None:
            # no dashboard; distributed still serves its HTTP routes (health): on a free port
            sched["dashboard"] = False
            sched["dashboard_address"] = "127.0.0.1:0"
        else:
            sched["dashboard_address"] = _dashboard_address(dashboard_address)
    return sched


def _dashboard_address(address: str) -> str:
    """``"HOST:PORT"`` as given; a port alone (``":8787"``, ``"8787"``) on loopback."""
    text = str(address).strip()
    if text.startswith(":") or text.isdigit():
        return f"127.0.0.1:{text.lstrip(':') or 0}"
    return text


def _job_script(**kwargs: Any) -> str:
    """The job script that :func:`slurm_cluster` with these arguments would submit, rendered
    without starting its scheduler (nothing listens): the scheduler's address is
    dask-jobqueue's placeholder, ``tcp://<insert-scheduler-address-here>:8786``.

    Takes :func:`slurm_cluster`'s arguments (those of the cluster and its scheduler, such as
    ``dashboard_address`` and ``scheduler_options``, change nothing in the script); not
    ``security`` or ``protocol``, whose worker options only a running cluster knows.

    Raises
    ------
    ClusterError
        dask-jobqueue is not installed, or ``security``/``protocol`` given.
    """
    SLURMCluster = _slurm_cluster_class()
    if kwargs.get("security") is not None or kwargs.get("protocol") is not None:
        raise ClusterError("with security= or protocol=, render the script of a "
                           "running cluster (slurm_cluster(...).job_script())")
    import inspect

    params = inspect.signature(slurm_cluster).parameters     # its defaults, not copies
    own: dict[str, Any] = {k: kwargs.pop(k, params[k].default) for k in (
        "cache_dir", "cache_shared", "gres", "device", "cores", "memory", "local_directory")}
    for k in ("n_workers", "minimum", "maximum", "dashboard_address"):
        kwargs.pop(k, None)
    options = _cluster_options(**own, options=kwargs)
    job_kwargs = {k: v for k, v in options.items() if k not in _CLUSTER_ONLY}
    job = SLURMCluster.job_cls(_NO_SCHEDULER, name="dummy-name", **job_kwargs)
    return str(job.job_script())


def check_submission(cluster: Any, timeout: float = 120.0) -> None:
    """Ask SLURM whether it would take the cluster's worker job (``sbatch --test-only``, which
    submits nothing), so that a job SLURM refuses (no controller, a wrong partition, account or
    ``--gres``) is one error now, not dask-jobqueue's tracebacks and a wait without end.

    Raises
    ------
    ClusterError
        sbatch is missing, does not answer within ``timeout`` seconds, or refuses the job.
    """
    import os
    import subprocess
    import tempfile

    fd, path = tempfile.mkstemp(prefix="daskcl-job-", suffix=".sh")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(cluster.job_script())
        proc = subprocess.run(["sbatch", "--test-only", path], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        raise ClusterError("sbatch is not on PATH: daskcl slurm submits its workers as SLURM "
                           "jobs, from a machine where sbatch works") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"sbatch --test-only did not answer within {timeout:.0f} s: is the "
                           "SLURM controller reachable from here?") from None
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        said = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        raise ClusterError("SLURM would not take a worker job ("
                           + (said[-1] if said else f"sbatch exit code {proc.returncode}")
                           + "); check --queue, --account, --gres and --job-extra "
                           "(--print-job-script shows the job)")


def _slurm(args: argparse.Namespace) -> int:
    from distributed import Client

    from .sweep import Sweep, run

    if args.maximum is None and args.workers is None and not args.print_job_script:
        print("error: give --workers N (a fixed count) or --maximum N (adaptive)", file=sys.stderr)
        return 2
    sweep = None if args.print_job_script else Sweep.from_toml(args.spec)
    options: dict[str, Any] = {
        k: v for k, v in (("queue", args.queue), ("account", args.account),
                          ("walltime", args.walltime), ("job_cpu", args.job_cpu),
                          ("interface", args.interface), ("log_directory", args.log_directory))
        if v is not None
    }
    settings: dict[str, Any] = dict(
        gres=args.gres or None, device=args.device, cache_dir=args.cache_dir,
        cache_shared=args.cache_shared, cores=args.cores, memory=args.memory,
        job_extra_directives=args.job_extra, **options)
    if sweep is None:   # rendered, not submitted: no scheduler starts, nothing listens
        print(_job_script(**settings))
        return 0
    dashboard = args.dashboard_address.strip() or None
    # no jobs yet: SLURM is asked first whether it takes one
    cluster = slurm_cluster(0, dashboard_address=dashboard, **settings)
    with cluster:
        check_submission(cluster)
        if args.maximum is not None:
            cluster.adapt(minimum=args.minimum or 0, maximum=args.maximum)
        else:
            cluster.scale(args.workers)
        with Client(cluster) as client:
            res = run(sweep, args.out, client, resume=args.resume, overwrite=args.overwrite,
                      progress=not args.quiet)
    print(f"wrote {res.store}: {res.computed} chunks computed, {res.skipped} already done, "
          f"{res.seconds:.1f} s on {', '.join(res.devices) or 'no device (nothing to do)'}")
    return 0


def slurm_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the arguments of ``slurm SPEC --out STORE ...`` to ``p`` (``python -m
    daskcl.deploy slurm`` and ``daskcl slurm`` share them); return ``p``."""
    p.add_argument("spec", help="the sweep spec (TOML)")
    p.add_argument("--out", help="the zarr store: a path on a shared filesystem or an fsspec URL")
    p.add_argument("--workers", type=int, default=None, help="a fixed number of worker jobs")
    p.add_argument("--maximum", type=int, default=None, help="adaptive: at most this many jobs")
    p.add_argument("--minimum", type=int, default=None, help="adaptive: at least this many jobs")
    p.add_argument("--gres", default="gpu:1", help="--gres of each job ('' for none)")
    p.add_argument("--job-extra", action="append", default=[],
                   help="another #SBATCH directive, e.g. --job-extra=--gpus=1 (repeatable)")
    p.add_argument("--device", default=None, help="DASKCL_DEVICE of the workers, e.g. NVIDIA")
    p.add_argument("--cache-dir", default=NODE_LOCAL_CACHE,
                   help="DASKCL_CACHE_DIR on the node (shell text; default %(default)s), "
                        "made private to you (mode 0700)")
    p.add_argument("--cache-shared", action="store_true",
                   help="--cache-dir is a cache shared by your group, prepared for it "
                        "(group-owned, setgid, not writable by others)")
    p.add_argument("--cores", type=int, default=1, help="worker threads (default 1)")
    p.add_argument("--job-cpu", type=int, default=None, help="CPUs booked per job")
    p.add_argument("--memory", default="16GB", help="memory per job (default %(default)s)")
    p.add_argument("--queue", default=None, help="partition (-p)")
    p.add_argument("--account", default=None, help="account (-A)")
    p.add_argument("--walltime", default=None, help="time limit per job (-t)")
    p.add_argument("--interface", default=None,
                   help="network interface of the workers and the scheduler, e.g. ib0: the "
                   "scheduler listens on its address only (default: on this host's address "
                   "that the workers are given, the one on its route out)")
    p.add_argument("--dashboard-address", default=_DASHBOARD_ADDRESS, metavar="HOST:PORT",
                   help="where the scheduler's dashboard listens (default %(default)s: this "
                   "host only; a port alone, :PORT, is on 127.0.0.1 too; '' for none)")
    p.add_argument("--log-directory", default=None, help="where the jobs' logs go")
    p.add_argument("--resume", action="store_true", help="compute only the missing chunks")
    p.add_argument("--overwrite", action="store_true", help="replace an existing store")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print nothing but errors and the result line")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="show the log of dask's workers (hidden otherwise)")
    p.add_argument("--print-job-script", action="store_true",
                   help="print the job script a worker would be submitted with (the "
                   "scheduler's address a placeholder); start and submit nothing")
    return p


def run_slurm(args: argparse.Namespace) -> int:
    """Run the command that :func:`slurm_arguments` parsed: 0 done, 1 an error, 2 a usage
    error, 130 stopped by Ctrl-C (each said in one line on stderr)."""
    usage = None
    if not args.print_job_script and not args.out:
        usage = "--out STORE is needed"
    elif args.cache_shared and args.cache_dir == NODE_LOCAL_CACHE:
        usage = "--cache-shared needs --cache-dir, the directory prepared for your group"
    elif args.resume and args.overwrite:
        usage = "--resume keeps the store's finished chunks, --overwrite replaces them: give one"
    elif args.quiet and args.verbose:
        usage = "--quiet and --verbose contradict each other: give one"
    if usage:
        print(f"error: {usage}", file=sys.stderr)
        return 2
    try:
        return _slurm(args)
    except DaskclError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:   # as `daskcl sweep` says it (the jobs end with the cluster)
        return report_stop(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m daskcl.deploy slurm SPEC --out STORE ...``: a sweep on SLURM GPU jobs (the
    same as ``daskcl slurm``)."""
    parser = argparse.ArgumentParser(prog="python -m daskcl.deploy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    slurm_arguments(sub.add_parser(
        "slurm", help="run a sweep spec on SLURM jobs, one GPU worker per job"))
    args = parser.parse_args(argv)
    with sigterm_raises():
        return run_slurm(args)


if __name__ == "__main__":
    sys.exit(main())
