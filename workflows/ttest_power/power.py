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

The sweep calls :func:`power` once per chunk with ``n`` and ``d`` as arrays of the chunk's shape;
it is also an ordinary NumPy function:

>>> round(float(power(64, 0.5)), 4)      # Cohen (1988): 64 per group for d = 0.5, power 0.80
0.8015
>>> round(float(power(34, 0.5, kind="paired")), 4)
0.8078
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daskcl import nmath

__all__ = ["ALTERNATIVES", "KINDS", "power"]

KINDS = ("two.sample", "one.sample", "paired")
ALTERNATIVES = ("two.sided", "one.sided")


def _df_ncp(kind: str, n: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Degrees of freedom and noncentrality of the t statistic under the alternative."""
    if kind == "two.sample":
        return 2.0 * n - 2.0, d * np.sqrt(n / 2.0)
    return n - 1.0, d * np.sqrt(n)  # one.sample, paired (n pairs)


def power(n: Any, d: Any, alpha: float = 0.05, kind: str = "two.sample",
          alternative: str = "two.sided") -> np.ndarray:
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
    numpy.ndarray
        float64, the broadcast shape of ``n`` and ``d``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {list(ALTERNATIVES)}, got {alternative!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    n_arr, d_arr = np.broadcast_arrays(np.asarray(n, dtype=np.float64),
                                       np.asarray(d, dtype=np.float64))
    df, ncp = _df_ncp(kind, n_arr, d_arr)
    tails = 2.0 if alternative == "two.sided" else 1.0
    tcrit = nmath.qt(float(alpha) / tails, df, lower_tail=False)
    upper = nmath.pnt(tcrit, df, ncp, lower_tail=False)
    if alternative == "one.sided":
        return np.asarray(upper, dtype=np.float64)
    return np.asarray(upper + nmath.pnt(-tcrit, df, ncp), dtype=np.float64)
