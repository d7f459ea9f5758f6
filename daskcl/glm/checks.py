# SPDX-License-Identifier: GPL-2.0-or-later
"""What :func:`~daskcl.glm.f2_f3` is given, checked: the data set (its shapes, a symmetric
positive semidefinite prior precision, R's warnings about binomial data) and a grid's chunks."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import outside_stacklevel, warn_r
from ..kernels import _transfer
from ..kernels._elementwise import is_dask_array

__all__ = ["check_chunks", "check_data", "real"]


def check_data(family: str, y: Any, x: Any, mu: Any, P: Any, alpha: Any, wt: Any
               ) -> tuple[np.ndarray, ...]:
    """``(y, x, mu, P, alpha, wt)`` as C-ordered float64 arrays of shapes that fit together
    (scalar ``alpha`` and ``wt`` made vectors), or a ``TypeError``/``ValueError`` naming the
    argument; R's warnings about binomial data said."""
    x = real("x", x)
    if x.ndim != 2:
        raise ValueError(
            f"f2_f3: x must be the (l1, l2) design matrix, one row per observation, got "
            f"shape {x.shape}"
        )
    l1, l2 = x.shape
    if l2 == 0:
        raise ValueError("f2_f3: x has no columns; at least one coefficient is needed (l2 >= 1)")
    vecs = {}
    for name, v, scalar_ok in (("y", y, False), ("alpha", alpha, True), ("wt", wt, True)):
        a = real(name, v)
        if a.ndim == 0 and scalar_ok:
            a = np.full(l1, float(a))
        if a.shape != (l1,):
            raise ValueError(
                f"f2_f3: {name} has shape {a.shape} but x has shape {x.shape}: y, alpha and "
                f"wt must have shape (l1,) = ({l1},), one value per row of x"
                + (" (alpha and wt may also be scalars)" if scalar_ok else "")
            )
        vecs[name] = a
    mu, P = _prior(x, mu, P)
    if family in ("binomial", "quasibinomial"):
        _warn_proportions_outside(family, vecs["y"])
    if family == "binomial":
        _warn_non_integer_counts(vecs["y"], vecs["wt"])
    return vecs["y"], x, mu, P, vecs["alpha"], vecs["wt"]


def _prior(x: np.ndarray, mu: Any, P: Any) -> tuple[np.ndarray, np.ndarray]:
    """The prior mean and precision, checked against the design matrix ``x``."""
    l2 = x.shape[1]
    mu = real("mu", mu)
    if mu.shape != (l2,):
        raise ValueError(
            f"f2_f3: mu has shape {mu.shape} but x has shape {x.shape}: mu must have shape "
            f"(l2,) = ({l2},), one prior mean per column of x"
        )
    P = real("P", P)
    if P.shape != (l2, l2):
        raise ValueError(
            f"f2_f3: P has shape {P.shape} but x has shape {x.shape}: P must have shape "
            f"(l2, l2) = ({l2}, {l2})"
        )
    # symmetric to rounding among finite entries; an infinite one equal to its mirror (it
    # reaches qf as the formula's IEEE value: +Inf where b differs from mu, NaN where it
    # equals mu, inf * 0); NaN passes (it reaches qf and grad as NaN)
    finite = np.isfinite(P) & np.isfinite(P.T)
    scale = float(np.abs(P[finite]).max()) if finite.any() else 0.0
    with np.errstate(invalid="ignore"):
        asym = np.abs(P - P.T)
    bad = np.where(finite, asym > 1e-10 * scale,
                   np.isinf(P) & (P != P.T))
    if np.any(bad):
        k, kk = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"f2_f3: P must be symmetric (a precision matrix); P[{k}, {kk}] = {float(P[k, kk])!r} "
            f"but P[{kk}, {k}] = {float(P[kk, k])!r}.  Symmetrise it, e.g. (P + P.T) / 2"
        )
    if np.isfinite(P).all():
        eig = np.linalg.eigvalsh(P)
        if eig.size and eig[0] < -1e-10 * max(1.0, float(np.abs(eig).max())):
            raise ValueError(
                f"f2_f3: P must be positive semidefinite (a precision matrix); its smallest "
                f"eigenvalue is {float(eig[0])!r}, so qf has no minimum.  A zero precision "
                f"(a flat prior along some directions, e.g. P = 0) is accepted"
            )
    return mu, P


def real(name: str, value: Any) -> np.ndarray:
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"f2_f3: {name} is a masked array; its mask would be lost: pass "
                        f"{name}.filled(...) or the unmasked values")
    if _transfer.is_device_array(value):
        raise TypeError(f"f2_f3: {name} is a pyopencl array; the data set (y, x, wt, mu, P) "
                        f"is copied to each device once, from the host: pass {name}.get()")
    if is_dask_array(value):
        raise TypeError(f"f2_f3: {name} is a dask array; the data set (y, x, wt, mu, P) is "
                        f"copied to each device whole: pass {name}.compute()")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(f"f2_f3: {name} must be an array of real numbers ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"f2_f3: {name} must be real numbers, got dtype {arr.dtype}")
    return np.require(arr.astype(np.float64, copy=False), requirements="C")


def check_chunks(chunks: Any, m1: Any) -> None:
    """``chunks`` along the grid axis of ``m1`` points: ``"auto"``, a positive int (-1: one
    chunk) or a sequence of non-negative ints that sum to ``m1``.  A ``ValueError`` for an int
    or sizes out of range; a ``TypeError`` for anything else, a string other than ``"auto"``
    (``"5"``) included."""
    if isinstance(chunks, str) and chunks == "auto":
        return
    if isinstance(chunks, tuple) and len(chunks) == 1 and isinstance(chunks[0], tuple):
        chunks = chunks[0]
    if isinstance(chunks, numbers.Integral) and not isinstance(chunks, bool):
        if int(chunks) > 0 or int(chunks) == -1:
            return
        raise ValueError(f"f2_f3: chunks must be a positive number of grid points per chunk "
                         f"(or -1 for one chunk), not {int(chunks)}")
    if isinstance(chunks, (tuple, list)) and all(
            isinstance(c, numbers.Integral) and not isinstance(c, bool) for c in chunks):
        sizes = [int(c) for c in chunks]
        if any(c < 0 for c in sizes) or (m1 is not None and sum(sizes) != m1):
            raise ValueError(f"f2_f3: chunk sizes {tuple(sizes)} must be non-negative and sum "
                             f"to the {m1} grid points")
        return
    raise TypeError(f"f2_f3: chunks must be 'auto', a positive int or a sequence of ints, "
                    f"not {chunks!r}")


def _warn_non_integer_counts(y: np.ndarray, wt: np.ndarray) -> None:
    """R's glm warns "non-integer #successes in a binomial glm!" where ``y * wt`` is more than
    1e-3 from an integer; the binomial likelihood here rounds the counts (``round(y * wt)`` of
    ``round(wt)`` trials), so a proportion that is not a count's, or weights that are not
    numbers of trials, change the model silently.  The same warning, naming the first row
    (quasibinomial, which is meant for such data, does not warn, as in R)."""
    with np.errstate(invalid="ignore"):
        s = y * wt
        bad = (np.abs(s - np.round(s)) > 1e-3) | (np.abs(wt - np.round(wt)) > 1e-3)
    rows = np.flatnonzero(bad & np.isfinite(s) & np.isfinite(wt))
    if rows.size:
        i = int(rows[0])
        warn_r(f"f2_f3: non-integer #successes in a binomial model: {rows.size} row(s), the "
               f"first y[{i}] * wt[{i}] = {float(y[i])!r} * {float(wt[i])!r}; the likelihood "
               "counts round(y * wt) successes of round(wt) trials (y is the proportion of "
               "successes, wt the number of trials; family 'quasibinomial' takes other data "
               "without this warning)", stacklevel=outside_stacklevel())


def _warn_proportions_outside(family: str, y: np.ndarray) -> None:
    """R's glm stops at binomial data outside [0, 1] ("y values must be 0 <= y <= 1"); here
    such a y is outside the support, and qf is +Inf at every b, silently: counts given as y
    (instead of proportions, with the trials as wt) are the likely cause.  A warning naming
    the first row (the values stay as the density gives them)."""
    with np.errstate(invalid="ignore"):
        rows = np.flatnonzero((y < 0) | (y > 1))
    if rows.size:
        i = int(rows[0])
        warn_r(f"f2_f3: {family} y must lie in [0, 1] (R's glm stops: \"y values must be "
               f"0 <= y <= 1\"): {rows.size} row(s) outside, the first y[{i}] = "
               f"{float(y[i])!r}, where qf is +Inf for every b (y is the proportion of "
               "successes, wt the number of trials)", stacklevel=outside_stacklevel())
