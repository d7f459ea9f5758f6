# SPDX-License-Identifier: GPL-2.0-or-later
"""dask.distributed integration: one worker per device, each bound and warmed.

* :class:`DaskclPlugin` -- a worker plugin that binds the worker process to its OpenCL device
  and builds the programs of the named kernels before the first task arrives.
* This module is also a dask *preload*: ``dask worker ADDRESS --nthreads 1 --preload
  daskcl.cluster`` binds each worker it starts the same way (:func:`dask_setup`).
* :func:`local_cluster` -- a ``distributed.SpecCluster`` with one worker process per device,
  listening on loopback only unless given ``host=``.
* :func:`worker_devices` -- what each worker of a running cluster is bound to (the
  ``daskcl devices --scheduler ADDRESS`` command prints it).
* :func:`run_workers` -- the ``daskcl worker`` command: one nanny and worker per device of this
  host, joined to an existing scheduler.

The code is in :mod:`daskcl.distributed`.

Examples
--------
>>> from distributed import Client
>>> from daskcl.cluster import local_cluster, worker_devices
>>> with local_cluster() as cluster, Client(cluster) as client:      # doctest: +SKIP
...     print(worker_devices(client))
"""

from .distributed.join import run_workers
from .distributed.local import LocalDaskclCluster, local_cluster
from .distributed.plugin import DaskclPlugin, dask_setup, describe, warm, worker_devices
from .distributed.slots import DeviceSlot, device_slots

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
