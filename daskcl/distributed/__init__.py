# SPDX-License-Identifier: GPL-2.0-or-later
"""dask.distributed integration, public as :mod:`daskcl.cluster`: what runs in a worker
(:mod:`~daskcl.distributed.plugin`), the device slots of this host
(:mod:`~daskcl.distributed.slots`), a local cluster (:mod:`~daskcl.distributed.local`) and
``daskcl worker`` joining a scheduler (:mod:`~daskcl.distributed.join`).  SLURM, which runs
sweeps on it, stands above the sweeps: :mod:`daskcl.deploy`."""
