# SPDX-License-Identifier: GPL-2.0-or-later
"""dask.distributed integration: one worker per device, each bound and warmed.

* :class:`DaskclPlugin` -- a worker plugin that binds the worker process to its OpenCL device
  (``DASKCL_DEVICE`` or the plugin's ``device``) and builds the programs of the named kernels
  before the first task arrives.  It carries only strings: nothing OpenCL crosses the wire;
  every worker process builds (or loads from its disk cache) its own programs, once.
* This module is also a dask *preload*: ``dask worker ADDRESS --nthreads 1 --preload
  daskcl.cluster`` binds each worker it starts the same way (``dask_setup``).
* :func:`local_cluster` -- a ``distributed.SpecCluster`` with one worker process per device:
  NVIDIA GPUs are given to workers by rotating ``CUDA_VISIBLE_DEVICES`` (as dask-cuda does),
  other devices by a per-worker ``DASKCL_DEVICE``.  It listens on loopback only unless given
  ``host=``: whoever can connect to a dask scheduler or worker can run code in it.
* :func:`worker_devices` -- what each worker of a running cluster is bound to (the
  ``daskcl devices --scheduler ADDRESS`` command prints it).
* :func:`run_workers` -- the ``daskcl worker`` command: one nanny and worker per device of this
  host, joined to an existing scheduler, listening on this host's address towards it.

``DASKCL_DEVICE``, when set, restricts the devices that :func:`device_slots` gives workers.

Examples
--------
>>> from distributed import Client
>>> from daskcl.cluster import local_cluster, worker_devices
>>> with local_cluster() as cluster, Client(cluster) as client:      # doctest: +SKIP
...     print(worker_devices(client))
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import dask
from distributed import SpecCluster
from distributed.diagnostics.plugin import WorkerPlugin

from .. import config
from ..errors import ClusterError, NoMatchingDeviceError, Terminated
from ..kernels._kernel import Kernel
from ..runtime import device as _device
from ..runtime import program as _program

__all__ = [
    "DaskclPlugin",
    "DeviceSlot",
    "LocalDaskclCluster",
    "dask_setup",
    "describe",
    "device_slots",
    "local_cluster",
    "run_workers",
    "warm",
    "worker_devices",
]

_log = logging.getLogger("daskcl.cluster")

#: Where local clusters listen unless told otherwise: this host only.
_LOOPBACK = "127.0.0.1"
#: Set in the environment of :func:`local_cluster`'s workers: they ignore SIGINT, and the
#: process that started the cluster closes them.
_LOCAL_WORKER_ENV = "DASKCL_LOCAL_WORKER"


def warm(names: Iterable[str | Kernel] = ()) -> list[str]:
    """Build (or load from the disk cache) the programs of the named kernels on this process's
    device; return the names warmed.

    A name is a ``daskcl.nmath`` function (``"pnorm"``) or ``"glm:<family>:<link>"``; a
    :class:`daskcl.Kernel` (your own :class:`daskcl.ElementwiseKernel`, say) is warmed as it is.
    """
    from .. import nmath

    done = []
    for name in names:
        if isinstance(name, Kernel):
            name.warm()
            done.append(name.name)
        elif name.startswith("glm:"):
            _, family, link = [*name.split(":"), "", ""][:3]
            _warm_glm(family, link)
            done.append(name)
        else:
            fn = nmath.FUNCTIONS.get(name)
            if fn is None:
                raise ClusterError(f"cannot warm {name!r}: no such daskcl.nmath function")
            fn.warm()
            done.append(name)
    return done


def _warm_glm(family: str, link: str) -> None:
    import numpy as np

    from ..glm import f2_f3

    x = np.ones((1, 1))   # one success of two trials: a count (binomial warns of others)
    f2_f3(family, link, np.zeros((1, 1)), np.array([0.5 if family != "Gamma" else 1.0]), x,
          np.zeros(1), np.eye(1), np.zeros(1), np.full(1, 2.0))


def describe() -> dict[str, Any]:
    """The device this process is bound to, as plain data (binds from the config key ``device``,
    ``DASKCL_DEVICE``, first if nothing is bound yet), with the ``CUDA_VISIBLE_DEVICES`` it
    was started with and the ``DASKCL_DEVICE`` and ``DASKCL_CACHE_DIR`` it is configured with."""
    bound = _device.current()
    info = bound.info
    out: dict[str, Any] = {
        "spec": info.spec, "platform": info.platform, "name": info.name, "type": info.type,
        "driver": info.driver_version, "fp64": info.fp64, "compute_units": info.compute_units,
        "global_mem": info.global_mem, "host": socket.gethostname(), "pid": os.getpid(),
    }
    if os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        out["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    for key in ("device", "cache.dir"):
        value = config.get(key)
        if value is not None:
            out[config.KEYS[key].env] = str(value)
    import pyopencl as cl

    if "cl_nv_device_attribute_query" in str(bound.device.extensions).split():
        # NVIDIA's attribute query tells GPUs apart across processes (a pyopencl built without
        # it has no such attribute; a driver that refuses it raises pyopencl's Error)
        try:
            out["pci"] = (f"{int(bound.device.pci_bus_id_nv):02x}:"
                          f"{int(bound.device.pci_slot_id_nv):02x}")
        except (AttributeError, cl.Error) as exc:
            _log.debug("daskcl: the device does not tell its PCI address: %s", exc)
    return out


class DaskclPlugin(WorkerPlugin):
    """Bind a dask worker to its OpenCL device and warm its program cache.

    Parameters
    ----------
    device : str, optional
        ``"P:D"`` or a name substring; default: the worker's config key ``device`` (its
        ``DASKCL_DEVICE``, set per worker by :func:`local_cluster` and ``daskcl worker``), else
        daskcl's usual choice (GPUs first).
    warm : sequence of str or Kernel
        Kernels to build at start-up (see :func:`warm`): names, or kernel objects of your own
        (they pickle by their definition).
    settings : mapping, optional
        ``daskcl.config`` keys to set on every worker; default: those set in code in this
        process when the plugin is made (:func:`daskcl.config.explicit`).  The key ``device``
        is not carried (each worker has its own): give ``device`` instead.

    Register it with ``client.register_plugin(DaskclPlugin(...))``: it runs on every current
    worker and on every worker that joins later (a restarted one included).  Where a worker
    cannot bind the device (no fp64 device, nothing matched), the registration raises the
    reason, distributed logs it on the worker and starts the worker anyway, and every daskcl
    task on it fails with that reason instead of running on another device (the
    ``daskcl.cluster`` preload and ``daskcl worker`` stop such a worker before it joins).

    Raises
    ------
    ConfigError
        A setting that ``daskcl.config`` refuses (checked here, before any worker sees it).
    """

    name = "daskcl"

    def __init__(self, device: str | None = None, warm: Sequence[str | Kernel] = (),
                 settings: dict[str, Any] | None = None) -> None:
        self.device = device
        self.warm = tuple(warm)
        for w in self.warm:
            if not isinstance(w, (str, Kernel)):
                raise TypeError(f"DaskclPlugin: warm takes kernel names and daskcl.Kernel "
                                f"objects, not {w!r}")
        chosen = config.check(config.explicit() if settings is None else settings)
        chosen.pop("device", None)
        self.settings = chosen
        self._applied: list[Any] = []  # what setup set, undone by teardown (last first)
        self._serving_before: bool | None = None   # program.long_lived before setup

    def setup(self, worker: Any) -> None:
        if self.settings:
            self._applied.append(config.set(self.settings))
        try:
            bound = _device.bind(self.device)
        except Exception as exc:
            _device.refuse_default(f"this worker could not bind the device that DaskclPlugin "
                                   f"named ({self.device!r}): {exc}")
            raise
        # a worker serves many calls: kernels tier up (noinline auto)
        self._serving_before = _program.long_lived(True)
        names = warm(self.warm)
        _log.info("daskcl: worker %s bound to %s; warmed %s", getattr(worker, "address", "?"),
                 bound.info.describe(), ", ".join(names) or "nothing")

    def teardown(self, worker: Any) -> None:
        """Restore the configuration the worker had before :meth:`setup`."""
        if self._applied:
            self._applied.pop().__exit__(None, None, None)
        if self._serving_before is not None:
            _program.long_lived(self._serving_before)
            self._serving_before = None


def dask_setup(worker: Any) -> None:
    """dask preload hook (``--preload daskcl.cluster``): bind the worker's device at start-up.

    The config key ``worker.warm`` (``DASKCL_WARM``: comma-separated kernel names) names
    kernels to build as well; ``worker.log_level`` (``DASKCL_WORKER_LOG_LEVEL``) sets the level
    of distributed's logger.  A worker that cannot bind its device or build those kernels does
    not start (and never joins the scheduler).
    """
    if os.environ.get(_LOCAL_WORKER_ENV) == "1" and \
            threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _check_config()
        level = config.get("worker.log_level")
        if level:
            logging.getLogger("distributed").setLevel(level)
        DaskclPlugin(warm=config.get("worker.warm")).setup(worker)
    except Exception as exc:  # whatever stops this worker from computing: said, then it exits
        # distributed logs a preload's exception and starts the worker anyway: it would join and
        # fail every task sent to it (three failures of one chunk end a sweep).  SystemExit is
        # not caught there, so the worker stops before it joins, its process exits with status
        # 1, and the reason is the last line of its log (a pod restarts, a SLURM step fails).
        _log.error("daskcl: this worker cannot use its device: %s", exc)
        raise SystemExit(f"daskcl: worker not started: {exc}") from exc


def worker_devices(client: Any) -> dict[str, dict[str, Any]]:
    """``{worker address: describe()}`` for every worker of the client's cluster.

    Parameters
    ----------
    client : distributed.Client
        A client of a running cluster whose workers were started with the
        ``daskcl.cluster`` preload (or :func:`local_cluster`).

    Returns
    -------
    dict
        For each worker's address, its device as :func:`describe` gives it: host, platform,
        device name, driver, ``fp64`` (and the PCI bus on NVIDIA).

    Examples
    --------
    >>> from distributed import Client
    >>> from daskcl.cluster import local_cluster, worker_devices
    >>> with local_cluster(1) as cluster, Client(cluster) as client:       # doctest: +SKIP
    ...     [d["fp64"] for d in worker_devices(client).values()]
    [True]
    """
    return dict(client.run(describe))


# --- one worker per device ------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceSlot:
    """One worker's device: its name and the environment that binds it."""

    label: str
    env: dict[str, str]


def device_slots(devices: str | int | Sequence[str] | None = None) -> list[DeviceSlot]:
    """The workers to start on this host, one per device.

    ``devices``: ``None`` or ``"all"`` -- every fp64-capable GPU, else the CPU device (one
    worker); an int ``n`` -- the first ``n`` GPUs (or ``n`` workers sharing the CPU device when
    there is no GPU); a sequence of ``"P:D"`` specs or name substrings -- those devices.

    A device is fp64-capable as a worker will find it: it advertises ``cl_khr_fp64`` *and*
    passes daskcl's fp64 probe (:func:`daskcl.runtime.device.probe_fp64`), which is run here,
    before any worker process starts: a device whose probe fails (a PoCL whose compiler does
    not know the CPU) is an error in one line now, not a worker that dies at start-up.

    ``DASKCL_DEVICE`` (this process's environment), when set, restricts every choice to the
    devices it matches (``"P:D"`` or a name substring, as :func:`daskcl.runtime.device.choose` reads it):
    a device it does not match is an error, as is a ``DASKCL_DEVICE`` that matches no fp64
    device; the message lists the devices found.

    NVIDIA GPUs are selected by rotating ``CUDA_VISIBLE_DEVICES`` (worker ``i`` sees GPU ``i``
    first), as dask-cuda does; any other device by ``DASKCL_DEVICE``.

    Raises
    ------
    NoMatchingDeviceError
        ``DASKCL_DEVICE`` or a requested device matches no fp64 device here.
    NoFp64DeviceError
        No device here (or none that ``DASKCL_DEVICE`` matches) passes the fp64 probe; the
        message says why each one fails.
    ClusterError
        A bad count.
    """
    listed = _device.list_devices()
    allowed = config.get("device")
    matching = [(i, d) for i, d in listed if allowed is None or _device.matches(i, allowed)]
    if allowed is not None and not matching:
        raise NoMatchingDeviceError(
            f"DASKCL_DEVICE={allowed!r} matches no fp64 OpenCL device of this host (use 'P:D' "
            "indices or a name substring; unset it to use any). Devices found: "
            + _device.listing(listed))
    if isinstance(devices, str) and devices != "all":
        devices = [d for d in devices.split(",") if d]
    if isinstance(devices, Sequence) and not isinstance(devices, str):
        if not devices:
            raise ClusterError("at least one worker is needed: name its device ('P:D' or a "
                               "name substring)")
        slots = []
        for spec in devices:
            info, _ = _device.choose(spec)      # probed: an unusable device is its error
            if allowed is not None and not _device.matches(info, allowed):
                raise NoMatchingDeviceError(
                    f"device {spec!r} ({info.describe()}) is not one DASKCL_DEVICE={allowed!r} "
                    "allows; it allows: " + _device.listing(matching))
            slots.append(DeviceSlot(info.describe(), {"DASKCL_DEVICE": info.spec}))
        return slots

    def usable(info: _device.DeviceInfo, dev: Any) -> bool:
        return info.fp64 and _device.probe_fp64(dev) is None

    # GPUs first (each probed); the CPU device only where no GPU is usable
    gpus = [i for i, d in matching if i.type == "GPU" and usable(i, d)]
    if not gpus:
        cpu = next((i for i, d in matching if i.type != "GPU" and usable(i, d)), None)
        if cpu is None:
            # no usable device: choose says why each one is not, as a worker would
            cpu, _ = _device.choose(allowed)
        n = 1 if devices in (None, "all") else int(devices)
        if n < 1:
            raise ClusterError(f"at least one worker is needed, got {devices!r}")
        return [DeviceSlot(cpu.describe(), {"DASKCL_DEVICE": cpu.spec}) for _ in range(n)]
    if devices not in (None, "all"):
        n = int(devices)
        if not 1 <= n <= len(gpus):
            raise ClusterError(f"asked for {n} GPU workers; this host has {len(gpus)} fp64 GPUs: "
                              + "; ".join(g.describe() for g in gpus))
        gpus = gpus[:n]
    # CUDA numbers every NVIDIA GPU of the host, allowed or not: index them among all of them.
    nvidia = [g for g, _ in listed if g.type == "GPU" and "NVIDIA" in g.platform.upper()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v for v in visible.split(",") if v] if visible else [str(i) for i in range(len(nvidia))]
    slots = []
    for g in gpus:
        if g in nvidia and len(ids) >= len(nvidia):
            j = nvidia.index(g)
            # Worker j sees its own GPU first (ids rotated by j) and binds the first NVIDIA GPU.
            env = {"CUDA_VISIBLE_DEVICES": ",".join(ids[j:] + ids[:j]),
                   "DASKCL_DEVICE": f"{g.platform_index}:0"}
            slots.append(DeviceSlot(g.describe(), env))
        else:
            slots.append(DeviceSlot(g.describe(), {"DASKCL_DEVICE": g.spec}))
    return slots


def local_cluster(
    n_workers: int | str | Sequence[str] | None = None,
    *,
    threads_per_worker: int = 1,
    warm_names: Sequence[str] = (),
    dashboard_address: str | None = ":0",
    silence_logs: int | bool = False,
    host: str = _LOOPBACK,
    **worker_options: Any,
) -> Any:
    """A ``distributed.SpecCluster`` on this host with one worker process per device.

    ``n_workers`` is passed to :func:`device_slots` (``None``: one worker per GPU, or one on the
    CPU device without a GPU).  Each worker is a nanny-supervised process (restarted if it dies),
    with ``threads_per_worker`` threads, bound and warmed by :class:`DaskclPlugin` through the
    ``daskcl.cluster`` preload.  ``silence_logs``: a logging level for distributed's loggers,
    in this process and in the workers from their start (``logging.WARNING`` keeps a command's
    output readable; ``DASK_LOGGING__DISTRIBUTED`` in this process's environment, when set,
    decides the workers' level instead).  The workers ignore SIGINT: a Ctrl-C reaches the
    process that started the cluster, which closes it (a Ctrl-C while the workers start is
    held until they have, then closes the cluster: ``KeyboardInterrupt``).  Extra keyword
    arguments go to
    every ``distributed.Nanny`` (``memory_limit``, ``local_directory``, ...).

    ``host``: the address that the scheduler, the nannies, the workers and the dashboard listen
    on; by default loopback (``127.0.0.1``), so that only processes of this host can connect.
    Anyone who can reach a dask scheduler or worker can run code there as this user: give
    another address (``"0.0.0.0"`` for every interface) only on a network you trust, or
    secure the cluster yourself (``distributed.Security``, TLS).  A ``dashboard_address``
    given as a port only (``":0"``, ``":8787"``) listens on ``host`` too.

    Parameters
    ----------
    n_workers : int, str, sequence of str or None
        The workers, as :func:`device_slots` takes them: ``None`` one per GPU (or one on the
        CPU device without a GPU); an int that many; device names or ``P:D`` indices, one
        worker each.
    threads_per_worker : int
        Threads of each worker (1: a device runs one kernel at a time).
    warm_names : sequence of str
        Kernels each worker builds before its first task (``"pnorm"``,
        ``"glm:binomial:logit"``).
    dashboard_address : str or None
        Where the dashboard listens (``":0"``: a free port; None: no dashboard).
    silence_logs : int or bool
        The level of distributed's loggers (False: unchanged).
    host : str
        The address every process of the cluster listens on (loopback by default).
    **worker_options
        Passed to every ``distributed.Nanny``.

    Returns
    -------
    LocalDaskclCluster
        The running cluster, a ``distributed.SpecCluster`` (a context manager that closes it);
        ``distributed.Client(cluster)`` submits to it.  Its workers are the device slots chosen
        here: ``scale`` and ``adapt`` raise :class:`~daskcl.errors.ClusterError` (start another
        cluster for other workers).

    Examples
    --------
    >>> from distributed import Client
    >>> from daskcl import nmath
    >>> with local_cluster() as cluster, Client(cluster) as client:         # doctest: +SKIP
    ...     client.submit(nmath.qnorm, 0.975).result()
    np.float64(1.9599639845400536)
    """
    from distributed import Nanny, Scheduler

    if not isinstance(host, str) or not host:
        raise ClusterError(f"local_cluster: host must be an address such as {_LOOPBACK!r}, "
                          f"got {host!r}")
    # 0 gave distributed's default (a thread per core), -1 a nanny's traceback; True, 3.0 and
    # "2" (a device name substring, which "avx512" matched) were taken for what they are not
    if isinstance(threads_per_worker, bool) or not isinstance(threads_per_worker, int) \
            or threads_per_worker < 1:
        raise ClusterError(f"local_cluster: threads_per_worker must be a whole number of "
                           f"threads, 1 or more, got {threads_per_worker!r}")
    if isinstance(n_workers, (bool, float)) \
            or (isinstance(n_workers, str) and n_workers.strip().isdigit()):
        raise ClusterError(f"local_cluster: n_workers is a count (an int), device names or "
                           f"'P:D' indices, or None, got {n_workers!r}")
    slots = device_slots(n_workers)
    _check_worker_config(warm_names)
    # settings made in code reach the worker processes through their environment; the device
    # is each slot's own
    warm_env = config.environ({k: v for k, v in config.explicit().items() if k != "device"})
    if warm_names:
        warm_env["DASKCL_WARM"] = ",".join(warm_names)
    # the workers leave SIGINT to this process (see _sigint_deferred)
    warm_env[_LOCAL_WORKER_ENV] = "1"
    workers = {
        f"daskcl-{i}": {
            "cls": Nanny,
            "options": {
                "nthreads": threads_per_worker,
                "env": {**slot.env, **warm_env},
                "preload": ["daskcl.cluster"],
                "host": host,
                **worker_options,
            },
        }
        for i, slot in enumerate(slots)
    }
    # distributed's scheduler serves HTTP (health, metrics) on its default port 8787 when no
    # address is given: without a dashboard it takes a free port, never a fixed one
    scheduler = {"cls": Scheduler, "options": {
        "host": host, "dashboard_address": _on_host(dashboard_address or ":0", host),
        "dashboard": dashboard_address is not None}}
    spawn_env = dict(dask.config.get("distributed.nanny.pre-spawn-environ") or {})
    if silence_logs:
        # A worker process configures distributed's logging as it imports it, before the
        # nanny's ``env`` or the preload apply: only its environment at spawn sets the level
        # (an explicit DASK_LOGGING__DISTRIBUTED in this process's environment wins).
        level = logging.WARNING if silence_logs is True else silence_logs
        spawn_env["DASK_LOGGING__DISTRIBUTED"] = logging.getLevelName(level).lower()
    with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn_env}), \
            _sigint_deferred() as interrupted:
        try:
            cluster = LocalDaskclCluster(workers=workers, scheduler=scheduler,
                                         name="daskcl", silence_logs=silence_logs)
        except Exception as exc:    # distributed's "Nanny failed to start": say why in a line
            raise ClusterError(f"the local cluster did not start: {_first_cause(exc)}"
                               ) from exc
    if interrupted:     # a Ctrl-C while the workers started: said now, the cluster closed
        cluster.close()
        raise KeyboardInterrupt
    return cluster


class LocalDaskclCluster(SpecCluster):
    """The cluster :func:`local_cluster` starts: one worker per device slot, chosen when it
    starts.  It does not scale: distributed's ``scale(n)`` failed inside with "'NoneType' object
    is not subscriptable" (a worker on which device?), and the client then waited for workers
    that never came."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]   # distributed's, untyped

    def scale(self, n: int = 0, memory: Any = None, cores: Any = None) -> Any:
        """Only to the workers it has, or to none (as closing does); anything else is a
        :class:`~daskcl.errors.ClusterError`."""
        if n == 0 or n == len(self.worker_spec):     # closing; or nothing to change
            return super().scale(n, memory=memory, cores=cores)  # type: ignore[no-untyped-call]
        raise ClusterError(_NO_SCALE.format(f" ({len(self.worker_spec)} here)"))

    def adapt(self, *args: Any, **kwargs: Any) -> Any:
        """A :class:`~daskcl.errors.ClusterError`: the workers are the device slots."""
        raise ClusterError(_NO_SCALE.format(""))


_NO_SCALE = ("a daskcl local cluster has one worker per device slot, chosen when it starts{}; "
             "it does not scale or adapt: start local_cluster(n_workers=...) anew")


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[list[bool]]:
    """Hold SIGINT back while the cluster starts its workers (from the main thread only;
    elsewhere nothing changes), and say afterwards whether one came: the list yielded holds
    ``True`` then.

    Meanwhile SIGINT is blocked in this thread and noted, not raised, by its handler.  The
    threads the cluster starts inherit the block, and so do the worker processes they spawn,
    which then never see a Ctrl-C: the terminal sends it to the whole process group, and only
    this process, which closes the cluster and its workers in order, takes it (instead of
    every worker printing its own traceback).  A worker started later, a restarted one,
    ignores SIGINT from its preload on (:func:`dask_setup`).  A Ctrl-C that comes meanwhile,
    pending on this thread or noted by the handler where another thread took it, is reported
    once the workers are up (it was lost before)."""
    interrupted: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    if not (hasattr(signal, "pthread_sigmask") and hasattr(signal, "sigtimedwait")):
        # no signal masks (Windows) or no sigtimedwait (macOS): ignored meanwhile, as before,
        # so that the workers still inherit it ignored; a Ctrl-C then is lost
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield interrupted
        finally:
            signal.signal(signal.SIGINT, old)
        return
    # multiprocessing starts its resource tracker with the first spawned process and unblocks
    # SIGINT in the starting thread afterwards, whatever it was: started now, before the block
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()

    def note(signum: int, frame: Any) -> None:
        interrupted.append(True)

    old = signal.signal(signal.SIGINT, note)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield interrupted
    finally:
        if signal.SIGINT in signal.sigpending():
            signal.sigtimedwait({signal.SIGINT}, 0)     # taken here: unblocking raises nothing
            interrupted.append(True)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, old)


def _check_worker_config(warm_names: Sequence[str]) -> None:
    """What the workers' preload would stop on, checked here first: a ``worker.warm`` name
    that is no function, a value of any config key that the config refuses (each worker failed
    to start, and distributed said so in a hundred lines of its log)."""
    from .. import nmath

    for name in [*(config.get("worker.warm") or ()), *warm_names]:
        if isinstance(name, str) and not name.startswith("glm:") and \
                name not in nmath.FUNCTIONS:
            raise ClusterError(f"cannot warm {name!r} (DASKCL_WARM, the config key "
                               "worker.warm): no such daskcl.nmath function")
    _check_config()


def _check_config() -> None:
    """Every config key read once: a value from the environment that the config refuses
    (``DASKCL_BINNING=zzz``) is its :class:`~daskcl.errors.ConfigError` now, where workers
    are started, not in every task they are sent (they joined, then failed each one)."""
    for key in config.KEYS:
        config.get(key)


#: How much of the root cause's message :func:`_first_cause` keeps: lines and characters.
_CAUSE_LINES, _CAUSE_CHARS = 15, 1500


def _first_cause(exc: BaseException) -> str:
    """The innermost exception under ``exc`` (distributed wraps a worker's own error in
    "Nanny failed to start" and "Cluster failed to start"), as ``Type: message``: its whole
    message (Python's own hints run over several lines, multiprocessing's "if __name__ ==
    '__main__'" one among them), not a traceback, dedented, without blank lines, and at most
    :data:`_CAUSE_LINES` lines of :data:`_CAUSE_CHARS` characters in all ("[...]" marks a cut)."""
    import textwrap

    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        exc = nxt
    text = str(exc)
    first, _, rest = text.strip().partition("\n")     # the first line's indent is no guide
    lines = [first.strip(), *textwrap.dedent(rest).splitlines()]
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    if not lines:
        return type(exc).__name__
    kept = "\n".join(lines[:_CAUSE_LINES])
    cut = len(lines) > _CAUSE_LINES or len(kept) > _CAUSE_CHARS
    if len(kept) > _CAUSE_CHARS:
        kept = kept[:_CAUSE_CHARS].rstrip()
    return f"{type(exc).__name__}: {kept}" + (" [...]" if cut else "")


def _on_host(address: str | None, host: str) -> str | None:
    """A dashboard address given as ``":port"`` (or a bare port) on ``host``; others as given."""
    if address is None:
        return None
    text = str(address)
    if text.startswith(":") or text.isdigit():
        from distributed.comm.addressing import unparse_host_port

        return str(unparse_host_port(host, int(text.lstrip(":") or 0)))
    return text


def _route_to(address: str | None, scheduler_file: str | None = None) -> str:
    """This host's address on the route to the scheduler (loopback for a scheduler on this
    host): where ``daskcl worker`` listens unless told otherwise.  ``address`` or, without it,
    the address in ``scheduler_file`` (read as it is now: no wait)."""
    import time

    from distributed.comm import get_address_host
    from distributed.utils import get_ip

    if not address:
        assert scheduler_file is not None
        address = _scheduler_file_address(scheduler_file, 0, time.monotonic())
    try:
        return str(get_ip(get_address_host(address)))
    except (OSError, ValueError) as exc:
        raise ClusterError(f"cannot find this host's address towards the scheduler {address}: "
                          f"{exc}; give --listen HOST") from exc


#: Seconds ``daskcl worker`` waits for its scheduler (its file included) unless told otherwise.
_CONNECT_TIMEOUT = 10.0


def _scheduler_file_address(path: str, timeout: float, deadline: float) -> str:
    """The scheduler's address in the scheduler file ``path``, waiting for the file (and for
    its contents: a scheduler may be writing it) until ``deadline`` (``time.monotonic()``).
    Waiting is said on stderr once, so that a mistyped path is no silent wait."""
    import json
    import sys
    import time

    said = False
    what = "no scheduler file"
    while True:
        try:
            with open(path, encoding="utf-8") as f:
                address = json.load(f).get("address")
            if isinstance(address, str) and address:
                return address
            what = "not a dask scheduler file (JSON with the scheduler's \"address\")"
        except FileNotFoundError:
            what = "no scheduler file"
        except IsADirectoryError:
            raise ClusterError(f"{path} is a directory, not a dask scheduler file") from None
        except (ValueError, AttributeError):   # half written, or not JSON of an object
            what = "not a dask scheduler file (JSON with the scheduler's \"address\")"
        except OSError as exc:
            raise ClusterError(f"cannot read the scheduler file {path}: {exc}") from None
        if time.monotonic() >= deadline:
            if what == "no scheduler file":
                raise ClusterError(f"no scheduler file {path} (waited {timeout:g} s for it; "
                                   "--timeout SECONDS waits longer)")
            raise ClusterError(f"{path} is {what}, as `dask scheduler --scheduler-file` "
                               f"writes it (waited {timeout:g} s)")
        if not said:
            print(f"daskcl worker: waiting up to {timeout:g} s for the scheduler file {path} "
                  "(--timeout)", file=sys.stderr, flush=True)
            said = True
        time.sleep(0.1)


#: the most bytes of the first message of a dask comm's handshake (its few settings)
_MAX_HANDSHAKE = 1 << 20


def _probe_scheduler(address: str, timeout: float) -> None:
    """That what listens at a ``tcp://`` address speaks dask's protocol, within ``timeout``
    seconds: a scheduler sends its handshake as it accepts (8 bytes of length, 8 of its
    number of frames, then their lengths), an HTTP server (a dashboard) waits for a request,
    an SSH server sends its banner.  Distributed reads any 8 bytes as a length, and allocated
    exabytes for a banner, or waited past its timeout on a dashboard: a :class:`ClusterError`
    in one line instead.  Other protocols, and an address that refuses the connection (a
    scheduler still starting: distributed tries again), are left to distributed."""
    import time

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(address)
        if protocol != "tcp":
            return
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except OSError:
        return
    data = b""
    with sock:
        try:
            while len(data) < 16 and (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                got = sock.recv(16 - len(data))
                if not got:
                    break
                data += got
        except TimeoutError:
            pass
        except OSError as exc:
            raise ClusterError(f"{address} is not a dask scheduler (the connection failed "
                               f"before it said anything: {exc.strerror or exc})") from None
    if len(data) == 16:
        total, frames = int.from_bytes(data[:8], "little"), int.from_bytes(data[8:], "little")
        if 1 <= frames <= 16 and 8 + 8 * frames <= total <= _MAX_HANDSHAKE:
            return
    if not data:
        raise ClusterError(
            f"{address} is not a dask scheduler: it accepted the connection but sent nothing "
            f"within {timeout:g} s, as a scheduler does at once (an HTTP server, such as the "
            "dashboard? give the scheduler's own port, 8786 by default)")
    text = data.split(b"\r")[0].split(b"\n")[0]
    said = (repr(text.decode()) if text and text.isascii() and text.decode().isprintable()
            else "only zero bytes" if not data.strip(b"\0")
            else f"{len(data)} bytes that are not dask's handshake")
    raise ClusterError(f"{address} is not a dask scheduler (it answered {said})")


async def _check_scheduler(address: str, timeout: float) -> None:
    """That a dask scheduler answers at ``address`` within ``timeout`` seconds: one line
    (:class:`ClusterError`) if not, instead of every nanny's traceback after 30 s."""
    from distributed import Security
    from distributed.core import rpc

    where = f"cannot reach the scheduler {address} within {timeout:g} s"
    _probe_scheduler(address, timeout)
    try:
        args = Security().get_connection_args("worker")
        async with rpc(address, timeout=timeout, connection_args=args) as remote:
            ident = await asyncio.wait_for(remote.identity(n_workers=0), timeout)
    except (OSError, TimeoutError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(f"{where}: {why}") from None
    except (ValueError, TypeError) as exc:      # no address distributed can parse
        raise ClusterError(f"{address!r} is not a scheduler address (tcp://host:port): "
                           f"{exc}") from None
    kind = ident.get("type") if isinstance(ident, dict) else None
    if kind != "Scheduler":
        raise ClusterError(f"{address} is not a dask scheduler (it is {kind or 'something else'})")


def _check_listen(host: str) -> None:
    """That this host can listen on ``host`` (``--listen``): one line if not, before any nanny
    tries (and logs its failure at length)."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as s:
            s.bind(addr)
    except (OSError, UnicodeError) as exc:
        raise ClusterError(f"cannot listen on {host}: {exc}") from None


async def _serve(address: str, slots: list[DeviceSlot], nthreads: int, name: str | None,
                 local_directory: str | None, listen: str | None, timeout: float) -> None:
    from distributed import Nanny

    await _check_scheduler(address, timeout)
    host = socket.gethostname()
    listen = listen or _route_to(address)
    nannies = [
        Nanny(address, nthreads=nthreads,
              env=slot.env, preload=["daskcl.cluster"], host=listen,
              name=f"{name or host}-daskcl-{i}", local_directory=local_directory)
        for i, slot in enumerate(slots)
    ]
    try:
        try:
            await asyncio.gather(*(n.start() for n in nannies))
        except Exception as exc:    # "Nanny failed to start": said in a line, with its cause
            cause = _first_cause(exc)
            if "name taken" in cause:   # the scheduler has workers of this name: another run's
                raise ClusterError(
                    f"the workers did not start: the scheduler already has workers named "
                    f"{nannies[0].name!r} and on (another daskcl worker on this host, with "
                    f"the same --name); give each run its own --name") from exc
            raise ClusterError(f"the workers did not start: {cause}") from exc
        for n, slot in zip(nannies, slots):
            print(f"daskcl worker {n.name} ({slot.label}) joined {n.scheduler_addr}", flush=True)
        await asyncio.gather(*(n.finished() for n in nannies))
    finally:
        await asyncio.gather(*(n.close() for n in nannies), return_exceptions=True)


def run_workers(address: str | None, *, scheduler_file: str | None = None,
                devices: str | int | Sequence[str] | None = None, nthreads: int = 1,
                name: str | None = None, local_directory: str | None = None,
                listen: str | None = None, timeout: float = _CONNECT_TIMEOUT) -> int:
    """Start one dask worker per device of this host, joined to the scheduler at ``address`` (or
    the one in ``scheduler_file``); run until they are stopped (Ctrl-C, SIGTERM, or the scheduler
    retiring them).

    ``timeout``: seconds to wait for the scheduler before any worker starts: for its file to
    appear (a scheduler started beside the workers writes it; the wait is said on stderr), then
    for the scheduler to answer.  A scheduler that does not is a :class:`ClusterError` in one line.

    ``listen``: the address the nannies and workers listen on.  By default, this host's address
    on the route to the scheduler: loopback when the scheduler is on this host, else the one
    interface the scheduler reaches (never every interface).  Anyone who can reach a worker's
    port can run code in it as this user; securing a multi-host cluster (a trusted network,
    ``distributed.Security`` with TLS) is up to whoever runs it.

    Raises
    ------
    ClusterError
        No scheduler given, both given, a bad ``nthreads`` or ``timeout``, a ``DASKCL_WARM``
        name that is no function, a scheduler (or its file) not there within ``timeout``, or
        workers that did not start (with the cause).
    NoMatchingDeviceError, NoFp64DeviceError
        The devices, as :func:`device_slots` refuses them (checked first).
    """
    import time

    if not address and not scheduler_file:
        raise ClusterError("give the scheduler's address (tcp://host:8786) or --scheduler-file")
    if address and scheduler_file:
        raise ClusterError("give the scheduler's address or --scheduler-file, not both")
    if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads < 1:
        raise ClusterError(f"nthreads must be a whole number of at least 1, not {nthreads!r}")
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):
        raise ClusterError(f"timeout must be a positive number of seconds, not {timeout!r}")
    slots = device_slots(devices)
    _check_worker_config(())    # a DASKCL_WARM name that is none: said here, not by each worker
    if listen:
        _check_listen(listen)
    try:
        if scheduler_file:
            address = _scheduler_file_address(scheduler_file, timeout,
                                              time.monotonic() + timeout)
        assert address is not None
        asyncio.run(_serve(address, slots, nthreads, name, local_directory, listen, timeout))
    except Terminated:      # SIGTERM (kill, a batch system): the workers closed as at Ctrl-C
        return 143
    except KeyboardInterrupt:
        pass
    return 0
