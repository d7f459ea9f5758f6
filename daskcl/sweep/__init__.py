# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps: a function evaluated over the outer product of parameter axes, written to zarr.

:class:`Sweep` is a spec (:mod:`~daskcl.sweep.spec`); :mod:`~daskcl.sweep.run` computes it into
a store and :func:`open_result` reads one back.
"""

from .spec import Axis, GlmSpec, Output, Sweep, SweepError, SweepResult, open_result

__all__ = ["Axis", "GlmSpec", "Output", "Sweep", "SweepError", "SweepResult", "open_result"]
