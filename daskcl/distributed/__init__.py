# SPDX-License-Identifier: GPL-2.0-or-later
"""dask.distributed integration: one worker per device, bound and warmed
(:mod:`~daskcl.distributed.cluster`, public as :mod:`daskcl.cluster`).  SLURM, which runs sweeps
on it, stands above the sweeps: :mod:`daskcl.deploy`."""
