# SPDX-License-Identifier: GPL-2.0-or-later
"""Random variates of every R distribution, from Philox4x32-10 counter streams.

The generators themselves are ``daskcl.nmath.r<name>`` (``nmath.rgamma(10**6, 2.5, seed=1)``).
Here: the raw Philox4x32-10 bijection on the bound device (counters and keys in, the words
out: for known-answer tests), and the parameter limits beyond which the generators whose work
grows with a parameter return NaN with R's warning.
"""

from .kernels._random import RHYPER_MAX_N, RSIGNRANK_MAX_N, RWILCOX_MAX_N, philox4x32_10

__all__ = ["RHYPER_MAX_N", "RSIGNRANK_MAX_N", "RWILCOX_MAX_N", "philox4x32_10"]
