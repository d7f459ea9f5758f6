# SPDX-License-Identifier: GPL-2.0-or-later
"""dask.distributed integration: one worker per device, each bound and warmed.

The public face of :mod:`daskcl.distributed.cluster`, and the module a plain dask worker
preloads: ``dask worker ADDRESS --nthreads 1 --preload daskcl.cluster``.
"""

from .distributed.cluster import (
    DaskclPlugin,
    DeviceSlot,
    LocalDaskclCluster,
    dask_setup,
    describe,
    device_slots,
    local_cluster,
    run_workers,
    warm,
    worker_devices,
)

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
