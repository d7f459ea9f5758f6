# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps: a function evaluated over the outer product of parameter axes, written to zarr.

:class:`Sweep` is a spec (:mod:`~daskcl.sweep.spec`, which imports nothing of the store or the
run); :func:`run` computes it into a store (:mod:`~daskcl.sweep.runner`: the chunk tasks on a
cluster) whose layout, overwrite rules and checksums are :mod:`~daskcl.sweep.store`'s;
:func:`open_result` reads one back and :func:`verify` checks one.
"""

from .runner import SweepResult, run
from .spec import Axis, GlmSpec, Output, Sweep, SweepError
from .store import open_result, verify

__all__ = [
    "Axis",
    "GlmSpec",
    "Output",
    "Sweep",
    "SweepError",
    "SweepResult",
    "open_result",
    "run",
    "verify",
]
