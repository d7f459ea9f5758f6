# SPDX-License-Identifier: GPL-2.0-or-later
"""dask.distributed integration: one worker per device, bound and warmed
(:mod:`~daskcl.distributed.cluster`, public as :mod:`daskcl.cluster`), and SLURM through
dask-jobqueue (:mod:`~daskcl.distributed.slurm`, public as :mod:`daskcl.deploy`)."""
