# SPDX-License-Identifier: GPL-2.0-or-later
"""The ``[glm]`` table of a ``glm.f2_f3`` sweep (:class:`GlmSpec`): its data, model and prior,
checked as they are read; and the sweep's axes, one per coefficient."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .axes import _MAX_GLM_ROWS, _MAX_POINTS, Axis, _count, _err, _read_csv, parse_axis

if TYPE_CHECKING:
    from ..glm import Posterior

__all__ = ["GlmSpec"]


@dataclass(frozen=True, eq=False)
class GlmSpec:
    """The ``[glm]`` table of a ``glm.f2_f3`` sweep::

        [glm]
        family = "binomial"
        link = "logit"
        data = "budworm.csv"          # CSV with a header, relative to the spec
        response = "dead"             # y (binomial: successes when trials is given)
        trials = "n"                  # binomial: number of trials (y = dead / n, wt = n)
        weights = "w"                 # optional prior weights (default 1)
        offset = "off"                # optional offset column (default 0)
        predictors = ["sex", "ldose"] # columns of x, after an intercept column
        intercept = true
        dispersion = 1.0              # wt / dispersion
        prior_mean = 0.0              # number or one per coefficient
        prior_precision = 0.01        # number (times I), diagonal list, or full matrix
        [glm.envelope]                # optional: axes = mode + sd * linspace(-width, width, points)
        points = 3
        width = 2.0

    Coefficients are named ``intercept`` and the predictor names; with an envelope the
    ``[axes]`` table is not given.
    """

    family: str
    link: str
    y: np.ndarray
    x: np.ndarray
    wt: np.ndarray
    alpha: np.ndarray
    mu: np.ndarray
    P: np.ndarray
    names: tuple[str, ...]
    envelope: tuple[int, float] | None

    @classmethod
    def parse(cls, table: Any, base: Path) -> GlmSpec:
        """The ``[glm]`` table checked, with its data read from the CSV file it names."""
        from .. import glm

        where = "glm"
        _check_keys(table)
        family, link = table["family"], table["link"]
        try:
            glm.kernel_stem(family, link)
        except ValueError as exc:
            raise _err(where, str(exc)) from exc
        preds = table["predictors"]
        if not isinstance(preds, list) or not all(isinstance(p, str) for p in preds):
            raise _err(where, f"predictors must be a list of column names, got {preds!r}")
        intercept = table.get("intercept", True)
        if not isinstance(intercept, bool):
            raise _err("glm.intercept", f"is a flag: true or false, got {intercept!r}")
        dispersion = _real_number(table.get("dispersion", 1.0), "glm.dispersion")
        if not dispersion > 0:
            raise _err("glm.dispersion", f"must be a positive finite number, got {dispersion!r}")
        envelope = _envelope(table.get("envelope"))
        path = base / table["data"]
        wanted = [table["response"], *preds,
                  *(table[k] for k in ("trials", "weights", "offset") if k in table)]
        data, lines = _read_csv(path, list(dict.fromkeys(wanted)), where, _MAX_GLM_ROWS)

        def col(name: str) -> np.ndarray:
            return np.atleast_1d(data[name])

        y = col(table["response"])
        n = y.size
        if n == 0:
            raise _err(where, f"{path.name} has a header but no rows")
        _check_glm_data(family, table, data, lines, path.name)
        wt = col(table["weights"]) if "weights" in table else np.ones(n)
        if "trials" in table:
            trials = col(table["trials"])
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.where(trials > 0, y / trials, 0.0)
            wt = wt * trials
        wt = wt / dispersion
        alpha = col(table["offset"]) if "offset" in table else np.zeros(n)
        xs = [col(p) for p in preds]
        names = list(preds)
        if intercept:
            xs.insert(0, np.ones(n))
            names.insert(0, "intercept")
        if not names:
            raise _err(where, "no coefficients: give predictors or intercept = true")
        x = np.column_stack(xs)
        l2 = x.shape[1]
        if envelope is not None and envelope[0] ** l2 > _MAX_POINTS:
            raise _err("glm.envelope", f"{envelope[0]} points on each of {l2} coefficients "
                       f"is more than {_MAX_POINTS} (2**50) points")
        mu = _prior(table.get("prior_mean", 0.0), l2, "glm.prior_mean", matrix=False)
        P = _prior(table.get("prior_precision", 0.0), l2, "glm.prior_precision", matrix=True)
        _check_precision(P)
        try:
            glm.Posterior(family, link, y, x, mu, P, alpha, wt)  # shape and value checks
        except ValueError as exc:
            raise _err(where, str(exc)) from None
        return cls(family, link, y, x, wt, alpha, mu, P, tuple(names), envelope)

    def posterior(self) -> Posterior:
        """The data set and prior as a :class:`daskcl.glm.Posterior`."""
        from ..glm import Posterior

        return Posterior(self.family, self.link, self.y, self.x, self.mu, self.P,
                             self.alpha, self.wt)


def _check_keys(table: Any) -> None:
    """The ``[glm]`` table: known keys, those needed given, those naming columns strings."""
    where = "glm"
    if not isinstance(table, dict):
        raise _err(where, "a glm.f2_f3 sweep needs a [glm] table (family, link, data, ...)")
    known = {"family", "link", "data", "response", "trials", "weights", "offset",
             "predictors", "intercept", "dispersion", "prior_mean", "prior_precision",
             "envelope"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise _err(where, f"unknown keys {unknown}; known: {sorted(known)}")
    for key in ("family", "link", "data", "response", "predictors"):
        if key not in table:
            raise _err(where, f"missing {key!r}")
    for key in ("family", "link", "data", "response", "trials", "weights", "offset"):
        if key in table and not isinstance(table[key], str):
            raise _err(f"glm.{key}", f"must be a string, got {table[key]!r}")


def _envelope(env: Any) -> tuple[int, float] | None:
    """``[glm.envelope]`` as (points per coefficient, width in sd); ``None`` without one."""
    if env is None:
        return None
    if not isinstance(env, dict):
        raise _err("glm.envelope", "give points (per coefficient) and width (in sd)")
    bad = sorted(set(env) - {"points", "width"})
    if bad:
        raise _err("glm.envelope", f"unknown keys {bad}; known: ['points', 'width'] "
                   "(points per coefficient, width in sd)")
    raw_points = env.get("points", 3)
    if isinstance(raw_points, bool) or not isinstance(raw_points, int):
        raise _err("glm.envelope", f"points must be a positive integer, got "
                   f"{raw_points!r}")
    points = _count(raw_points, "glm.envelope", "points")
    width = _real_number(env.get("width", 2.0), "glm.envelope.width")
    if not width > 0:
        raise _err("glm.envelope", f"width must be a positive number, got {width!r}")
    return points, width


#: the families whose response is a proportion (binomial), a count (poisson) or positive (Gamma)
_PROPORTION = ("binomial", "quasibinomial")
_COUNT = ("poisson", "quasipoisson")
_POSITIVE = ("Gamma", "gamma")


def _check_glm_data(family: str, table: Mapping[str, Any], data: Mapping[str, np.ndarray],
                    lines: Sequence[int], file: str) -> None:
    """The GLM's data columns hold values its family takes: every value finite, weights and
    trials at least 0, and the response in the family's range (binomial: successes in
    ``[0, trials]``, or a proportion in ``[0, 1]`` without trials; poisson: at least 0; Gamma:
    above 0).  The error names the data row (1-based; its line in the file), the column and
    the number read there (``posterior_mode`` or the sweep would otherwise fail, or compute
    NaN, long after validation and ``--dry-run`` passed)."""
    response, trials, weights = table["response"], table.get("trials"), table.get("weights")
    roles = [(response, "the response"),
             *((table[k], f"the {k}") for k in ("trials", "weights", "offset") if k in table),
             *((p, "a predictor") for p in table["predictors"])]

    def refuse(rows: np.ndarray, column: str, what: str) -> None:
        """The first row of ``rows`` refused: ``what`` says why, of its value ``{v}`` (and
        the trials there, ``{n}``, of the column ``{trials}``)."""
        if rows.any():
            k = int(np.argmax(rows))
            n = float(data[trials][k]) if trials is not None else None
            raise _err("glm", f"{file} row {k + 1} (line {lines[k]}), column {column!r}: "
                       + what.format(v=float(data[column][k]), n=n, trials=trials))

    for column, role in roles:
        refuse(~np.isfinite(data[column]), column, role + " must be a finite number, got {v!r}")
    for column, role in ((trials, "trials"), (weights, "weights")):
        if column is not None:
            refuse(data[column] < 0, column, role + " must be at least 0, got {v!r}")
    y = data[response]
    if family in _PROPORTION and trials is not None:
        refuse((y < 0) | (y > data[trials]), response, "a binomial response lies in [0, trials], "
               "got {v!r} successes of {n!r} trials (column {trials!r})")
    elif family in _PROPORTION:
        refuse((y < 0) | (y > 1), response, "a binomial response without trials is a proportion "
               "in [0, 1], got {v!r} (give trials = \"column\" for counts of successes)")
    elif family in _COUNT:
        refuse(y < 0, response, f"a {family} response is a count, at least 0, got {{v!r}}")
    elif family in _POSITIVE:
        refuse(y <= 0, response, f"a {family} response must be above 0, got {{v!r}}")


def _real_number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _err(where, f"must be a finite number, got {v!r}")
    return float(v)


def _prior(v: Any, l2: int, where: str, *, matrix: bool) -> np.ndarray:
    """A prior mean (a number or ``l2`` numbers) or precision (also an ``l2 x l2`` matrix) as
    an array; every entry a finite number."""
    forms = (f"a number, a list of {l2} numbers or {l2} lists of {l2}" if matrix
             else f"a number or a list of {l2} numbers")

    def num(t: Any) -> bool:
        return isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t)

    if num(v):
        return float(v) * np.eye(l2) if matrix else np.full(l2, float(v))
    if isinstance(v, list) and len(v) == l2 and all(num(t) for t in v):
        return np.diag(np.asarray(v, dtype=np.float64)) if matrix else np.asarray(
            v, dtype=np.float64)
    if matrix and isinstance(v, list) and len(v) == l2 and all(
            isinstance(r, list) and len(r) == l2 and all(num(t) for t in r) for r in v):
        return np.asarray(v, dtype=np.float64)
    raise _err(where, f"give {forms} (finite), one per coefficient; got {v!r}")


def _check_precision(P: np.ndarray) -> None:
    """A prior precision must be symmetric positive semidefinite.

    Semidefinite is accepted on purpose: a zero precision (the default) is a flat, improper
    prior, and a zero row/column leaves that coefficient flat; the data then identify it (a
    singular Hessian at the mode says when they do not).  The test is a Cholesky
    factorization of ``P + eps I``, ``eps`` a rounding-sized ``1e-12 max|P|``: it succeeds for
    every semidefinite ``P`` and fails for one with a negative eigenvalue beyond rounding.
    """
    scale = float(np.max(np.abs(P))) if P.size else 0.0
    bad = np.abs(P - P.T) > 1e-12 * scale
    if np.any(bad):
        k, kk = map(int, np.argwhere(bad)[0])
        raise _err("glm.prior_precision", f"must be symmetric; entry [{k}][{kk}] = "
                   f"{float(P[k, kk])!r} but [{kk}][{k}] = {float(P[kk, k])!r}")
    if scale == 0:
        return
    try:
        np.linalg.cholesky(P + 1e-12 * scale * np.eye(P.shape[0]))
    except np.linalg.LinAlgError:
        low = float(np.linalg.eigvalsh(P).min())
        raise _err("glm.prior_precision", f"must be positive semidefinite (a precision "
                   f"matrix); its smallest eigenvalue is {low:.6g}") from None


def _glm_axes(glm: GlmSpec, axes_spec: dict[str, Any], args: dict[str, Any], base: Path
              ) -> tuple[Axis, ...]:
    """A glm.f2_f3 sweep's axes: one per coefficient, in order, from ``[axes]`` or, with an
    envelope, placeholders of the envelope's size until the mode is found."""
    if args:
        raise _err("args", "glm.f2_f3 takes its inputs from [glm], not [args]")
    names = glm.names
    if glm.envelope is not None:
        if axes_spec:
            raise _err("axes", "give either [axes] or [glm.envelope], not both")
        points = glm.envelope[0]
        return tuple(Axis(n, np.zeros(points), {"envelope": True}) for n in names)
    missing = [n for n in names if n not in axes_spec]
    extra = [n for n in axes_spec if n not in names]
    if missing or extra:
        raise _err("axes", f"glm.f2_f3 needs one axis per coefficient, in order: "
                   f"{list(names)}; missing {missing}, unknown {extra}")
    return tuple(parse_axis(n, axes_spec[n], base) for n in names)
