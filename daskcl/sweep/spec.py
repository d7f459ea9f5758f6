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
grid: axis sizes (at most 2**27 values an axis, 2**50 points a sweep), array names that are
safe zarr names, no NaN (axes may hold +-inf, as R's functions take it; ranges and
arguments are finite), GLM data that the family takes (every value finite, weights and trials
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
import difflib
import functools
import hashlib
import inspect
import json
import math
import os
import re
import stat
import sys
import tomllib
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SweepError
from . import inputs

if TYPE_CHECKING:
    from ..glm import Posterior
    from ..kernels._elementwise import ElementwiseKernel

__all__ = ["BIT_SETTINGS", "COMPRESSORS", "DEFAULT_COMPRESSOR", "Axis", "GlmSpec", "Output",
           "Sweep", "SweepError", "axes_hash", "current_settings", "jsonable", "listing",
           "parse_axis", "parse_compressor", "read_csv_columns"]

_AXIS_KINDS = ("values", "linspace", "logspace", "arange", "file")
_SWEEP_KEYS = ("function", "name", "description", "chunks", "compressor", "accuracy")
_KERNEL_KEYS = ("name", "inputs", "outputs", "operation", "preamble", "library")
#: the codecs of ``sweep.compressor``: name -> (lowest, highest, default level), ``None`` for
#: ``"none"``
COMPRESSORS: dict[str, tuple[int, int, int] | None] = {
    "blosc-lz4": (1, 9, 5), "blosc-zstd": (1, 9, 1), "zstd": (1, 22, 3), "gzip": (1, 9, 1),
    "none": None}
#: the codec of a spec that names none: the fastest of benchmarks/bench_store.py's
#: (results/store-*.json), which stores smooth float64 fields about as small as zstd at its
#: default level
DEFAULT_COMPRESSOR = "blosc-lz4:5"
#: default chunk: 2^24 elements (128 MiB of float64).  The store and the task have costs per
#: chunk: on an H100, sweeps of 2^30 points of qbeta and dnorm delivered 2.0-2.1e8, 2.4-2.5e8
#: and 2.6e8 points/s (qbeta) and 2.1-2.3e8, 2.7-2.8e8 and 3.0-3.1e8 (dnorm) with chunks of
#: 2^22, 2^23 and 2^24 elements (benchmarks/README.md, "Sweeps")
_TARGET_ELEMENTS = 2**24
#: default GLM chunk: 2^18 points (a point costs l1 * l2, an output l2 + 1 values).  The store
#: has a cost per chunk (files, checksums, the mark), and a GLM chunk's outputs are small beside
#: its compute: with 2^16 points an f2_f3 sweep on an H100 reached 0.82-0.84 of its bare kernel
#: and its store absorbed 7.7e6 points/s; with 2^18, 0.96-0.97 and 2.9e7 (the bare kernel itself
#: 27% faster: benchmarks/README.md, "Sweeps")
_TARGET_GLM_POINTS = 2**18
_STORE_CHUNK_ELEMENTS = 2**20  # zarr chunks of at most 8 MiB: a task's are encoded in parallel
_MAX_AXIS = 2**27  # values of one axis (1 GiB of coordinates, held by every task)
_MAX_POINTS = 2**50  # points of a sweep (8 PiB of float64 per output)
_MAX_FILE_BYTES = 2**31  # an axis, data or function file read by a spec
# Array names in the store: a letter first, then letters, digits, '_', '.', '-' (no path
# separators, no '..', nothing zarr reserves); ".json" endings would shadow zarr's metadata.
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,127}")


@dataclass(frozen=True, eq=False)
class Axis:
    """One parameter axis: its name, its values (float64, read-only) and how the spec gave
    them."""

    name: str
    values: np.ndarray
    source: dict[str, Any]

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64).view()
        values.flags.writeable = False  # a view: the array given stays as it was
        object.__setattr__(self, "values", values)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.values.flags.writeable = False


@dataclass(frozen=True)
class Output:
    """One result array: name, full shape, chunks and dimension names."""

    name: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dims: tuple[str, ...]
    store_chunks: tuple[int, ...] = ()


def _err(where: str, what: str) -> SweepError:
    return SweepError(f"{where}: {what}")


def _suggest(name: str, choices: Any) -> str:
    close = difflib.get_close_matches(name, list(choices), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _read_regular(path: Path, where: str, what: str = "file") -> bytes:
    """The bytes of ``path``, a regular file (a directory, FIFO or device is refused; opening
    never blocks).  Errors name the path and the reason, never the contents."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _err(where, f"{what} {str(path)!r} not found") from None
    except OSError as exc:
        raise _err(where, f"cannot open {what} {str(path)!r}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _err(where, f"{what} {str(path)!r} is not a regular file")
        if st.st_size > _MAX_FILE_BYTES:
            raise _err(where, f"{what} {str(path)!r} is {_human(st.st_size)}; at most "
                       f"{_human(_MAX_FILE_BYTES)} are read")
        chunks = []
        while True:
            try:
                b = os.read(fd, 1 << 20)
            except OSError as exc:
                raise _err(where, f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _text(data: bytes, path: Path, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _err(where, f"{path.name} is not UTF-8 text") from None


def _float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def read_csv_columns(path: Path, columns: list[str], where: str) -> dict[str, np.ndarray]:
    """The named numeric columns of a CSV file with a header row.

    Only the columns asked for are read; an error names the file, the column (a name from the
    spec) and the row, never what the file holds."""
    return _read_csv(path, columns, where)[0]


def _read_csv(path: Path, columns: list[str], where: str, max_rows: int | None = None
              ) -> tuple[dict[str, np.ndarray], list[int]]:
    """:func:`read_csv_columns`, and the line of the file each data row was read from; a file
    of more than ``max_rows`` rows is refused before they are parsed."""
    import csv
    import io

    data = _read_regular(path, where, "data file" if where == "glm" else "file")
    if max_rows is not None:
        # lines holding more than white space (the header among them): at least the rows
        rows = _runs(data.translate(None, b" \t\r\x0b\x0c"), b"\n") - 1
        if rows > max_rows:
            raise _err(where, f"{path.name} holds {rows} rows; an axis has at most {max_rows} "
                       "values")
    text = _text(data, path, where)
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise _err(where, f"{path.name} is empty; a CSV file with a header row is needed"
                   ) from None
    except csv.Error:
        raise _err(where, f"{path.name} is not a CSV file") from None
    idx = {}
    for c in columns:
        if c not in header:
            raise _err(where, f"no column {c!r} in {path.name} (its header row names "
                       f"{len(header)} columns)")
        idx[c] = header.index(c)
    out: dict[str, list[float]] = {c: [] for c in columns}
    lines: list[int] = []
    try:
        for row_no, row in enumerate(reader, start=2):
            if not row or all(not f.strip() for f in row):
                continue
            for c, i in idx.items():
                v = _float(row[i]) if i < len(row) else None
                if v is None:
                    raise _err(where, f"{path.name} line {row_no}, column {c!r}: not a number")
                out[c].append(v)
            lines.append(row_no)
    except csv.Error:
        raise _err(where, f"{path.name} is not a valid CSV file") from None
    return {c: np.asarray(v, dtype=np.float64) for c, v in out.items()}, lines


def _read_values_file(path: Path, column: str | None, where: str) -> np.ndarray:
    """An axis's values from a ``.npy``, ``.txt`` (numbers separated by white space, ``#``
    comments) or ``.csv`` (``column`` of a file with a header row) file."""
    if path.suffix == ".csv" or column is not None:
        if column is None:
            raise _err(where, f"give column = \"name\" for the CSV file {path.name}")
        if not isinstance(column, str):
            raise _err(where, f"column must be a column name, got {column!r}")
        return _read_csv(path, [column], where, _MAX_AXIS)[0][column]
    data = _read_regular(path, where)
    if path.suffix == ".npy":
        import io

        n = _npy_size(data)
        if n is not None and n > _MAX_AXIS:
            raise _err(where, f"the file holds {n} values; an axis has at most {_MAX_AXIS}")
        try:
            arr = np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:  # numpy's messages may quote the header:
            # name only the type
            raise _err(where, f"{path.name} is not a .npy file of numbers "
                       f"({type(exc).__name__})") from None
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
            raise _err(where, f"{path.name} does not hold an array of real numbers")
        return np.asarray(arr, dtype=np.float64)
    # counted before they are parsed (white space and comments aside, as below), so that a
    # file of too many numbers is said at once rather than after all are converted
    n = _runs(re.sub(rb"#[^\n]*", b"", data) if b"#" in data else data, b" \t\n\r\x0b\x0c")
    if n > _MAX_AXIS:
        raise _err(where, f"the file holds {n} values; an axis has at most {_MAX_AXIS}")
    rows = []
    for line_no, line in enumerate(_text(data, path, where).splitlines(), start=1):
        tokens = line.partition("#")[0].split()
        if not tokens:
            continue
        vals = [_float(t) for t in tokens]
        bad = [i for i, v in enumerate(vals) if v is None]
        if bad:
            raise _err(where, f"{path.name} line {line_no}, item {bad[0] + 1}: not a number")
        rows.append(vals)
    if len(rows) > 1 and any(len(r) != 1 for r in rows):
        raise _err(where, f"{path.name}: give one number per line, or one line of numbers")
    return np.asarray([v for r in rows for v in r], dtype=np.float64)


def _runs(data: bytes, separators: bytes) -> int:
    """The number of runs of bytes of ``data`` that are not ``separators`` (its words, for
    white space), counted in slices of 64 MiB, without making any of them an object."""
    sep = np.zeros(256, dtype=bool)
    sep[list(separators)] = True
    count, before = 0, True
    step = 1 << 26
    for start in range(0, len(data), step):
        part = sep[np.frombuffer(data, np.uint8, min(step, len(data) - start), start)]
        count += int(before and not part[0])
        count += int(np.count_nonzero(~part[1:] & part[:-1]))
        before = bool(part[-1])
    return count


def _npy_size(data: bytes) -> int | None:
    """The number of values a ``.npy`` file's header says it holds (``None`` where it cannot
    be read: ``np.load`` says why)."""
    import io

    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape = read(f)[0]
        return math.prod(int(d) for d in shape)
    except (ValueError, TypeError, OSError, EOFError, SyntaxError):
        return None


def _numbers(v: Any, n: int, where: str, kind: str) -> list[float]:
    if not isinstance(v, list) or len(v) != n or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
        want = {"linspace": "[start, stop, num]", "logspace": "[start, stop, num]"}[kind]
        raise _err(where, f"{kind} takes {want}, got {v!r}")
    return [float(t) for t in v]


def _count(n: float, where: str, what: str) -> int:
    """A number of values: a finite positive integer, at most ``_MAX_AXIS``."""
    if not math.isfinite(n) or n != int(n) or n < 1:
        raise _err(where, f"{what} must be a positive integer, got {n!r}")
    if n > _MAX_AXIS:
        raise _err(where, f"{what} is {int(n)}; an axis has at most {_MAX_AXIS} values "
                   "(split the sweep, or use a coarser grid)")
    return int(n)


def _finite(vals: list[float], where: str, kind: str) -> None:
    if not all(math.isfinite(t) for t in vals):
        raise _err(where, f"{kind} takes finite numbers, got {vals!r}")


def _exact_ints(vals: list[Any], where: str, kind: str) -> None:
    """An integer that a double does not hold exactly (beyond 2^53) is refused: the axis is of
    doubles, and 9007199254740993 would silently become ...992."""
    for t in vals:
        if isinstance(t, int) and not isinstance(t, bool) and (
                abs(t) > 2**1023 or int(float(t)) != t):
            digits = str(abs(t))
            shown = str(t) if len(digits) < 30 else f"of {len(digits)} digits {str(t)[:12]}..."
            raise _err(where, f"{kind}: the integer {shown} is not exactly a double (integers "
                       "beyond 2^53 = 9007199254740992 round, beyond 1.8e308 overflow); give "
                       "the value as a float")


def parse_axis(name: str, spec: Any, base: Path) -> Axis:
    """One ``[axes]`` entry as an :class:`Axis` (errors name the axis and what is wrong).

    Sizes are checked before anything is allocated: an axis has at most ``2**27`` values."""
    where = f"axis {name!r}"
    if not isinstance(spec, dict):
        raise _err(where, f"give a table such as {{ values = [...] }}, got {spec!r}")
    kinds = [k for k in spec if k in _AXIS_KINDS]
    extra = [k for k in spec if k not in _AXIS_KINDS and k != "column"]
    if len(kinds) != 1 or extra:
        raise _err(where, f"give exactly one of {', '.join(_AXIS_KINDS)}; got {sorted(spec)}")
    kind = kinds[0]
    if "column" in spec and kind != "file":
        raise _err(where, "column is for a file axis (a CSV file)")
    v = spec[kind]
    if kind == "values":
        if not isinstance(v, list) or not v or not all(
                isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
            raise _err(where, f"values must be a non-empty list of numbers, got {v!r}")
        _count(len(v), where, "the number of values")
        _exact_ints(v, where, "values")
        values = np.asarray(v, dtype=np.float64)
    elif kind in ("linspace", "logspace"):
        start, stop, num = _numbers(v, 3, where, kind)
        _finite([start, stop], where, f"{kind} start and stop")
        n = _count(num, where, f"{kind} num")
        if kind == "linspace":
            values = np.linspace(start, stop, n)
        else:
            with np.errstate(over="ignore", under="ignore"):
                values = np.logspace(start, stop, n)
            if not np.all(np.isfinite(values)):
                raise _err(where, f"logspace [{start:g}, {stop:g}]: 10**{max(start, stop):g} "
                           "overflows a double")
    elif kind == "arange":
        if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(
                isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
            raise _err(where, f"arange takes [stop], [start, stop] or [start, stop, step], got {v!r}")
        _exact_ints(v, where, "arange")
        a_start, a_stop, a_step = ([0.0, *map(float, v), 1.0] if len(v) == 1 else
                                   [*map(float, v), 1.0] if len(v) == 2 else list(map(float, v)))
        _finite([a_start, a_stop, a_step], where, "arange")
        if a_step == 0:
            raise _err(where, "arange step must not be 0")
        span = (a_stop - a_start) / a_step
        if span <= 0:
            raise _err(where, f"arange {v!r} is empty (stop must lie beyond start in the "
                       "direction of step)")
        if not span <= _MAX_AXIS:
            raise _err(where, f"arange {v!r} has more than {_MAX_AXIS} values, the most an "
                       "axis has (split the sweep, or use a coarser grid)")
        values = np.arange(*v, dtype=np.float64)
        if values.size > 1 and not np.all(np.diff(values) != 0):
            raise _err(where, f"arange {v!r}: its values beyond 2^53 are not distinct as "
                       "doubles (the step is below their spacing)")
    else:
        if not isinstance(v, str):
            raise _err(where, f"file must be a path, got {v!r}")
        values = _read_values_file(base / v, spec.get("column"), where)
        if values.size > _MAX_AXIS:
            raise _err(where, f"the file holds {values.size} values; an axis has at most "
                       f"{_MAX_AXIS}")
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise _err(where, f"the values must form a non-empty 1-D list, got shape {values.shape}")
    if np.isnan(values).any():
        # a coordinate nothing can select, and a result that is NaN wherever it is used;
        # infinities are taken, as R's functions take them (df = Inf, say)
        raise _err(where, f"holds NaN (value {int(np.argmax(np.isnan(values)))} of "
                   f"{values.size}); an axis takes numbers, and +-inf, but not NaN")
    return Axis(name, values, dict(spec))


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


# --- functions --------------------------------------------------------------------------------


# [args] types a Python function's annotation asks for (other annotations are not checked).
_ANNOTATION_TYPES: dict[str, tuple[type, ...]] = {
    "float": (int, float), "int": (int,), "bool": (bool,), "str": (str,)}


def _is_type(v: Any, types_: tuple[type, ...]) -> bool:
    return isinstance(v, types_) and (bool in types_ or not isinstance(v, bool))


class _Func:
    """How to evaluate one chunk: a callable of keyword arrays, and what it accepts.

    For a Python function (``file.py:func``) the file is read and *parsed*, never run: its
    parameters come from the ``def`` statement.  The file runs only when a chunk is evaluated.
    """

    kind = "nmath"
    #: the kernel of a ``[kernel]`` table (kind ``"kernel"``)
    kernel: ElementwiseKernel

    def __init__(self, name: str, base: Path) -> None:
        self.name = name
        self.params: tuple[str, ...] = ()
        self.required: tuple[str, ...] = ()
        self.flags: tuple[str, ...] = ()
        self.arg_types: dict[str, tuple[type, ...]] = {}
        self._source: str | None = None
        self._path = ""
        self._attr = ""
        if name.startswith("r") and _is_random(name):
            raise _err("sweep.function", f"{name!r} draws random variates; sweeps evaluate "
                       "functions of parameters (use daskcl.nmath." + name + "(..., chunks=) "
                       "and dask's to_zarr for variates)")
        if ":" in name:
            target, _, attr = name.rpartition(":")
            if not target.endswith(".py"):
                raise _err("sweep.function", f"{name!r}: a Python function comes from a file "
                           "the spec names, as 'file.py:func' (relative to the spec's "
                           "directory, or absolute); functions of importable modules "
                           f"({target!r}) are not run. Write a file whose function calls it.")
            if not attr.isidentifier():
                raise _err("sweep.function", f"{name!r}: {attr!r} is not a function name")
            path = (base / target).resolve()
            self.kind = "python"
            self._attr = attr
            self._path = str(path)
            self._source = _text(_read_regular(path, "sweep.function"), path, "sweep.function")
            self._parse_def()
            return
        from .. import nmath

        if name not in nmath.FUNCTIONS:
            raise _err("sweep.function", f"no daskcl.nmath function {name!r}"
                       f"{_suggest(name, nmath.FUNCTIONS)}; or give 'glm.f2_f3' or "
                       "'file.py:func'")
        sig = inspect.signature(nmath.FUNCTIONS[name])
        # a spec names Rmath.h's parameters: R's keywords (rate=, ncp=, mu=, expon_scaled=;
        # keyword-only, None by default) are not among them, and a parameter one of them may
        # stand in for (dnbinom's prob, None by default) is required
        params = [p for p in sig.parameters.values()
                  if not (p.kind is p.KEYWORD_ONLY and p.default is None)]
        self.params = tuple(p.name for p in params)
        self.required = tuple(p.name for p in params if p.default is p.empty or p.default is None)
        self.flags = tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY)
        # Rmath's arguments are doubles, its flags booleans.
        self.arg_types = {p: (bool,) if p in self.flags else (int, float) for p in self.params}

    def _parse_def(self) -> None:
        """Parameters, defaults and simple annotations of ``def <attr>`` in the file (the
        last top-level binding of the name must be that ``def``)."""
        import ast

        where, fname = "sweep.function", Path(self._path).name
        try:
            tree = ast.parse(self._source or "", filename=self._path)
        except SyntaxError as exc:
            raise _err(where, f"{fname} is not valid Python: line {exc.lineno}: {exc.msg}"
                       ) from None
        except (RecursionError, MemoryError):     # the parser's own bound on nesting
            raise _err(where, f"{fname} nests its expressions too deeply to parse") from None
        found: ast.AST | None = None
        for node in tree.body:
            bound: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound = [(a.asname or a.name).split(".")[0] for a in node.names]
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound = [n.id for t in targets for n in ast.walk(t)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
            if self._attr in bound:
                found = node
        if not isinstance(found, ast.FunctionDef):
            how = ("is not defined at its top level" if found is None else
                   f"is bound at line {getattr(found, 'lineno', '?')} by something other "
                   "than a 'def'")
            raise _err(where, f"{self.name!r}: {self._attr!r} {how}; the function must be "
                       f"defined with 'def {self._attr}(...)' at the top level of {fname} "
                       "(daskcl reads its parameters without running the file)")
        a = found.args
        positional = [*a.posonlyargs, *a.args]
        n_req = len(positional) - len(a.defaults)
        posonly = {x.arg for x in a.posonlyargs}
        req_posonly = [x.arg for i, x in enumerate(positional) if x.arg in posonly and i < n_req]
        if req_posonly:
            raise _err(where, f"{self.name!r}: {req_posonly} are positional-only; the sweep "
                       "passes every argument by keyword")
        named = [x for x in positional if x.arg not in posonly] + list(a.kwonlyargs)
        self.params = tuple(x.arg for x in named)
        self.required = tuple(
            [x.arg for i, x in enumerate(positional) if i < n_req]
            + [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None])
        for x in named:
            ann = x.annotation
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                text = ann.value.strip()  # a string annotation: "float"
            else:
                text = ann.id if isinstance(ann, ast.Name) else ""
            if text in _ANNOTATION_TYPES:
                self.arg_types[x.arg] = _ANNOTATION_TYPES[text]

    @classmethod
    def from_kernel(cls, table: Any, base: Path, sweep_name: str) -> _Func:
        """The function of a ``[kernel]`` table: an :class:`daskcl.ElementwiseKernel` built
        from it (nothing is compiled here; the build errors of its code come when it runs)."""
        from ..kernels._elementwise import ElementwiseKernel

        if not isinstance(table, dict):
            raise _err("kernel", "give a table with inputs, outputs and operation")
        bad = sorted(set(table) - set(_KERNEL_KEYS))
        if bad:
            raise _err("kernel", f"unknown keys {bad}; known: {list(_KERNEL_KEYS)}")
        missing = [k for k in ("inputs", "outputs", "operation") if k not in table]
        if missing:
            raise _err("kernel", f"{missing} must be given")
        for k in ("name", "inputs", "outputs", "operation", "preamble"):
            if k in table and not isinstance(table[k], str):
                raise _err(f"kernel.{k}", f"must be a string, got {table[k]!r}")
        lib = table.get("library", [])
        lib = [lib] if isinstance(lib, str) else lib
        if not isinstance(lib, list) or not all(isinstance(p, str) for p in lib):
            raise _err("kernel.library", "a directory or a list of directories (your own "
                       "library trees, relative to the spec's directory)")
        roots = [str((base / p).resolve()) for p in lib]
        for r in roots:
            if not Path(r).is_dir():
                raise _err("kernel.library", f"{r} is not a directory")
        name = table.get("name") or sweep_name or "kernel"
        try:
            kernel = ElementwiseKernel(table["inputs"], table["outputs"], table["operation"],
                                       name, preamble=table.get("preamble", ""),
                                       library=roots or None)
        except ValueError as exc:
            raise _err("kernel", str(exc)) from None
        f = cls.__new__(cls)
        f.name = f"[kernel] {name}"
        f.kind = "kernel"
        f.kernel = kernel
        order = list(kernel._order)
        f.params = tuple(n for _, n in order)
        f.required = f.params
        f.flags = ()
        f.arg_types = {n: (int, bool) if t == "int" else (int, float) for t, n in order}
        f._source, f._path, f._attr = None, "", ""
        return f

    def callable(self) -> Callable[..., Any]:
        """The function itself: for ``file.py:func`` this runs the file (once per process)."""
        if self.kind == "kernel":
            kernel = self.kernel

            def call(**kwargs: Any) -> Any:
                out = kernel(*(kwargs[n] for n in self.params))
                return out if isinstance(out, tuple) else (out,)

            return call
        if self.kind == "nmath":
            from .. import nmath

            return nmath.FUNCTIONS[self.name]
        mod = _load_source(self._path, self._source or "")
        fn = getattr(mod, self._attr, None)
        if not callable(fn):
            raise _err("sweep.function", f"{self.name!r}: no function {self._attr!r} there")
        return fn  # type: ignore[no-any-return]

    def loaded_inputs(self) -> frozenset[str]:
        """The files that loading a Python function's file read (after :meth:`callable`)."""
        if self.kind != "python":
            return frozenset()
        mod = _load_source(self._path, self._source or "")
        return frozenset(getattr(mod, "__daskcl_inputs__", ()))

    def warm_names(self) -> list[Any]:
        """What a worker builds before the first chunk: the nmath function's name, or the
        kernel itself (it pickles by its definition)."""
        if self.kind == "kernel":
            return [self.kernel]
        return [self.name] if self.kind == "nmath" else []


_SOURCE_MODULES: dict[str, types.ModuleType] = {}


def _load_source(path: str, source: str) -> types.ModuleType:
    """A sweep's Python file as a module, from the text shipped with the task (so workers on
    other hosts need not see the file); loaded once per process and text.  The files its
    loading read (its local modules, data read at import) are kept as ``__daskcl_inputs__``."""
    key = hashlib.sha256((path + "\0" + source).encode()).hexdigest()[:16]
    mod = _SOURCE_MODULES.get(key)
    if mod is None:
        mod = types.ModuleType(f"daskcl_sweep_{Path(path).stem}_{key}")
        mod.__file__ = path
        sys.modules[mod.__name__] = mod
        with inputs.recording() as seen:
            exec(compile(source, path, "exec"), mod.__dict__)
        seen.discard(path)      # its text is part of the identity already
        mod.__daskcl_inputs__ = frozenset(seen)  # type: ignore[attr-defined]
        _SOURCE_MODULES[key] = mod
    return mod


def _is_random(name: str) -> bool:
    from ..kernels import _random

    return name in _random.FUNCTIONS


# --- the GLM ------------------------------------------------------------------------------------


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
        from .. import glm

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
        envelope = None
        env = table.get("envelope")
        if env is not None:
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
            envelope = (points, width)
        path = base / table["data"]
        wanted = [table["response"], *preds,
                  *(table[k] for k in ("trials", "weights", "offset") if k in table)]
        data, lines = _read_csv(path, list(dict.fromkeys(wanted)), where)

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
        text = _text(_read_regular(p, "spec", "spec file"), p, "spec")
        try:
            spec = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SweepError(f"{p}: not valid TOML: {exc}") from exc
        except RecursionError:     # tomllib parses nested arrays and tables recursively
            raise SweepError(f"{p}: its arrays or inline tables are nested too deeply to "
                             "read (a spec nests a few levels)") from None
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
        args = tables.get("args", {})
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
        args = dict(args)
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
            _check_params(function, func, axes, args)
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
            from ..kernels._functions import FUNCTIONS, NmathFunction

            kernel = FUNCTIONS[self.function]
            if not isinstance(kernel, NmathFunction):  # generators are refused by the spec
                raise TypeError(f"{self.function} is not an elementwise function")
            out = [kernel.plain_source().text]
            if kernel.definition.tables:
                out += [lib.read(f"kernels/{p.name}")
                        for p in sorted((lib.root / "kernels").glob("*.cl"))]
            return out
        return [f"{p.relative_to(lib.root)}\0{p.read_text()}"
                for p in sorted(lib.root.rglob("*.cl"))]

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

    # -- evaluation ---------------------------------------------------------------------------

    def evaluate(self, index: tuple[int, ...]) -> dict[str, np.ndarray]:
        """The result arrays of one chunk, computed on this process's device (under the
        configuration the spec sets)."""
        if self.overrides:
            from .. import config

            with config.set(self.overrides):
                return self._evaluate(index)
        return self._evaluate(index)

    def _evaluate(self, index: tuple[int, ...]) -> dict[str, np.ndarray]:
        sl = self.chunk_slices(index)
        vals = [a.values[s] for a, s in zip(self.axes, sl)]
        shape = tuple(v.size for v in vals)
        if self.glm is not None:
            from ..glm import FactorialGrid

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
        results = out if self.func.kind == "kernel" else (out,)
        arrays = {}
        for name, res in zip(self.output_names, results):
            arr = np.asarray(res, dtype=np.float64)
            if arr.shape != shape:
                try:
                    arr = np.broadcast_to(arr, shape)
                except ValueError:
                    raise SweepError(f"{self.function} returned shape {arr.shape} for a chunk "
                                     f"of shape {shape}") from None
            arrays[name] = np.ascontiguousarray(arr)
        return arrays


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


def _check_params(function: str, f: _Func, axes: tuple[Axis, ...], args: dict[str, Any]
                  ) -> None:
    """Every axis and argument is a named parameter of the function, of its type; every
    required parameter is given."""
    given = [a.name for a in axes] + list(args)
    dup = sorted({n for n in given if given.count(n) > 1})
    if dup:
        raise _err("args", f"{dup} given both as an axis and in [args]")
    for n in given:  # a function taking **kwargs too: only its named parameters
        if n not in f.params:
            raise _err(f"axis or arg {n!r}", f"{function} has no parameter {n!r}"
                       f"{_suggest(n, f.params)}; its parameters are {list(f.params)}")
    missing = [n for n in f.required if n not in given]
    if missing:
        raise _err("axes/args", f"{function} needs {missing} (as an axis or in [args])")
    for n in f.flags:
        if n in args and not isinstance(args[n], bool):
            raise _err(f"args.{n}", f"is a flag: true or false, got {args[n]!r}")
        if n in [a.name for a in axes]:
            raise _err(f"axis {n!r}", "is a flag (true/false); give it in [args]")
    for n, v in args.items():
        want = f.arg_types.get(n)
        if want is not None and not _is_type(v, want):
            names = " or ".join({int: "an integer", float: "a number", bool: "true/false",
                                 str: "a string"}[t] for t in want if t is not int
                                or float not in want)
            raise _err(f"args.{n}", f"{function} takes {names} here, got {v!r}")


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


_POSTERIORS: dict[str, Any] = {}


def _posterior(sweep: Sweep) -> Any:
    """The sweep's Posterior, built once per process (its device data stays uploaded)."""
    key = sweep.identity()
    post = _POSTERIORS.get(key)
    if post is None:
        assert sweep.glm is not None
        post = _POSTERIORS[key] = sweep.glm.posterior()
    return post


def listing(names: Sequence[str], n: int = 5) -> str:
    """The first ``n`` names, comma-separated, and how many more there are."""
    shown = ", ".join(names[:n])
    return shown + (f" and {len(names) - n} more" if len(names) > n else "")


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
