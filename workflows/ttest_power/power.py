# SPDX-License-Identifier: GPL-2.0-or-later
"""Power of Student's t test, from the noncentral t distribution: the function of ``power.toml``.

For ``n`` observations per group and standardized effect size ``d`` (Cohen's d: the difference
of means over the common standard deviation), at level ``alpha``:

============  ===========  =================
kind          df           ncp
============  ===========  =================
two.sample    2 n - 2      d sqrt(n / 2)
one.sample    n - 1        d sqrt(n)
paired        n - 1        d sqrt(n)          (n pairs; d = mean difference / sd of differences)
============  ===========  =================

two-sided:  t = qt(1 - alpha/2, df);  power = P[T' > t] + P[T' < -t]
one-sided:  t = qt(1 - alpha, df);    power = P[T' > t]

where T' is noncentral t with ``df`` degrees of freedom and noncentrality ``ncp``.  This is R's
``power.t.test(n, delta = d, sd = 1, sig.level = alpha, type = kind, alternative, strict = TRUE)``
(R's default ``strict = FALSE`` drops the second, lower-tail term of the two-sided power).

The computation is one fused kernel, the ``[kernel]`` table of ``power.toml`` (a
:class:`daskcl.ElementwiseKernel`: qt and pnt in one launch, no intermediate arrays); the sweep
runs it once per chunk, and :func:`power` calls the same kernel on NumPy (or dask, or device)
arrays:

>>> round(float(power(64, 0.5)), 4)      # Cohen (1988): 64 per group for d = 0.5, power 0.80
0.8015
>>> round(float(power(34, 0.5, kind="paired")), 4)
0.8078
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any

from daskcl import ElementwiseKernel

__all__ = ["ALTERNATIVES", "KINDS", "kernel", "power"]

KINDS = ("two.sample", "one.sample", "paired")
ALTERNATIVES = ("two.sided", "one.sided")


@functools.cache
def kernel() -> ElementwiseKernel:
    """The fused power kernel of ``power.toml``'s ``[kernel]`` table."""
    table = tomllib.loads((Path(__file__).parent / "power.toml").read_text())["kernel"]
    return ElementwiseKernel(table["inputs"], table["outputs"], table["operation"], "power")


def power(n: Any, d: Any, alpha: float = 0.05, kind: str = "two.sample",
          alternative: str = "two.sided") -> Any:
    """Power of the t test with ``n`` per group (or pairs, or observations) and effect ``d``.

    Parameters
    ----------
    n, d
        Arrays (or scalars) that broadcast together: sample size and standardized effect size.
    alpha
        Significance level.
    kind
        ``"two.sample"`` (default), ``"one.sample"`` or ``"paired"``.
    alternative
        ``"two.sided"`` (default) or ``"one.sided"`` (H1: effect > 0).

    Returns
    -------
    numpy.ndarray, dask.array.Array or pyopencl.array.Array
        float64, the broadcast shape of ``n`` and ``d``: as the kernel gives it (NumPy in, NumPy
        out; a dask array among the inputs gives a lazy dask array, a device array a device
        array).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {list(ALTERNATIVES)}, got {alternative!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    # as the kernel gives it: np.asarray computed a dask array at once, and failed on a device
    # array ("setting an array element with a sequence")
    return kernel()(n, d, float(alpha), int(kind == "two.sample"),
                    int(alternative == "two.sided"))
