# SPDX-License-Identifier: GPL-2.0-or-later
"""The runtime: the annotated kernel library and its index (:mod:`~daskcl.runtime.library`),
the bound fp64 device (:mod:`~daskcl.runtime.device`), and assembled programs, built and cached
(:mod:`~daskcl.runtime.program`; on disk :mod:`~daskcl.runtime.diskcache` and
:mod:`~daskcl.runtime.drivercache`).  Everything above it (kernels, glm, sweeps) builds on these."""
