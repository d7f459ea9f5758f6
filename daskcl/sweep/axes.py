# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep's axes: :class:`Axis`, :func:`parse_axis`, and the readers of the files a spec names
(``.npy``, ``.txt`` and ``.csv`` axes, GLM data, Python functions) with their limits.

Errors name the file, the column and the line, never what the file holds.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SweepError

__all__ = ["Axis", "parse_axis", "read_csv_columns"]

_AXIS_KINDS = ("values", "linspace", "logspace", "arange", "file")
_MAX_AXIS = 2**27  # values of one axis (1 GiB of coordinates, held by every task)
_MAX_GLM_ROWS = 2**24  # rows of GLM data (shipped with every task; each point passes over them)
_MAX_POINTS = 2**50  # points of a sweep (8 PiB of float64 per output)
_MAX_FILE_BYTES = 2**31  # an axis, data or function file read by a spec


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


def _err(where: str, what: str) -> SweepError:
    return SweepError(f"{where}: {what}")


def _suggest(name: str, choices: Any) -> str:
    close = difflib.get_close_matches(name, list(choices), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _read_regular(path: Path, where: str, what: str = "file", limit: int = _MAX_FILE_BYTES,
                  hint: str = "") -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (a directory, FIFO or
    device is refused; opening never blocks).  Errors name the path and the reason (and
    ``hint`` for a file too large), never the contents."""
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
        if st.st_size > limit:
            raise _err(where, f"{what} {str(path)!r} is {_human(st.st_size)}; at most "
                       f"{_human(limit)} are read{hint}")
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
              ) -> tuple[dict[str, np.ndarray], Sequence[int]]:
    """:func:`read_csv_columns`, and the line of the file each data row was read from; a file
    of more than ``max_rows`` rows is refused before they are parsed."""
    import array
    import csv
    import io

    data = _read_regular(path, where, "data file" if where == "glm" else "file")
    if max_rows is not None:
        # lines holding more than white space (the header among them): at least the rows
        rows = _runs(data.translate(None, b" \t\r\x0b\x0c"), b"\n") - 1
        if rows > max_rows:
            most = (f"GLM data have at most {max_rows} rows (a pass over them is each grid "
                    "point's cost)" if where == "glm" else f"an axis has at most {max_rows} values")
            raise _err(where, f"{path.name} holds {rows} rows; {most}")
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
    out = {c: array.array("d") for c in columns}     # 8 bytes a value, not a float object's
    lines = array.array("q")
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
    return {c: np.frombuffer(v, dtype=np.float64).copy() for c, v in out.items()}, lines


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
        except Exception as exc:    # a hostile header fails in the parser's ways too (tokenize's
            # TokenError, RecursionError); numpy's messages may quote it: name only the type
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
    except Exception:       # whatever the header's parser makes of it
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


def _arange(v: Any, where: str) -> np.ndarray:
    """``numpy.arange`` of ``[stop]``, ``[start, stop]`` or ``[start, stop, step]``, its size
    checked before it is allocated."""
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
    return values


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
        values = _arange(v, where)
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


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
