# SPDX-License-Identifier: GPL-2.0-or-later
"""SLURM through dask-jobqueue: ``python -m daskcl.deploy slurm SPEC ...``.

The public face of :mod:`daskcl.distributed.slurm`.
"""

import sys

from .distributed.slurm import NODE_LOCAL_CACHE, cache_prologue, main, slurm_cluster

__all__ = ["NODE_LOCAL_CACHE", "cache_prologue", "main", "slurm_cluster"]

if __name__ == "__main__":
    sys.exit(main())
