# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps: a function evaluated over the outer product of parameter axes, written to zarr.

A sweep is described by a TOML file (the *spec*)::

    [sweep]
    function = "qtukey"                   # a daskcl.nmath name, "glm.f2_f3", "file.py:func"
                                          # (relative to the spec) or "package.module:func"
    name = "q"                            # result array (default: the function's name)
    description = "Tukey HSD critical values"
    chunks = { nmeans = 19, df = 8 }      # chunk length per axis (default: automatic)

    [axes]                                # dimension order = table order; outer product
    p = { values = [0.95, 0.99] }
    nmeans = { arange = [2, 21] }         # numpy.arange(start, stop[, step])
    df = { values = [5, 10, 20, inf] }
    # also: { linspace = [start, stop, num] }, { logspace = [start, stop, num] } (base 10),
    #       { file = "values.npy" } (.npy, .txt, or .csv with column = "name")

    [args]                                # fixed arguments and R's flags, by keyword
    nranges = 1
    lower_tail = true

For an nmath function each axis and argument is one of its parameters.  A Python function is
called once per chunk with every axis as an array broadcast to the chunk's shape plus ``[args]``
as keywords, and returns a float64 array of the chunk's shape; it runs on a worker, where
``daskcl.nmath`` uses that worker's device.  ``glm.f2_f3`` takes a ``[glm]`` table (see
:class:`GlmSpec`) and one axis per coefficient -- or an ``[glm.envelope]`` table that builds the
axes around the posterior mode -- and writes ``qf`` and ``grad``.

The result is a zarr v3 group: the result array(s) with ``dimension_names`` the axis names and
the spec's chunks, one coordinate array per axis, ``_done`` (one ``uint8`` per chunk: 1 once that
chunk is written), and attributes ``daskcl`` (version, the spec, the function, the devices that
computed it).  Each chunk is one task that writes only its own zarr chunks and then marks itself
done, so a killed worker or an interrupted sweep loses no finished chunk and ``resume=True``
computes only the chunks not marked.

Example
-------
>>> from daskcl.sweep import Sweep
>>> s = Sweep.from_dict({"sweep": {"function": "pnorm"},
...                      "axes": {"q": {"linspace": [-3, 3, 7]}}, "args": {"sd": 2.0}})
>>> s.shape, s.outputs[0].name
((7,), 'pnorm')
>>> s.run("/tmp/pnorm.zarr", client="sync", overwrite=True).arrays["pnorm"][3]   # doctest: +SKIP
0.5
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
import json
import math
import os
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tomllib

from .errors import DaskclError

__all__ = ["Axis", "GlmSpec", "Output", "Sweep", "SweepError", "SweepResult", "open_result"]

_AXIS_KINDS = ("values", "linspace", "logspace", "arange", "file")
_SWEEP_KEYS = ("function", "name", "description", "chunks", "compressor")
_TARGET_ELEMENTS = 2**22  # default chunk size: 32 MiB of float64
_TARGET_GLM_POINTS = 2**16  # GLM points cost l1 * l2 each: smaller default chunks
_STORE_CHUNK_ELEMENTS = 2**20  # zarr chunks of at most 8 MiB: a task's are encoded in parallel


class SweepError(DaskclError, ValueError):
    """A spec or store that cannot be run; the message says what to fix."""


@dataclass
class Axis:
    """One parameter axis: its name, its values and how the spec gave them."""

    name: str
    values: np.ndarray
    source: dict[str, Any]


@dataclass
class Output:
    """One result array: name, full shape, chunks and dimension names."""

    name: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dims: tuple[str, ...]
    store_chunks: tuple[int, ...] = ()


@dataclass
class SweepResult:
    """What :meth:`Sweep.run` did: the store, chunks computed and skipped, time, devices."""

    store: str
    computed: int
    skipped: int
    seconds: float
    devices: list[str]
    group: Any = field(repr=False)

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """Every result array, read into memory."""
        return {name: self.group[name][...] for name in self.group.attrs["daskcl"]["outputs"]}


def _err(where: str, what: str) -> SweepError:
    return SweepError(f"{where}: {what}")


def _suggest(name: str, choices: Any) -> str:
    close = difflib.get_close_matches(name, list(choices), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _read_values_file(path: Path, column: str | None, where: str) -> np.ndarray:
    if not path.is_file():
        raise _err(where, f"file {str(path)!r} not found")
    try:
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        if path.suffix == ".csv" or column is not None:
            rows: Any = np.genfromtxt(path, delimiter=",", names=True, dtype=np.float64)
            names = rows.dtype.names or ()
            if column is None:
                raise _err(where, f"give column = one of {list(names)} for the CSV file {path.name}")
            if column not in names:
                raise _err(where, f"no column {column!r} in {path.name}; it has {list(names)}")
            return np.asarray(rows[column], dtype=np.float64)
        return np.loadtxt(path, dtype=np.float64, ndmin=1)
    except SweepError:
        raise
    except Exception as exc:
        raise _err(where, f"cannot read numbers from {path.name}: {exc}") from exc


def _numbers(v: Any, n: int, where: str, kind: str) -> list[float]:
    if not isinstance(v, list) or len(v) != n or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
        want = {"linspace": "[start, stop, num]", "logspace": "[start, stop, num]"}[kind]
        raise _err(where, f"{kind} takes {want}, got {v!r}")
    return [float(t) for t in v]


def parse_axis(name: str, spec: Any, base: Path) -> Axis:
    """One ``[axes]`` entry as an :class:`Axis` (errors name the axis and what is wrong)."""
    where = f"axis {name!r}"
    if not isinstance(spec, dict):
        raise _err(where, f"give a table such as {{ values = [...] }}, got {spec!r}")
    kinds = [k for k in spec if k in _AXIS_KINDS]
    extra = [k for k in spec if k not in _AXIS_KINDS and k != "column"]
    if len(kinds) != 1 or extra:
        raise _err(where, f"give exactly one of {', '.join(_AXIS_KINDS)}; got {sorted(spec)}")
    kind = kinds[0]
    v = spec[kind]
    if kind == "values":
        if not isinstance(v, list) or not v or not all(
                isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
            raise _err(where, f"values must be a non-empty list of numbers, got {v!r}")
        values = np.asarray(v, dtype=np.float64)
    elif kind in ("linspace", "logspace"):
        start, stop, num = _numbers(v, 3, where, kind)
        if num != int(num) or num < 1:
            raise _err(where, f"{kind} num must be a positive integer, got {num}")
        fn = np.linspace if kind == "linspace" else np.logspace
        values = fn(start, stop, int(num))
    elif kind == "arange":
        if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(
                isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
            raise _err(where, f"arange takes [stop], [start, stop] or [start, stop, step], got {v!r}")
        values = np.arange(*v, dtype=np.float64)
    else:
        if not isinstance(v, str):
            raise _err(where, f"file must be a path, got {v!r}")
        values = _read_values_file(base / v, spec.get("column"), where)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise _err(where, f"the values must form a non-empty 1-D list, got shape {values.shape}")
    return Axis(name, values, dict(spec))


def _jsonable(obj: Any) -> Any:
    """The spec as JSON (zarr attributes): non-finite floats as the strings R prints."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Inf" if obj > 0 else "-Inf")
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    return obj


def _hash(obj: Any) -> str:
    """SHA-256 of ``obj`` as canonical JSON."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


# --- functions --------------------------------------------------------------------------------


class _Func:
    """How to evaluate one chunk: a callable of keyword arrays, and its outputs' extra shape."""

    kind = "nmath"

    def __init__(self, name: str, base: Path) -> None:
        self.name = name
        self.params: tuple[str, ...] | None = None
        self.required: tuple[str, ...] = ()
        self.flags: tuple[str, ...] = ()
        self._source: str | None = None
        self._module: str | None = None
        self._attr = ""
        if name.startswith("r") and _is_random(name):
            raise _err("sweep.function", f"{name!r} draws random variates; sweeps evaluate "
                       "functions of parameters (use daskcl.nmath." + name + "(..., chunks=) "
                       "and dask's to_zarr for variates)")
        if ":" in name:
            target, _, attr = name.rpartition(":")
            self._attr = attr
            if target.endswith(".py"):
                path = (base / target).resolve()
                if not path.is_file():
                    raise _err("sweep.function", f"file {str(path)!r} not found")
                self.kind = "python"
                self._source = path.read_text()
                self._path = str(path)
            else:
                self.kind = "python"
                self._module = target
            fn = self.callable()
            sig = inspect.signature(fn)
            if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
                self.params = tuple(sig.parameters)
                self.required = tuple(
                    p.name for p in sig.parameters.values() if p.default is p.empty)
            return
        from . import nmath

        if name not in nmath.FUNCTIONS:
            raise _err("sweep.function", f"no daskcl.nmath function {name!r}"
                       f"{_suggest(name, nmath.FUNCTIONS)}; or give 'glm.f2_f3', 'file.py:func' "
                       "or 'package.module:func'")
        sig = inspect.signature(nmath.FUNCTIONS[name])
        self.params = tuple(sig.parameters)
        self.required = tuple(p.name for p in sig.parameters.values()
                              if p.default is p.empty)
        self.flags = tuple(p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY)

    def callable(self) -> Callable[..., Any]:
        if self.kind == "nmath":
            from . import nmath

            return nmath.FUNCTIONS[self.name]  # type: ignore[no-any-return]
        if self._module is not None:
            try:
                mod = importlib.import_module(self._module)
            except ImportError as exc:
                raise _err("sweep.function", f"cannot import {self._module!r}: {exc}") from exc
        else:
            mod = _load_source(self._path, self._source or "")
        fn = getattr(mod, self._attr, None)
        if not callable(fn):
            raise _err("sweep.function", f"{self.name!r}: no function {self._attr!r} there")
        return fn  # type: ignore[no-any-return]

    def warm_names(self) -> list[str]:
        return [self.name] if self.kind == "nmath" else []


_SOURCE_MODULES: dict[str, types.ModuleType] = {}


def _load_source(path: str, source: str) -> types.ModuleType:
    """A sweep's Python file as a module, from the text shipped with the task (so workers on
    other hosts need not see the file); loaded once per process and text."""
    key = hashlib.sha256((path + "\0" + source).encode()).hexdigest()[:16]
    mod = _SOURCE_MODULES.get(key)
    if mod is None:
        mod = types.ModuleType(f"daskcl_sweep_{Path(path).stem}_{key}")
        mod.__file__ = path
        sys.modules[mod.__name__] = mod
        exec(compile(source, path, "exec"), mod.__dict__)
        _SOURCE_MODULES[key] = mod
    return mod


def _is_random(name: str) -> bool:
    from . import random as _random

    return name in _random.FUNCTIONS


# --- the GLM ------------------------------------------------------------------------------------


@dataclass
class GlmSpec:
    """The ``[glm]`` table of a ``glm.f2_f3`` sweep::

        [glm]
        family = "binomial"; link = "logit"
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
        from . import glm

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
        family, link = str(table["family"]), str(table["link"])
        try:
            glm._kernel_stem(family, link)
        except ValueError as exc:
            raise _err(where, str(exc)) from exc
        path = base / str(table["data"])
        if not path.is_file():
            raise _err(where, f"data file {str(path)!r} not found")
        rows: Any = np.genfromtxt(path, delimiter=",", names=True, dtype=np.float64)
        cols = rows.dtype.names or ()

        def col(name: str) -> np.ndarray:
            if name not in cols:
                raise _err(where, f"no column {name!r} in {path.name}; it has {list(cols)}")
            return np.atleast_1d(np.asarray(rows[name], dtype=np.float64))

        preds = table["predictors"]
        if not isinstance(preds, list) or not all(isinstance(p, str) for p in preds):
            raise _err(where, f"predictors must be a list of column names, got {preds!r}")
        y = col(str(table["response"]))
        n = y.size
        wt = col(str(table["weights"])) if "weights" in table else np.ones(n)
        if "trials" in table:
            trials = col(str(table["trials"]))
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.where(trials > 0, y / trials, 0.0)
            wt = wt * trials
        wt = wt / float(table.get("dispersion", 1.0))
        alpha = col(str(table["offset"])) if "offset" in table else np.zeros(n)
        xs = [col(p) for p in preds]
        names = list(preds)
        if table.get("intercept", True):
            xs.insert(0, np.ones(n))
            names.insert(0, "intercept")
        x = np.column_stack(xs)
        l2 = x.shape[1]
        pm = table.get("prior_mean", 0.0)
        mu = np.broadcast_to(np.asarray(pm, dtype=np.float64), (l2,)).copy()
        pp = np.asarray(table.get("prior_precision", 0.0), dtype=np.float64)
        if pp.ndim == 0:
            P = float(pp) * np.eye(l2)
        elif pp.ndim == 1 and pp.size == l2:
            P = np.diag(pp)
        elif pp.shape == (l2, l2):
            P = pp
        else:
            raise _err(where, f"prior_precision must be a number, {l2} numbers or a {l2}x{l2} "
                       f"matrix, got shape {pp.shape}")
        env = table.get("envelope")
        envelope = None
        if env is not None:
            if not isinstance(env, dict) or set(env) - {"points", "width"}:
                raise _err("glm.envelope", "give points (per coefficient) and width (in sd)")
            points, width = int(env.get("points", 3)), float(env.get("width", 2.0))
            if points < 1 or not width > 0:
                raise _err("glm.envelope", f"points >= 1 and width > 0 needed, got {points}, {width}")
            envelope = (points, width)
        glm.Posterior(family, link, y, x, mu, P, alpha, wt)  # shape and value checks
        return cls(family, link, y, x, wt, alpha, mu, P, tuple(names), envelope)

    def posterior(self) -> Any:
        from . import glm

        return glm.Posterior(self.family, self.link, self.y, self.x, self.mu, self.P,
                             self.alpha, self.wt)


def posterior_mode(post: Any, start: np.ndarray | None = None, *, tol: float = 1e-10,
                   max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The posterior mode and the Hessian of ``qf`` there, by damped Newton steps.

    Each iteration evaluates, in one :func:`daskcl.glm.f2_f3` call, the gradient at the point
    and at ``+-h`` along every coefficient; the Hessian is their central difference,
    symmetrised.  Steps are halved until ``qf`` does not increase beyond its rounding (a
    relative 1e-13: near the mode a Newton step changes ``qf`` by less than its rounding, and
    halving such a step would stop the iteration short of the mode).
    """
    l2 = post.x.shape[1]
    b = np.array(post.mu if start is None else start, dtype=np.float64)
    for _ in range(max_iter):
        h = 1e-5 * (1.0 + np.abs(b))
        pts = np.vstack([b, b + np.diag(h), b - np.diag(h)])
        qf, grad = post.f2_f3(pts)
        H = (grad[1:l2 + 1] - grad[l2 + 1:]) / (2 * h)[:, None]
        H = 0.5 * (H + H.T)
        try:
            step = np.linalg.solve(H, grad[0])
        except np.linalg.LinAlgError as exc:
            raise SweepError(f"glm.envelope: the Hessian at {b} is singular; add a prior "
                             "precision") from exc
        t = 1.0
        while t > 1e-8:
            cand = b - t * step
            qc, _ = post.f2_f3(cand[None, :])
            if np.isfinite(qc[0]) and qc[0] <= qf[0] + 1e-13 * abs(qf[0]):
                break
            t /= 2
        b = b - t * step
        if np.all(np.abs(t * step) <= tol * (1.0 + np.abs(b))):
            break
    else:
        raise SweepError(f"glm.envelope: Newton's method did not converge in {max_iter} steps")
    h = 1e-5 * (1.0 + np.abs(b))
    _, grad = post.f2_f3(np.vstack([b + np.diag(h), b - np.diag(h)]))
    H = (grad[:l2] - grad[l2:]) / (2 * h)[:, None]
    return b, 0.5 * (H + H.T)


# --- the sweep ----------------------------------------------------------------------------------


class Sweep:
    """A parsed, validated sweep spec (see the module docstring for the format).

    Construction checks everything that can be checked without computing: the function exists,
    every axis and argument is one of its parameters, required parameters are given, axes are
    non-empty 1-D lists of numbers, chunks are positive and name axes.  Errors are
    :class:`SweepError` and say what to fix.
    """

    def __init__(self, spec: Mapping[str, Any], base: str | os.PathLike[str] = ".",
                 text: str | None = None) -> None:
        self.spec = dict(spec)
        self.base = Path(base).resolve()
        self.text = text
        unknown = sorted(set(self.spec) - {"sweep", "axes", "args", "glm"})
        if unknown:
            raise _err("spec", f"unknown tables {unknown}; a spec has [sweep], [axes], [args] "
                       "and, for glm.f2_f3, [glm]")
        top = self.spec.get("sweep")
        if not isinstance(top, dict) or "function" not in top:
            raise _err("spec", "a [sweep] table with function = \"<name>\" is needed")
        bad = sorted(set(top) - set(_SWEEP_KEYS))
        if bad:
            raise _err("sweep", f"unknown keys {bad}; known: {list(_SWEEP_KEYS)}")
        self.function = str(top["function"])
        self.description = str(top.get("description", ""))
        self.compressor = str(top.get("compressor", "zstd"))
        if self.compressor not in ("zstd", "none"):
            raise _err("sweep.compressor", f"'zstd' or 'none', got {self.compressor!r}")
        args = self.spec.get("args", {})
        if not isinstance(args, dict):
            raise _err("args", "give a table of name = value")
        for k, v in args.items():
            if not isinstance(v, (bool, int, float, str)):
                raise _err(f"args.{k}", f"must be a number, a bool or a string, got {v!r}")
        self.args: dict[str, Any] = dict(args)
        axes_spec = self.spec.get("axes", {})
        if not isinstance(axes_spec, dict):
            raise _err("axes", "give a table of name = { values | linspace | ... }")
        self.glm: GlmSpec | None = None
        self.func: _Func | None = None
        if self.function == "glm.f2_f3":
            self._init_glm(axes_spec)
        else:
            if "glm" in self.spec:
                raise _err("glm", "a [glm] table is only for function = \"glm.f2_f3\"")
            self.func = _Func(self.function, self.base)
            if not axes_spec:
                raise _err("axes", "at least one axis is needed")
            self.axes = [parse_axis(k, v, self.base) for k, v in axes_spec.items()]
            self._check_params()
            name = str(top.get("name", self.function.rpartition(":")[2]))
            self.output_names: tuple[str, ...] = (name,)
        self.shape = tuple(a.values.size for a in self.axes)
        self.chunks = self._chunks(top.get("chunks"))
        self._check_names()

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read and validate a spec file (relative paths inside it are relative to it)."""
        p = Path(path)
        if not p.is_file():
            raise SweepError(f"spec file {str(p)!r} not found")
        text = p.read_text()
        try:
            spec = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SweepError(f"{p}: not valid TOML: {exc}") from exc
        return cls(spec, p.parent, text)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], base: str | os.PathLike[str] = ".") -> Sweep:
        return cls(spec, base)

    # -- validation ---------------------------------------------------------------------------

    def _init_glm(self, axes_spec: dict[str, Any]) -> None:
        self.glm = GlmSpec.parse(self.spec.get("glm"), self.base)
        if self.args:
            raise _err("args", "glm.f2_f3 takes its inputs from [glm], not [args]")
        names = self.glm.names
        if self.glm.envelope is not None:
            if axes_spec:
                raise _err("axes", "give either [axes] or [glm.envelope], not both")
            points = self.glm.envelope[0]
            # Placeholder values until the mode is found (run() resolves them); the shape is known.
            self.axes = [Axis(n, np.zeros(points), {"envelope": True}) for n in names]
        else:
            missing = [n for n in names if n not in axes_spec]
            extra = [n for n in axes_spec if n not in names]
            if missing or extra:
                raise _err("axes", f"glm.f2_f3 needs one axis per coefficient, in order: "
                           f"{list(names)}; missing {missing}, unknown {extra}")
            self.axes = [parse_axis(n, axes_spec[n], self.base) for n in names]
        self.output_names = ("qf", "grad")

    def _check_params(self) -> None:
        f = self.func
        assert f is not None
        given = [a.name for a in self.axes] + list(self.args)
        dup = sorted({n for n in given if given.count(n) > 1})
        if dup:
            raise _err("args", f"{dup} given both as an axis and in [args]")
        if f.params is not None:
            for n in given:
                if n not in f.params:
                    raise _err(f"axis or arg {n!r}", f"{self.function} has no parameter {n!r}"
                               f"{_suggest(n, f.params)}; its parameters are {list(f.params)}")
        missing = [n for n in f.required if n not in given]
        if missing:
            raise _err("axes/args", f"{self.function} needs {missing} (as an axis or in [args])")
        for n in f.flags:
            if n in self.args and not isinstance(self.args[n], bool):
                raise _err(f"args.{n}", f"is a flag: true or false, got {self.args[n]!r}")
            if n in [a.name for a in self.axes]:
                raise _err(f"axis {n!r}", "is a flag (true/false); give it in [args]")

    def _chunks(self, chunks: Any) -> tuple[int, ...]:
        names = [a.name for a in self.axes]
        if chunks is None:
            chunks = {}
        if not isinstance(chunks, dict):
            raise _err("sweep.chunks", f"give a table axis = length, got {chunks!r}")
        for k, v in chunks.items():
            if k not in names:
                raise _err("sweep.chunks", f"no axis {k!r}{_suggest(k, names)}; axes: {names}")
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise _err(f"sweep.chunks.{k}", f"must be a positive integer, got {v!r}")
        out = [min(int(chunks.get(n, s)), s) for n, s in zip(names, self.shape)]
        if not chunks:  # automatic: split the leading axes until a chunk is small enough
            target = _TARGET_GLM_POINTS if self.glm is not None else _TARGET_ELEMENTS
            for i in range(len(out)):
                rest = math.prod(out[i + 1:])
                if math.prod(out) <= target:
                    break
                # as many pieces as the target asks for, of equal length (no short last chunk)
                pieces = -(-out[i] // max(1, target // rest))
                out[i] = -(-out[i] // pieces)
        return tuple(out)

    def _check_names(self) -> None:
        names = [a.name for a in self.axes]
        for o in self.output_names:
            if o in names or o == "_done" or o.startswith("_"):
                raise _err("sweep.name", f"{o!r} clashes with an axis or is reserved; rename it")
        for n in names:
            if n.startswith("_") or "/" in n:
                raise _err(f"axis {n!r}", "axis names may not start with '_' or contain '/'")

    # -- geometry -----------------------------------------------------------------------------

    @property
    def store_chunks(self) -> tuple[int, ...]:
        """The zarr chunks: a task's chunk split along its leading axes into pieces of at most
        about 2**20 elements, each length a divisor of the task's, so that every zarr chunk
        belongs to exactly one task and a task's zarr chunks are compressed in parallel."""
        out = list(self.chunks)
        for i in range(len(out)):
            rest = math.prod(out[i + 1:])
            if math.prod(out) <= _STORE_CHUNK_ELEMENTS:
                break
            c = out[i]
            out[i] = max((d for d in range(1, c + 1) if c % d == 0 and d * rest
                          <= _STORE_CHUNK_ELEMENTS), default=1)
        return tuple(out)

    @property
    def outputs(self) -> list[Output]:
        dims = tuple(a.name for a in self.axes)
        sc = self.store_chunks
        if self.glm is None:
            return [Output(self.output_names[0], self.shape, self.chunks, dims, sc)]
        l2 = len(self.axes)
        return [Output("qf", self.shape, self.chunks, dims, sc),
                Output("grad", (*self.shape, l2), (*self.chunks, l2), (*dims, "coefficient"),
                       (*sc, l2))]

    @property
    def grid(self) -> tuple[int, ...]:
        """Chunks per axis."""
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks))

    @property
    def n_chunks(self) -> int:
        return math.prod(self.grid)

    def chunk_slices(self, index: tuple[int, ...]) -> tuple[slice, ...]:
        return tuple(slice(i * c, min((i + 1) * c, s))
                     for i, c, s in zip(index, self.chunks, self.shape))

    def chunk_indices(self) -> Iterator[tuple[int, ...]]:
        return iter(np.ndindex(*self.grid))

    def identity(self) -> str:
        """A hash of everything that determines the values: resume checks it."""
        return self.identity_parts()["sweep"]

    def identity_parts(self) -> dict[str, str]:
        """The identity by component, each a hash: ``function`` (its name), ``function_code``
        (the Python file's text), ``kernel_source`` (the OpenCL the values come from), ``axes``,
        ``args``, ``chunks``, ``outputs``, ``glm`` (its data and model), and ``sweep`` (all of
        them).  Nothing is imported or run: files are hashed as text."""
        cached = self.__dict__.get("_identity")
        if isinstance(cached, dict):
            return cached
        parts = {
            "function": _hash(self.function),
            "function_code": _hash(self._function_code()),
            "kernel_source": _hash(self._kernel_source()),
            "axes": _hash([[a.name, a.values.tobytes().hex()] for a in self.axes]),
            "args": _hash(_jsonable(self.args)),
            "chunks": _hash(list(self.chunks)),
            "outputs": _hash(list(self.output_names)),
            "glm": _hash(None if self.glm is None else [self.glm.family, self.glm.link] + [
                np.ascontiguousarray(v).tobytes().hex()
                for v in (self.glm.y, self.glm.x, self.glm.wt, self.glm.alpha, self.glm.mu,
                          self.glm.P)]),
        }
        parts["sweep"] = _hash(parts)
        self._identity = parts
        return parts

    def _function_code(self) -> str | None:
        """The text of a Python function's file, as shipped to the workers (``None`` else)."""
        if self.func is None or self.func.kind != "python":
            return None
        source = getattr(self.func, "_source", None)
        return source if isinstance(source, str) else Path(self.func._path).read_text()

    def _kernel_source(self) -> list[str]:
        """What the kernels are built from: for an nmath function its assembled program (the
        library units it needs and the call generated from its table row) and, for a row with
        its own implementation, every kernel file too; for glm.f2_f3 the family's program; for
        a Python function, which may call any kernel, every file of the library."""
        from .library import get_library

        lib = get_library()
        if self.glm is not None:
            from . import glm

            stem = glm._kernel_stem(self.glm.family, self.glm.link)
            return [glm._source(stem, str(lib.root))[0].text]
        assert self.func is not None
        if self.func.kind == "nmath":
            from . import nmath
            from ._elementwise import kernel_source

            impl = nmath.FUNCTIONS[self.function]._daskcl_impl
            out = [kernel_source(impl.fn, 1, extra_params=impl.extra_params).text]
            if impl.fn.impl:
                out += [lib.read(f"kernels/{p.name}")
                        for p in sorted((lib.root / "kernels").glob("*.cl"))]
            return out
        return [f"{p.relative_to(lib.root)}\0{p.read_text()}"
                for p in sorted(lib.root.rglob("*.cl"))]

    def plan(self, done: int | None = None) -> str:
        """What the sweep will compute, in words (``daskcl sweep --dry-run``)."""
        lines = [f"function  {self.function}" + (f"  ({self.description})" if self.description
                                                  else "")]
        for a in self.axes:
            if a.source.get("envelope"):
                lines.append(f"axis      {a.name:12} {a.values.size:>8} values  (envelope: mode "
                             "+- width * sd, found before the sweep)")
            else:
                lines.append(f"axis      {a.name:12} {a.values.size:>8} values  "
                             f"[{a.values.min():.6g} .. {a.values.max():.6g}]")
        for k, v in self.args.items():
            lines.append(f"arg       {k} = {v!r}")
        total = 0
        for o in self.outputs:
            nbytes = math.prod(o.shape) * 8
            total += nbytes
            lines.append(f"output    {o.name:12} shape {o.shape}  chunks {o.chunks}  "
                         f"{_human(nbytes)} float64"
                         + (f"  (zarr chunks {o.store_chunks})" if o.store_chunks != o.chunks
                            else ""))
        lines.append(f"chunks    {self.n_chunks} ({' x '.join(map(str, self.grid))}), "
                     f"{math.prod(self.chunks)} points each")
        if done is not None:
            lines.append(f"done      {done} of {self.n_chunks} chunks already in the store")
        lines.append(f"total     {math.prod(self.shape)} points, {_human(total)}")
        return "\n".join(lines)

    # -- evaluation ---------------------------------------------------------------------------

    def evaluate(self, index: tuple[int, ...]) -> dict[str, np.ndarray]:
        """The result arrays of one chunk, computed on this process's device."""
        sl = self.chunk_slices(index)
        vals = [a.values[s] for a, s in zip(self.axes, sl)]
        shape = tuple(v.size for v in vals)
        if self.glm is not None:
            from .glm import FactorialGrid

            qf, grad = _posterior(self).f2_f3(FactorialGrid(vals))
            return {"qf": np.asarray(qf).reshape(shape),
                    "grad": np.asarray(grad).reshape((*shape, len(vals)))}
        assert self.func is not None
        n = len(vals)
        kwargs: dict[str, Any] = {
            a.name: v.reshape((1,) * i + (v.size,) + (1,) * (n - i - 1))
            for i, (a, v) in enumerate(zip(self.axes, vals))
        }
        if self.func.kind == "python":
            kwargs = {k: np.broadcast_to(v, shape) for k, v in kwargs.items()}
        out = self.func.callable()(**kwargs, **self.args)
        arr = np.asarray(out, dtype=np.float64)
        if arr.shape != shape:
            try:
                arr = np.broadcast_to(arr, shape)
            except ValueError:
                raise SweepError(f"{self.function} returned shape {arr.shape} for a chunk of "
                                 f"shape {shape}") from None
        return {self.output_names[0]: np.ascontiguousarray(arr)}

    def resolve_envelope(self) -> dict[str, Any]:
        """Find the posterior mode and set the envelope axes (glm with [glm.envelope])."""
        assert self.glm is not None and self.glm.envelope is not None
        points, width = self.glm.envelope
        mode, H = posterior_mode(self.glm.posterior())
        try:
            cov = np.linalg.inv(H)
        except np.linalg.LinAlgError as exc:
            raise SweepError("glm.envelope: singular Hessian at the mode") from exc
        sd = np.sqrt(np.diag(cov))
        for k, a in enumerate(self.axes):
            a.values = mode[k] + sd[k] * np.linspace(-width, width, points)
            a.source = {"envelope": True, "mode": float(mode[k]), "sd": float(sd[k])}
        self.__dict__.pop("_identity", None)
        return {"mode": mode.tolist(), "sd": sd.tolist(), "hessian": H.tolist()}

    def run(self, out: str | os.PathLike[str], client: Any = None, *, resume: bool = False,
            overwrite: bool = False, progress: bool = False, workers: int | str | None = None,
            storage_options: dict[str, Any] | None = None) -> SweepResult:
        """Compute every chunk not yet in the store at ``out`` and write it there.

        ``client``: a ``distributed.Client`` (its workers compute), ``"sync"`` (this process
        computes, chunk by chunk), or ``None`` (a :func:`daskcl.cluster.local_cluster` with
        ``workers`` workers is started and closed).  An existing store is an error unless
        ``resume`` (continue it: only chunks not marked done are computed; the spec must be the
        same) or ``overwrite`` (start again).
        """
        from . import _sweep_run

        return _sweep_run.run(self, str(out), client, resume=resume, overwrite=overwrite,
                              progress=progress, workers=workers,
                              storage_options=storage_options)


_POSTERIORS: dict[str, Any] = {}


def _posterior(sweep: Sweep) -> Any:
    """The sweep's Posterior, built once per process (its device data stays uploaded)."""
    key = sweep.identity()
    post = _POSTERIORS.get(key)
    if post is None:
        assert sweep.glm is not None
        post = _POSTERIORS[key] = sweep.glm.posterior()
    return post


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def open_result(out: str | os.PathLike[str], storage_options: dict[str, Any] | None = None
                ) -> Any:
    """The zarr group of a sweep, read-only."""
    import zarr

    return zarr.open_group(str(out), mode="r", storage_options=storage_options)
