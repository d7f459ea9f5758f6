# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps: a function evaluated over the outer product of parameter axes, written to zarr.

A sweep is described by a TOML file (the *spec*)::

    [sweep]
    function = "qtukey"                   # a daskcl.nmath name, "glm.f2_f3" or "file.py:func"
                                          # (relative to the spec's directory, or absolute)
    name = "q"                            # result array (default: the function's name)
    description = "Tukey HSD critical values"
    chunks = { nmeans = 19, df = 8 }      # chunk length per axis (default: automatic)
    compressor = "blosc-lz4"              # the store's codec, NAME or NAME:LEVEL (see below)
    accuracy = "best"                     # R's values ("r") or the true ones (default: the
                                          # config key accuracy of the run)

    [axes]                                # dimension order = table order; outer product
    p = { values = [0.95, 0.99] }
    nmeans = { arange = [2, 21] }         # numpy.arange(start, stop[, step])
    df = { values = [5, 10, 20, inf] }
    # also: { linspace = [start, stop, num] }, { logspace = [start, stop, num] } (base 10),
    #       { file = "values.npy" } (.npy, .txt, or .csv with column = "name")

    [args]                                # fixed arguments and R's flags, by keyword
    nranges = 1
    lower_tail = true

For an nmath function each axis and argument is one of its parameters; ``[args]`` are numbers,
and its flags ``true``/``false``.  A Python function is called once per chunk with every axis
as an array broadcast to the chunk's shape plus ``[args]`` as keywords, and returns a float64
array of the chunk's shape; it runs on a worker, where ``daskcl.nmath`` uses that worker's
device.  A spec that names a Python file runs that file, as a script would -- but only when
the sweep computes: validation and ``--dry-run`` parse it without running it, taking its
parameters from the ``def`` statement (every axis and argument must be a named parameter, and
``[args]`` must match a ``float``, ``int``, ``bool`` or ``str`` annotation).  Functions of
importable modules (``subprocess:run``) are refused.

In place of ``function``, a ``[kernel]`` table defines an elementwise kernel of your own
(:class:`daskcl.ElementwiseKernel`), fused into one launch per chunk; each of its outputs
becomes an array of the store::

    [kernel]
    name = "power"
    inputs = "double n, double d, double alpha"     # each an axis or an [args] number
    outputs = "double power"
    operation = '''
    double df = 2 * n - 2, ncp = d * sqrt(n / 2), c = qt(alpha / 2, df, 0, 0);
    power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);
    '''
    # preamble = "..."  (helper functions);  library = ["mylib"]  (your own units' trees,
    # relative to the spec's directory: cl/README.md)

``int`` inputs take integers (or true/false) from ``[args]``.  With a ``[kernel]`` the
``[sweep]`` table is optional: it adds a ``description``, ``chunks``, a ``compressor``, or a
``name`` where the kernel has none.

``compressor`` is the codec of the result arrays: ``"blosc-lz4"`` (the default: LZ4 after a
byte shuffle, Blosc level 1 to 9, default 5), ``"blosc-zstd"`` (Zstandard after a byte shuffle,
level 1 to 9, default 1), ``"zstd"`` (level 1 to 22, default 3), ``"gzip"`` (level 1 to 9,
default 1) or ``"none"``; ``"zstd:1"`` gives a level.  A sweep's output is written as fast as
the kernel computes it only where the codec keeps up: ``benchmarks/bench_store.py`` measures
each on a machine.

Validation checks everything that can be checked without computing, without allocating the
grid: sizes (at most 2**27 values an axis, 2**24 rows of GLM data, 2**50 points a sweep), array
names that are safe zarr names, no NaN (axes may hold +-inf, as R's functions take it; ranges
and arguments are finite), GLM data that the family takes (every value finite, weights and trials
at least 0; a binomial response in ``[0, trials]``, or in ``[0, 1]`` without trials, a poisson
one at least 0, a Gamma one above 0).  ``file`` axes and GLM data read regular files only, and
their errors never quote what the files hold (a GLM value out of range is given as the number
read, with its row and column).  ``glm.f2_f3`` takes a ``[glm]`` table (see
:class:`GlmSpec`) and one axis per coefficient -- or an ``[glm.envelope]`` table that builds the
axes around the posterior mode -- and writes ``qf`` and ``grad``.

The result is a zarr v3 group: the result array(s) with ``dimension_names`` the axis names and
the spec's chunks, one coordinate array per axis, the bookkeeping ``_daskcl/checksum`` (a CRC-32C
per chunk and output) and ``_daskcl/done`` (one ``uint8`` per chunk: 1 once that chunk is
written), and CF-style attributes with the spec and provenance as JSON strings (the layout:
:mod:`daskcl.sweep.store`).  Each chunk is one task that
writes only its own zarr chunks, then their checksums, then its mark, so a killed worker or an
interrupted sweep loses no finished chunk; ``resume=True`` computes the chunks not marked and
those whose data no longer match their checksums, and refuses a store whose function, code,
kernel sources, axes or arguments differ; ``overwrite=True`` replaces only a store daskcl wrote.

Examples
--------
>>> from daskcl.sweep import Sweep, run
>>> s = Sweep.from_dict({"sweep": {"function": "pnorm"},
...                      "axes": {"q": {"linspace": [-3, 3, 7]}}, "args": {"sd": 2.0}})
>>> s.shape, s.outputs[0].name
((7,), 'pnorm')
>>> run(s, "/tmp/pnorm.zarr", client="sync", overwrite=True).arrays["pnorm"][3]  # doctest: +SKIP
0.5
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SweepError
from .axes import (
    _MAX_POINTS,
    Axis,
    _err,
    _human,
    _read_regular,
    _suggest,
    _text,
    parse_axis,
    read_csv_columns,
)
from .functions import _Func, check_params
from .glmspec import GlmSpec, _glm_axes

__all__ = ["BIT_SETTINGS", "COMPRESSORS", "DEFAULT_COMPRESSOR", "Axis", "GlmSpec", "Output",
           "Sweep", "SweepError", "axes_hash", "current_settings", "jsonable", "listing",
           "parse_axis", "parse_compressor", "read_csv_columns"]

_SWEEP_KEYS = ("function", "name", "description", "chunks", "compressor", "accuracy")
#: the largest spec file read: tomllib reads some 200,000 values a second
_MAX_SPEC_BYTES = 4 << 20
#: how deeply a spec's tables, arrays and dotted keys may nest (a spec nests a few levels)
_MAX_DEPTH = 32
_TOO_DEEP = ("its tables, arrays or dotted keys are nested too deeply to read (a spec nests a "
             "few levels)")
#: TOML's strings and comments, whose dots and brackets are no structure
_TOML_TEXT = re.compile(r'"""(?:\\.|[^\\])*?"""|\'\'\'.*?\'\'\'|"(?:\\.|[^"\\\n])*"|'
                        r"'[^'\n]*'|#[^\n]*", re.S)


def _toml_depth(text: str) -> int:
    """How deeply TOML ``text`` nests, read before it is parsed: the most parts of a dotted key
    (which tomllib reads in time quadratic in them) and the deepest brackets."""
    bare = re.sub(r"\s*\.\s*", ".", _TOML_TEXT.sub("s", text))
    parts = max((t.count(".") + 1 for t in re.findall(r"[\w.+-]+", bare)), default=0)
    depth = deepest = 0
    for c in re.findall(r"[\[\]{}]", bare):
        depth = depth + 1 if c in "[{" else depth - 1
        deepest = max(deepest, depth)
    return max(parts, deepest)


def _nesting(value: Any) -> int:
    """How deeply the tables and arrays of a parsed spec nest (without recursing)."""
    deepest, stack = 0, [(value, 1)] if isinstance(value, (dict, list, tuple)) else []
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if d <= _MAX_DEPTH:
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v)
                         if isinstance(x, (dict, list, tuple)))
    return deepest


#: the codecs of ``sweep.compressor``: name -> (lowest, highest, default level), ``None`` for
#: ``"none"``
COMPRESSORS: dict[str, tuple[int, int, int] | None] = {
    "blosc-lz4": (1, 9, 5), "blosc-zstd": (1, 9, 1), "zstd": (1, 22, 3), "gzip": (1, 9, 1),
    "none": None}
#: the codec of a spec that names none: the fastest of benchmarks/bench_store.py's
#: (results/store-*.json), which stores smooth float64 fields about as small as zstd at its
#: default level
DEFAULT_COMPRESSOR = "blosc-lz4:5"
#: default chunk: 2^24 elements (128 MiB of float64): the store and the task cost per chunk,
#: and larger chunks delivered more points/s (``bench_sweep.py``)
_TARGET_ELEMENTS = 2**24
#: default GLM chunk: 2^18 points (a point costs l1 * l2, an output l2 + 1 values): a GLM
#: chunk's outputs are small beside its compute, so the store's cost per chunk weighs more, and
#: 2^18 came closer to the bare kernel than 2^16 (``bench_sweep.py``)
_TARGET_GLM_POINTS = 2**18
_STORE_CHUNK_ELEMENTS = 2**20  # zarr chunks of at most 8 MiB: a task's are encoded in parallel
# Array names in the store: a letter first, then letters, digits, '_', '.', '-' (no path
# separators, no '..', nothing zarr reserves); ".json" endings would shadow zarr's metadata.
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,127}")


@dataclass(frozen=True)
class Output:
    """One result array: name, full shape, chunks and dimension names."""

    name: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dims: tuple[str, ...]
    store_chunks: tuple[int, ...] = ()


def _safe_name(name: str) -> bool:
    return bool(_NAME_RE.fullmatch(name)) and not name.lower().endswith(".json")


def jsonable(obj: Any) -> Any:
    """The spec as JSON (zarr attributes): non-finite floats as the strings R prints."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Inf" if obj > 0 else "-Inf")
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    return obj


def _hash(obj: Any) -> str:
    """SHA-256 of ``obj`` as canonical JSON."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def axes_hash(axes: Iterable[tuple[str, np.ndarray]]) -> str:
    """The identity's part for the axes: their names and float64 values, in order (a store's
    coordinate arrays are checked against it)."""
    h = hashlib.sha256()
    for name, values in axes:
        v = np.ascontiguousarray(values, dtype="<f8")
        h.update(f"{json.dumps(name)}\0{v.size}\0".encode())
        h.update(v.data)
    return h.hexdigest()


#: the configuration keys that change a sweep's values; ``noinline`` and ``build.link`` change
#: how programs are built, not their bits (the suite's bits tests hold them to that)
BIT_SETTINGS = ("fp_contract", "accuracy")


def current_settings() -> dict[str, Any]:
    """This process's values of :data:`BIT_SETTINGS`."""
    from .. import config

    return {k: config.get(k) for k in BIT_SETTINGS if k in config.KEYS}


# --- the sweep ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Sweep:
    """A parsed, validated sweep spec (see the module docstring for the format); immutable.

    Build one with :meth:`from_toml` or :meth:`from_dict`, which check everything that can be
    checked without computing: the function exists, every axis and argument is one of its
    parameters, required parameters are given, axes are non-empty 1-D lists of numbers, chunks
    are positive and name axes.  Errors are :class:`SweepError` and say what to fix.
    :func:`daskcl.sweep.run` computes a sweep into a store; a sweep pickles, as it travels to
    the workers.  What changes a spec returns a new one (:meth:`resolve_envelope`,
    :meth:`with_axes`).
    """

    #: the spec's tables, as parsed (a copy: the caller's mapping is not kept)
    spec: dict[str, Any]
    #: the directory that relative paths in the spec are relative to
    base: Path
    #: the spec file's text (``None`` for a spec given as a mapping)
    text: str | None
    function: str
    description: str
    #: the result arrays' codec, ``NAME:LEVEL`` or ``"none"`` (:func:`parse_compressor`)
    compressor: str
    #: ``[args]``: fixed arguments and flags, by keyword
    args: dict[str, Any]
    axes: tuple[Axis, ...]
    output_names: tuple[str, ...]
    #: the length of a chunk (a task) along each axis
    chunks: tuple[int, ...]
    glm: GlmSpec | None = field(default=None, repr=False)
    func: _Func | None = field(default=None, repr=False)
    #: configuration the spec sets for its chunks (``[sweep] accuracy``)
    overrides: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.chunks) != len(self.axes) or not all(
                isinstance(c, int) and c >= 1 for c in self.chunks):
            raise _err("sweep.chunks", f"{self.chunks} must give a positive length for each "
                       f"of the {len(self.axes)} axes")
        _check_names([a.name for a in self.axes], self.output_names, self.shape)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read and validate a spec file (relative paths inside it are relative to it).

        Parameters
        ----------
        path : str or path
            The TOML file (the format: :mod:`daskcl.sweep.spec`).

        Returns
        -------
        Sweep

        Raises
        ------
        SweepError
            An unreadable or invalid spec; the message names the table and key.

        Examples
        --------
        >>> from daskcl.sweep import Sweep
        >>> s = Sweep.from_toml("workflows/tukey_critical/tukey.toml")
        >>> s.function, s.shape, s.n_chunks
        ('qtukey', (3, 19, 24), 3)
        """
        p = Path(path)
        text = _text(_read_regular(p, "spec", "spec file", _MAX_SPEC_BYTES, " (TOML is read "
                                   "slowly: long lists of values go in a file axis, "
                                   "q = { file = \"q.npy\" })"), p, "spec")
        deep = f"{p}: {_TOO_DEEP}"
        if _toml_depth(text) > _MAX_DEPTH:
            raise SweepError(deep)
        try:
            spec = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SweepError(f"{p}: not valid TOML: {exc}") from exc
        except RecursionError:     # tomllib parses nested arrays and tables recursively
            raise SweepError(deep) from None
        return cls.from_dict(spec, p.parent, text=text)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], base: str | os.PathLike[str] = ".", *,
                  text: str | None = None) -> Sweep:
        """Validate a spec given as a mapping of its tables.

        Parameters
        ----------
        spec : mapping
            The spec's tables (``"sweep"``, ``"axes"``, ``"args"``, ``"glm"``, ``"kernel"``),
            as TOML would give them; ``"sweep"`` may be left out with a ``"kernel"``.
        base : str or path
            The directory that relative paths in the spec are relative to.
        text : str, optional
            The spec file's text, recorded in the store.

        Returns
        -------
        Sweep

        Raises
        ------
        SweepError
            An invalid spec; the message names the table and key.

        Examples
        --------
        >>> from daskcl.sweep import Sweep
        >>> s = Sweep.from_dict({"sweep": {"function": "dgamma"},
        ...                      "axes": {"x": {"linspace": [0, 10, 101]},
        ...                               "shape": {"values": [1, 2, 5]}},
        ...                      "args": {"scale": 2.0}})
        >>> s.shape, s.output_names
        ((101, 3), ('dgamma',))
        """
        if _nesting(spec) > _MAX_DEPTH:
            raise SweepError(f"spec: {_TOO_DEEP}")
        tables: dict[str, Any] = copy.deepcopy(dict(spec))
        base_path = Path(base).resolve()
        unknown = sorted(set(tables) - {"sweep", "axes", "args", "glm", "kernel"})
        if unknown:
            raise _err("spec", f"unknown tables {unknown}; a spec has [sweep], [axes], [args] "
                       "and, for glm.f2_f3, [glm], or a [kernel] of its own")
        kernel_table = tables.get("kernel")
        # a [kernel] names what is computed: the [sweep] table, then, is optional
        top = tables.get("sweep", {} if kernel_table is not None else None)
        if not isinstance(top, dict) or ("function" not in top and kernel_table is None):
            raise _err("spec", "a [sweep] table with function = \"<name>\" (or a [kernel] "
                       "table) is needed")
        if "function" in top and kernel_table is not None:
            raise _err("kernel", "a spec names a function or defines a [kernel], not both")
        bad = sorted(set(top) - set(_SWEEP_KEYS))
        if bad:
            raise _err("sweep", f"unknown keys {bad}; known: {list(_SWEEP_KEYS)}")
        function = str(top.get("function", ""))
        description = str(top.get("description", ""))
        compressor = parse_compressor(top.get("compressor", DEFAULT_COMPRESSOR))
        args = _args(tables.get("args", {}))
        axes_spec = tables.get("axes", {})
        if not isinstance(axes_spec, dict):
            raise _err("axes", "give a table of name = { values | linspace | ... }")
        glm: GlmSpec | None = None
        func: _Func | None = None
        if function == "glm.f2_f3":
            glm = GlmSpec.parse(tables.get("glm"), base_path)
            axes = _glm_axes(glm, axes_spec, args, base_path)
            output_names: tuple[str, ...] = ("qf", "grad")
        else:
            if "glm" in tables:
                raise _err("glm", "a [glm] table is only for function = \"glm.f2_f3\"")
            if kernel_table is not None:
                func = _Func.from_kernel(kernel_table, base_path, str(top.get("name", "")))
                function = func.name
            else:
                func = _Func(function, base_path)
            if not axes_spec:
                raise _err("axes", "at least one axis is needed")
            axes = tuple(parse_axis(k, v, base_path) for k, v in axes_spec.items())
            check_params(function, func, axes, args)
            if func.kind == "kernel":
                output_names = func.kernel.definition.outputs
            else:
                output_names = (str(top.get("name", function.rpartition(":")[2])),)
        chunks = _chunks(top.get("chunks"), [a.name for a in axes],
                         tuple(a.values.size for a in axes), glm is not None)
        overrides = {}
        if "accuracy" in top:
            from .. import config
            from ..errors import ConfigError

            try:
                overrides = config.check({"accuracy": top["accuracy"]})
            except ConfigError:
                raise _err("sweep.accuracy", f"must be \"r\" or \"best\", got "
                           f"{top['accuracy']!r}") from None
        return cls(tables, base_path, text, function, description, compressor, args, axes,
                   output_names, chunks, glm, func, overrides)

    # -- new specs ----------------------------------------------------------------------------

    @property
    def has_envelope(self) -> bool:
        """Whether the axes are a GLM envelope, found around the posterior mode before the
        sweep computes (until then they hold placeholders)."""
        return self.glm is not None and self.glm.envelope is not None

    def with_axes(self, axes: Sequence[Axis]) -> Sweep:
        """This spec with other values on its axes: the same names and sizes, in order (an
        envelope found before the sweep, or read back from its store)."""
        axes = tuple(axes)
        want = [(a.name, a.values.shape) for a in self.axes]
        got = [(a.name, a.values.shape) for a in axes]
        if got != want:
            raise SweepError(f"with_axes: the axes must keep their names and sizes {want}, "
                             f"got {got}")
        return dataclasses.replace(self, axes=axes)

    def resolve_envelope(self) -> tuple[Sweep, dict[str, Any]]:
        """This sweep with its envelope axes found (a ``glm.f2_f3`` sweep with
        ``[glm.envelope]``), and what was found: ``mode``, ``sd`` and ``hessian``.

        The axes are ``mode + sd * linspace(-width, width, points)`` around the posterior mode
        (:func:`daskcl.glm.posterior_mode`), ``sd`` the square roots of the diagonal of the
        inverse Hessian there.  This evaluates the posterior on this process's device."""
        from ..errors import PosteriorModeError
        from ..glm import posterior_mode

        if self.glm is None or self.glm.envelope is None:
            raise SweepError("resolve_envelope: the sweep has no [glm.envelope] table")
        points, width = self.glm.envelope
        try:
            mode, H = posterior_mode(self.glm.posterior())
        except PosteriorModeError as exc:
            raise SweepError(f"glm.envelope: {exc}") from exc
        try:
            cov = np.linalg.inv(H)
        except np.linalg.LinAlgError as exc:
            raise SweepError("glm.envelope: singular Hessian at the mode") from exc
        sd = np.sqrt(np.diag(cov))
        axes = [Axis(a.name, mode[k] + sd[k] * np.linspace(-width, width, points),
                     {"envelope": True, "mode": float(mode[k]), "sd": float(sd[k])})
                for k, a in enumerate(self.axes)]
        return self.with_axes(axes), {"mode": mode.tolist(), "sd": sd.tolist(),
                                      "hessian": H.tolist()}

    # -- geometry -----------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The number of values of each axis."""
        return tuple(a.values.size for a in self.axes)

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
            return [Output(name, self.shape, self.chunks, dims, sc) for name in self.output_names]
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
        (the Python file's text), ``kernel_source`` (the OpenCL the values come from),
        ``settings`` (:attr:`settings`), ``axes``, ``args`` (numbers as doubles), ``chunks``,
        ``outputs``, ``glm`` (its data and model), and ``sweep`` (all of them).  Nothing is
        imported or run: files are hashed as text.  What a Python function's file imports and
        opens is recorded as its chunks compute (:mod:`daskcl.sweep.inputs`)."""
        return dict(self._identity_parts)

    @functools.cached_property
    def _identity_parts(self) -> dict[str, str]:
        """Computed once a spec (a spec is immutable; a new spec computes its own)."""
        parts = {
            "function": _hash(self.function),
            "function_code": _hash(self._function_code()),
            "kernel_source": _hash(self._kernel_source()),
            "settings": _hash(self.settings),
            "axes": axes_hash((a.name, a.values) for a in self.axes),
            # values equal as numbers are one value (mean = 0 and mean = 0.0)
            "args": _hash(jsonable({k: float(v) if isinstance(v, int) and not isinstance(
                v, bool) else v for k, v in self.args.items()})),
            "chunks": _hash(list(self.chunks)),
            "outputs": _hash(list(self.output_names)),
            "glm": _hash(None if self.glm is None else [self.glm.family, self.glm.link] + [
                np.ascontiguousarray(v).tobytes().hex()
                for v in (self.glm.y, self.glm.x, self.glm.wt, self.glm.alpha, self.glm.mu,
                          self.glm.P)]),
        }
        parts["sweep"] = _hash(parts)
        return parts

    @functools.cached_property
    def settings(self) -> dict[str, Any]:
        """The configuration that changes the values (``fp_contract``, ``accuracy``) as this
        spec was first identified, with what the spec sets: every chunk is computed under it."""
        return {**current_settings(), **self.overrides}

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
        from ..runtime.library import get_library

        lib = get_library()
        if self.glm is not None:
            from ..glm import program_source

            return [program_source(self.glm.family, self.glm.link).text]
        assert self.func is not None
        if self.func.kind == "kernel":
            return [self.func.kernel.plain_source().text]
        if self.func.kind == "nmath":
            from ..kernels._nmath_function import NmathFunction
            from ..kernels._registry import FUNCTIONS

            kernel = FUNCTIONS[self.function]
            if not isinstance(kernel, NmathFunction):  # generators are refused by the spec
                raise TypeError(f"{self.function} is not an elementwise function")
            out = [kernel.plain_source().text]
            if kernel.definition.tables:
                out += [lib.read(f"kernels/{p.name}")
                        for p in sorted((lib.root / "kernels").glob("*.cl"))]
            return out
        names = [str(p.relative_to(lib.root)) for p in sorted(lib.root.rglob("*.cl"))]
        return [f"{n}\0{lib.read(n)}" for n in names]     # regular files only: never blocks

    def plan(self, done: int | None = None, store: str | os.PathLike[str] | None = None) -> str:
        """What the sweep will compute, in words (``daskcl sweep --dry-run``), with a warning
        line where the output exceeds the free space of ``store``'s filesystem (a local path or
        ``file://`` URL) or 1 TiB."""
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
        for k, v in self.overrides.items():
            lines.append(f"setting   {k} = {v!r}")
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
        # the disk: the free space where the store would go (its nearest existing directory)
        import shutil

        free = None
        if store is not None and "://" not in str(store).removeprefix("file://"):
            where = Path(str(store).removeprefix("file://")).absolute()
            while not where.is_dir() and where != where.parent:
                where = where.parent
            try:
                free = shutil.disk_usage(where).free
            except OSError:
                pass
        if free is not None and total > free:
            lines.append(f"warning   the output ({_human(total)}, before compression) exceeds "
                         f"the {_human(free)} free on {where}'s filesystem")
        elif total > 2**40:
            lines.append(f"warning   {_human(total)} of output (before compression): check "
                         "that the store's filesystem holds it")
        return "\n".join(lines)


def parse_compressor(value: Any) -> str:
    """``sweep.compressor`` checked and spelled in full: ``NAME`` or ``NAME:LEVEL`` of
    :data:`COMPRESSORS` gives ``NAME:LEVEL`` (the codec's default level where none is given),
    ``"none"`` gives ``"none"``.

    Raises
    ------
    SweepError
        Not a string, an unknown codec, or a level out of the codec's range.

    Example
    -------
    >>> parse_compressor("zstd"), parse_compressor("blosc-zstd:3"), parse_compressor("none")
    ('zstd:3', 'blosc-zstd:3', 'none')
    """
    known = ", ".join(repr(n) for n in COMPRESSORS)
    if not isinstance(value, str):
        raise _err("sweep.compressor", f"give a codec name ({known}), got {value!r}")
    name, colon, level = value.strip().lower().partition(":")
    if name not in COMPRESSORS:
        raise _err("sweep.compressor", f"unknown codec {value!r}{_suggest(name, COMPRESSORS)}; "
                   f"known: {known}, optionally with a level (\"zstd:1\")")
    levels = COMPRESSORS[name]
    if levels is None:
        if colon:
            raise _err("sweep.compressor", f"{name!r} takes no level, got {value!r}")
        return name
    low, high, default = levels
    if not colon:
        return f"{name}:{default}"
    if not re.fullmatch(r"[0-9]{1,2}", level) or not low <= int(level) <= high:
        raise _err("sweep.compressor", f"{name} levels are {low} to {high}, got {value!r}")
    return f"{name}:{int(level)}"


def _args(args: Any) -> dict[str, Any]:
    """``[args]`` checked: numbers (finite), flags and strings, by name."""
    if not isinstance(args, dict):
        raise _err("args", "give a table of name = value")
    for k, v in args.items():
        if not isinstance(v, (bool, int, float, str)):
            raise _err(f"args.{k}", f"must be a number, a bool or a string, got {v!r}")
        if isinstance(v, float) and not math.isfinite(v):
            # every value of the sweep would be NaN, or the function's at +-inf: an axis
            # takes +-inf (R's functions take it), an argument a finite number
            raise _err(f"args.{k}", f"must be a finite number, got {v!r}" + (
                "" if math.isnan(v) else f" (to evaluate at {v!r}, give it as an axis: "
                f"{k} = {{ values = [{v!r}] }})"))
    return dict(args)


def _chunks(chunks: Any, names: list[str], shape: tuple[int, ...], glm: bool
            ) -> tuple[int, ...]:
    """``sweep.chunks`` checked, or the automatic chunks of a sweep of this shape."""
    if chunks is None:
        chunks = {}
    if not isinstance(chunks, dict):
        raise _err("sweep.chunks", f"give a table axis = length, got {chunks!r}")
    for k, v in chunks.items():
        if k not in names:
            raise _err("sweep.chunks", f"no axis {k!r}{_suggest(k, names)}; axes: {names}")
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise _err(f"sweep.chunks.{k}", f"must be a positive integer, got {v!r}")
    out = [min(int(chunks.get(n, s)), s) for n, s in zip(names, shape)]
    if not chunks:  # automatic: split the leading axes until a chunk is small enough
        target = _TARGET_GLM_POINTS if glm else _TARGET_ELEMENTS
        for i in range(len(out)):
            rest = math.prod(out[i + 1:])
            if math.prod(out) <= target:
                break
            # as many pieces as the target asks for, of equal length (no short last chunk)
            pieces = -(-out[i] // max(1, target // rest))
            out[i] = -(-out[i] // pieces)
    return tuple(out)


def _check_names(names: list[str], output_names: tuple[str, ...], shape: tuple[int, ...]
                 ) -> None:
    """Every output and axis becomes a zarr array of the store: a safe, distinct name; and
    the sweep has at most 2**50 points."""
    for n in names:
        if not _safe_name(n):
            raise _err(f"axis {n!r}", "an axis name starts with a letter and holds only "
                       "letters, digits, '_', '.' and '-' (at most 128), not ending in "
                       "'.json'")
    for o in output_names:
        if not _safe_name(o):
            raise _err("sweep.name", f"{o!r} is not a usable array name: start with a "
                       "letter, then letters, digits, '_', '.' or '-' (at most 128), not "
                       "ending in '.json'")
    seen: dict[str, str] = {}
    for n in [*names, *output_names]:
        if n.lower() in seen:
            raise _err("sweep.name" if n in output_names else f"axis {n!r}",
                       f"{n!r} clashes with an axis or output named {seen[n.lower()]!r} "
                       "(letter case aside: stores on some file systems ignore it); "
                       "rename it")
        seen[n.lower()] = n
    points = math.prod(shape)
    if points > _MAX_POINTS:
        raise _err("axes", f"the sweep has {points} points; at most {_MAX_POINTS} "
                   "(2**50) are allowed: split it into several sweeps")


def listing(names: Sequence[str], n: int = 5) -> str:
    """The first ``n`` names, comma-separated, and how many more there are."""
    shown = ", ".join(names[:n])
    return shown + (f" and {len(names) - n} more" if len(names) > n else "")
