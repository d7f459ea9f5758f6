# SPDX-License-Identifier: GPL-2.0-or-later
"""What runs in a dask worker: :class:`DaskclPlugin` binds it to its OpenCL device and builds
the programs of named kernels before the first task; :func:`dask_setup` does the same as a
dask preload (``dask worker ADDRESS --nthreads 1 --preload daskcl.cluster``).  It carries only
strings: nothing OpenCL crosses the wire; each worker process builds (or loads from its disk
cache) its own programs, once.  :func:`describe` and :func:`worker_devices` say what each
worker is bound to.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from .. import config
from ..errors import ClusterError
from ..kernels._kernel import Kernel
from ..runtime import device as _device
from ..runtime import program as _program

__all__ = [
    "LOCAL_WORKER_ENV",
    "DaskclPlugin",
    "check_config",
    "dask_setup",
    "describe",
    "warm",
    "worker_devices",
]

_log = logging.getLogger("daskcl.cluster")

#: Set in the environment of :func:`local_cluster`'s workers: they ignore SIGINT, and the
#: process that started the cluster closes them.
LOCAL_WORKER_ENV = "DASKCL_LOCAL_WORKER"


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
    if os.environ.get(LOCAL_WORKER_ENV) == "1" and \
            threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        check_config()
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


def check_config() -> None:
    """Every config key read once: a value from the environment that the config refuses
    (``DASKCL_BINNING=zzz``) is its :class:`~daskcl.errors.ConfigError` now, where workers
    are started, not in every task they are sent (they joined, then failed each one)."""
    for key in config.KEYS:
        config.get(key)
