# SPDX-License-Identifier: GPL-2.0-or-later
"""The R-agreement cases: grids of arguments on which daskcl must agree with libRmath.

One module per group of functions, each defining ``CASES``, a list of :class:`RCase`.
:func:`all_cases` collects every module of this package, so adding a group is adding a module.
``tests/nmath/test_rmath_agreement.py`` evaluates each case under every combination of R's flags for
its kind of function and compares with the oracle (``tests/support/rmath_oracle.py``).

Tolerances are data: ``rtol`` is the largest relative error accepted, ``TARGET_RTOL`` unless
``why`` says why a function needs more (typically: the algorithm that R uses amplifies the
last-bit differences between the device's libm and glibc, or R is less accurate than a newer
algorithm).  Relative error is measured against ``max(|R|, DBL_MIN)``: below the smallest
normal number doubles have a fixed spacing of 2^-1074 and fewer significant bits.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["TARGET_RTOL", "QuietNaN", "RCase", "all_cases", "grid", "nan_inf"]

#: the accuracy daskcl aims for against libRmath
TARGET_RTOL = 1e-13

#: appended to most grids: R's answers to NaN and the infinities
nan_inf: tuple[float, ...] = (math.nan, math.inf, -math.inf)


@dataclass(frozen=True)
class QuietNaN:
    """Points where R returns NaN for NaN-free arguments *without* a "NaNs produced" warning.

    R's vectorised wrappers warn "NaNs produced" whenever a result is NaN and no argument was,
    and daskcl counts the same; so the test expects daskcl's count to be exactly those NaNs.
    Where R reaches a function some other way and stays silent, a case lists the points here:
    ``where(*args, **flags)`` gets the broadcast argument arrays (Rmath.h order) and the flags
    as keywords and returns a boolean mask, ``why`` says why R is silent there, and the test
    then expects daskcl not to count them either.  (No case of the foundation slice needs one.)
    """

    where: Callable[..., np.ndarray]
    why: str

    def __post_init__(self) -> None:
        if not self.why.strip():
            raise ValueError("QuietNaN needs a reason (why)")


@dataclass(frozen=True)
class RCase:
    """One grid of arguments for one public function.

    Parameters
    ----------
    name
        The public name, ``daskcl.nmath.<name>`` (a row of ``daskcl/_nmath_table.py``).
    grid
        {argument name: values}, every argument of the function in Rmath.h order; the cross
        product is evaluated.
    rtol
        Largest relative error accepted (``TARGET_RTOL`` unless ``why`` says otherwise).
    why
        Required when ``rtol`` is looser than ``TARGET_RTOL``: the reason.
    rsym
        The Rmath.h symbol of the oracle, where it differs from the table's C symbol (for
        example ``cospi`` for the kernel's ``R_cospi``).
    atol, atol_why
        An absolute tolerance accepted as an alternative to ``rtol``, only with a reason.
    quiet_nan
        Points where R gives NaN without warning (see :class:`QuietNaN`).
    label
        Distinguishes the test ids of several cases of one function.
    """

    name: str
    grid: Mapping[str, Sequence[float]]
    rtol: float = TARGET_RTOL
    why: str = ""
    rsym: str | None = None
    atol: float = 0.0
    atol_why: str = ""
    quiet_nan: tuple[QuietNaN, ...] = ()
    label: str = ""
    _arrays: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rtol > TARGET_RTOL and not self.why.strip():
            raise ValueError(f"{self.id}: rtol {self.rtol:g} > {TARGET_RTOL:g} needs a reason (why)")
        if self.atol and not self.atol_why.strip():
            raise ValueError(f"{self.id}: atol needs a reason (atol_why)")
        arrays = tuple(np.asarray(v, dtype=np.float64).ravel() for v in self.grid.values())
        if any(a.size == 0 for a in arrays):
            raise ValueError(f"{self.id}: empty grid axis")
        object.__setattr__(self, "_arrays", arrays)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.label}]" if self.label else self.name

    @property
    def size(self) -> int:
        return math.prod(a.size for a in self._arrays)

    def axes(self) -> list[np.ndarray]:
        """The grid's values, each along its own axis, so that they broadcast to the product."""
        n = len(self._arrays)
        return [a.reshape([-1 if k == j else 1 for k in range(n)]) for j, a in enumerate(self._arrays)]


def grid(*parts: Sequence[float] | np.ndarray | float) -> list[float]:
    """Concatenate values and ranges into one grid axis (sorted, duplicates removed, NaN last)."""
    vals = np.concatenate([np.atleast_1d(np.asarray(p, dtype=np.float64)) for p in parts])
    finite_or_inf = np.unique(vals[~np.isnan(vals)])
    out = [float(v) for v in finite_or_inf]
    if np.isnan(vals).any():
        out.append(math.nan)
    return out


def all_cases() -> list[RCase]:
    """Every ``CASES`` of every module of this package, in module order."""
    cases: list[RCase] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(mod, "CASES", ()))
    ids = [c.id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate case ids {dup}: give them distinct labels")
    return cases
