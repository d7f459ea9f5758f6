# SPDX-License-Identifier: GPL-2.0-or-later
"""The annotated OpenCL C kernel library: annotations, dependency sort, index, minimal subsets.

The library lives in ``cl/`` (shipped inside the wheel as ``daskcl/cl``)::

    OPENCL.cl      layer 0, always first
    shims/         layer 1, always emitted whole
    nmath/         layer 2, only the units a kernel needs; nmath/kernel_dependency_index.tsv
    kernels/       layer 3, __kernel entry points naming what they call (@depends_nmath)

Every unit in ``shims/`` and ``nmath/`` opens with ``// @provides: ...`` and ``// @depends: ...``.
:meth:`Library.sort` orders them in passes (a file is emitted once everything it depends on has
been); :meth:`Library.build_index` records, per stem, its transitive dependencies in load order;
:meth:`Library.program_source` expands a kernel's names through that index (no sort at run
time) and concatenates the layers.

Example
-------
>>> from daskcl.runtime.library import Library
>>> lib = Library()
>>> src = lib.program_source(["dnorm"], "__kernel void k(__global double *x) {}")
>>> "nmath/dnorm.cl" in src.files
True
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import config
from ..errors import (
    DependencyCycleError,
    LibraryError,
    MissingDependencyError,
    StaleIndexError,
)

__all__ = [
    "INDEX_NAME",
    "Kernel",
    "Library",
    "ProgramSource",
    "Unit",
    "default_root",
    "get_library",
    "parse_annotations",
]

INDEX_NAME = "kernel_dependency_index.tsv"
_LAYERS = ("shims", "nmath")
_TAG = re.compile(r"^//\s*@([A-Za-z_]+)\s*:(.*)$")


def default_root() -> Path:
    """The kernel library shipped with daskcl.

    ``daskcl/cl`` in an installed wheel; ``cl/`` beside the package in a source checkout.
    The config key ``library`` (``DASKCL_LIBRARY``) overrides both (a directory laid out like
    ``cl/``).
    """
    chosen: Path | None = config.get("library")
    if chosen is not None:
        return chosen
    here = Path(__file__).resolve().parents[1]          # the daskcl package
    for cand in (here / "cl", here.parent / "cl"):
        if (cand / "OPENCL.cl").is_file():
            return cand
    raise LibraryError(
        f"the kernel library was not found in {here / 'cl'} or {here.parent / 'cl'}; "
        "reinstall daskcl or set DASKCL_LIBRARY to a directory laid out like cl/"
    )


def parse_annotations(text: str) -> dict[str, list[str]]:
    """Read the ``// @tag: a, b`` lines of the comment block that opens a file.

    The block ends at the first line that is not a ``//`` comment.  Values are split on commas
    and stripped; an empty value gives an empty list.
    """
    tags: dict[str, list[str]] = {}
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("//"):
            break
        m = _TAG.match(s)
        if m:
            values = [v.strip() for v in m.group(2).split(",") if v.strip()]
            tags.setdefault(m.group(1), []).extend(values)
    return tags


@dataclass(frozen=True)
class Unit:
    """One annotated file of layer 1 (``shims``) or layer 2 (``nmath``)."""

    stem: str
    layer: str
    path: Path
    provides: tuple[str, ...]
    depends: tuple[str, ...]

    @property
    def name(self) -> str:
        """The file's name relative to the library root, e.g. ``nmath/pnorm.cl``."""
        return f"{self.layer}/{self.stem}.cl"


@dataclass(frozen=True)
class Kernel:
    """A layer-3 file: ``__kernel`` entry points and the nmath names they call."""

    stem: str
    path: Path
    depends_nmath: tuple[str, ...]


@dataclass(frozen=True)
class ProgramSource:
    """An assembled program: its text and the library files in it, in order."""

    text: str
    files: tuple[str, ...]
    #: (first line, file) of each part, 1-based, to map build-log lines back to files
    line_map: tuple[tuple[int, str], ...] = field(default=(), compare=False)

    def locate(self, line: int) -> tuple[str, int]:
        """The library file and the line within it of line ``line`` of the program."""
        where = ("<program>", line)
        for start, name in self.line_map:
            if start <= line:
                where = (name, line - start + 1)
        return where


class Library:
    """A kernel library directory.

    Parameters
    ----------
    root
        A directory laid out like ``cl/`` (``OPENCL.cl``, ``shims/``, ``nmath/``, ``kernels/``);
        the library shipped with daskcl by default.

    Raises
    ------
    LibraryError
        A unit lacks its annotations, or two files share a stem.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()
        if not (self.root / "OPENCL.cl").is_file():
            raise LibraryError(f"{self.root} is not a kernel library: it has no OPENCL.cl")
        self.units: dict[str, Unit] = {}
        for layer in _LAYERS:
            for path in sorted((self.root / layer).glob("*.cl")):
                tags = parse_annotations(path.read_text())
                for required in ("provides", "depends"):
                    if required not in tags:
                        raise LibraryError(
                            f"{layer}/{path.name} has no '// @{required}:' line in its opening "
                            "comment block (write '// @depends:' with nothing after it for none)"
                        )
                if path.stem in self.units:
                    raise LibraryError(
                        f"two units share the stem {path.stem!r}: "
                        f"{self.units[path.stem].name} and {layer}/{path.name}"
                    )
                self.units[path.stem] = Unit(
                    path.stem, layer, path, tuple(tags["provides"]), tuple(tags["depends"])
                )
        #: assembled programs, by (names, kernel source, kernel name): a library does not change
        #: once read, and kernels are assembled on every call of the functions that use them
        self._assembled: dict[tuple[tuple[str, ...], str, str], ProgramSource] = {}
        self.symbols: dict[str, str] = {}
        for unit in self.units.values():
            for sym in unit.provides:
                self.symbols.setdefault(sym, unit.stem)

    # -- sorting and the index ----------------------------------------------------------------

    @property
    def index_path(self) -> Path:
        return self.root / "nmath" / INDEX_NAME

    def _check_known(self) -> None:
        for unit in self.units.values():
            missing = [d for d in unit.depends if d not in self.units]
            if missing:
                raise MissingDependencyError(
                    f"{unit.name} depends on {', '.join(missing)}, which no file in "
                    f"{self.root}/shims or {self.root}/nmath provides (a stem is a file name "
                    "without .cl)"
                )
            if unit.layer == "shims":
                up = [d for d in unit.depends if self.units[d].layer != "shims"]
                if up:
                    raise LibraryError(
                        f"{unit.name} is a shim but depends on nmath units {', '.join(up)}; "
                        "layer 1 may only depend on layer 1"
                    )

    def sort(self, verbose: bool = False) -> list[str]:
        """All stems in load order: the shims, then the nmath units, each in passes.

        A pass emits, in name order, every file whose dependencies have all been emitted.

        Parameters
        ----------
        verbose
            Print each pass, ``Pass 1: emitting a.cl, b.cl``.

        Raises
        ------
        MissingDependencyError
            A file depends on a stem that does not exist.
        DependencyCycleError
            Some files can never be emitted; the message names each and what it still waits for.
        """
        self._check_known()
        order: list[str] = []
        done: set[str] = set()
        npass = 0
        for layer in _LAYERS:
            pending = sorted(s for s, u in self.units.items() if u.layer == layer)
            while pending:
                ready = [s for s in pending if set(self.units[s].depends) <= done]
                if not ready:
                    stuck = "; ".join(
                        f"{self.units[s].name} waits for "
                        + ", ".join(sorted(set(self.units[s].depends) - done))
                        for s in pending
                    )
                    raise DependencyCycleError(
                        f"dependency cycle: {len(pending)} file(s) can never be emitted "
                        f"after pass {npass}: {stuck}. Break the cycle by splitting a unit into "
                        "a cycle-free core and a dependent part."
                    )
                npass += 1
                if verbose:
                    print(f"Pass {npass}: emitting {', '.join(s + '.cl' for s in ready)}")
                order.extend(ready)
                done.update(ready)
                pending = [s for s in pending if s not in done]
        return order

    def build_index(self, verbose: bool = False) -> list[tuple[str, tuple[str, ...]]]:
        """Each stem, in load order, with its transitive dependencies in load order."""
        order = self.sort(verbose=verbose)
        pos = {s: i for i, s in enumerate(order)}
        closure: dict[str, set[str]] = {}
        for s in order:
            acc: set[str] = set()
            for d in self.units[s].depends:
                acc.add(d)
                acc |= closure[d]
            closure[s] = acc
        return [(s, tuple(sorted(closure[s], key=pos.__getitem__))) for s in order]

    @staticmethod
    def format_index(rows: Iterable[tuple[str, Sequence[str]]]) -> str:
        lines = ["stem\tall_depends"] + [f"{s}\t{','.join(deps)}" for s, deps in rows]
        return "\n".join(lines) + "\n"

    def write_index(self, verbose: bool = False) -> Path:
        """Regenerate ``nmath/kernel_dependency_index.tsv`` from the annotations."""
        text = self.format_index(self.build_index(verbose=verbose))
        tmp = self.index_path.with_suffix(".tsv.tmp")
        tmp.write_text(text)
        os.replace(tmp, self.index_path)
        _read_index.cache_clear()
        return self.index_path

    def check_index(self) -> list[str]:
        """The differences between the index on disk and the annotations (empty if current)."""
        want = self.format_index(self.build_index()).splitlines()
        have = self.index_path.read_text().splitlines() if self.index_path.exists() else []
        return list(difflib.unified_diff(have, want, str(self.index_path), "annotations", lineterm=""))

    def read_index(self) -> dict[str, tuple[str, ...]]:
        """The index on disk: stem -> all_depends, in load order (dict order is load order)."""
        if not self.index_path.exists():
            raise StaleIndexError(
                f"{self.index_path} does not exist; run 'daskcl index build'"
            )
        return _read_index(str(self.index_path), self.index_path.stat().st_mtime_ns)

    # -- minimal subsets ------------------------------------------------------------------------

    def resolve(self, names: Iterable[str]) -> list[str]:
        """The stems a kernel calling ``names`` needs, in load order, shims first.

        ``names`` are stems or provided symbols.  All shims are included (layer 1 is emitted
        whole); of the nmath units only the named ones and their transitive dependencies.

        Raises
        ------
        MissingDependencyError
            A name is neither a stem nor a symbol of the library.
        StaleIndexError
            The index lacks a stem the library has.
        """
        index = self.read_index()
        want: set[str] = set()
        for name in names:
            stem = name if name in self.units else self.symbols.get(name)
            if stem is None:
                raise MissingDependencyError(
                    f"no unit of {self.root} is named or provides {name!r}"
                )
            if stem not in index:
                raise StaleIndexError(
                    f"{stem} is not in {self.index_path}; run 'daskcl index build'"
                )
            want.add(stem)
            want.update(index[stem])
        return [
            s for s in index
            if s in self.units and (self.units[s].layer == "shims" or s in want)
        ]

    def read(self, name: str) -> str:
        """The text of the library file ``name`` (e.g. ``kernels/elementwise.cl``), read once."""
        return _read_text(str(self.root / name))

    def kernel(self, stem: str) -> Kernel:
        """The kernel file ``kernels/<stem>.cl``."""
        path = self.root / "kernels" / f"{stem}.cl"
        if not path.is_file():
            raise LibraryError(f"no kernel file {path}")
        tags = parse_annotations(self.read(f"kernels/{stem}.cl"))
        return Kernel(stem, path, tuple(tags.get("depends_nmath", ())))

    def program_source(
        self, names: Iterable[str], kernel_source: str, kernel_name: str = "<kernel>"
    ) -> ProgramSource:
        """Layer 0, layer 1, the minimal nmath subset for ``names``, then ``kernel_source``."""
        key = (tuple(names), kernel_source, kernel_name)
        hit = self._assembled.get(key)
        if hit is None:
            hit = self._assembled.setdefault(key, self._assemble(key[0], kernel_source, kernel_name))
        return hit

    def _assemble(self, names: tuple[str, ...], kernel_source: str, kernel_name: str) -> ProgramSource:
        stems = self.resolve(names)
        parts: list[tuple[str, str]] = [("OPENCL.cl", self.read("OPENCL.cl"))]
        parts += [(self.units[s].name, _read_text(str(self.units[s].path))) for s in stems]
        parts.append((kernel_name, kernel_source))
        chunks: list[str] = []
        line_map: list[tuple[int, str]] = []
        line = 1
        for name, text in parts:
            if not text.endswith("\n"):
                text += "\n"
            chunks.append(f"// ==== {name} ====\n")
            line += 1
            line_map.append((line, name))
            chunks.append(text)
            line += text.count("\n")
        return ProgramSource("".join(chunks), tuple(n for n, _ in parts), tuple(line_map))

    def kernel_program_source(self, stem: str) -> ProgramSource:
        """The program for the kernel file ``kernels/<stem>.cl``."""
        k = self.kernel(stem)
        return self.program_source(k.depends_nmath, self.read(f"kernels/{stem}.cl"), f"kernels/{stem}.cl")

    def extract(
        self, dest: str | os.PathLike[str], names: Iterable[str] = (), kernels: Iterable[str] = ()
    ) -> Library:
        """Copy the subset of the library that ``names`` and ``kernels`` need into ``dest``.

        The copy holds ``OPENCL.cl``, every shim, the needed nmath units, the named kernel files
        and an index restricted to those units; it is itself a :class:`Library` (so a downstream
        package can ship only that) and passes ``daskcl index check``.
        """
        dest = Path(dest)
        kernel_files = [self.kernel(k) for k in kernels]
        wanted = list(names) + [n for k in kernel_files for n in k.depends_nmath]
        stems = set(self.resolve(wanted))
        (dest / "shims").mkdir(parents=True, exist_ok=True)
        (dest / "nmath").mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.root / "OPENCL.cl", dest / "OPENCL.cl")
        for s in stems:
            shutil.copy2(self.units[s].path, dest / self.units[s].name)
        if kernel_files:
            (dest / "kernels").mkdir(exist_ok=True)
            for k in kernel_files:
                shutil.copy2(k.path, dest / "kernels" / k.path.name)
        rows = [(s, d) for s, d in self.read_index().items() if s in stems]
        (dest / "nmath" / INDEX_NAME).write_text(self.format_index(rows))
        return Library(dest)


@functools.lru_cache(maxsize=16)
def _read_index(path: str, mtime_ns: int) -> dict[str, tuple[str, ...]]:
    lines = Path(path).read_text().splitlines()
    if not lines or lines[0] != "stem\tall_depends":
        raise StaleIndexError(f"{path} does not start with the header 'stem<TAB>all_depends'")
    out: dict[str, tuple[str, ...]] = {}
    for n, line in enumerate(lines[1:], start=2):
        stem, sep, deps = line.partition("\t")
        if not sep:
            raise StaleIndexError(f"{path}:{n}: expected 'stem<TAB>all_depends', got {line!r}")
        out[stem] = tuple(d for d in deps.split(",") if d)
    return out


@functools.lru_cache(maxsize=512)
def _read_text(path: str) -> str:
    return Path(path).read_text()


@functools.lru_cache(maxsize=4)
def _library(root: str) -> Library:
    return Library(root)


def get_library(root: str | os.PathLike[str] | None = None) -> Library:
    """The (cached) :class:`Library` at ``root`` (the shipped library by default)."""
    return _library(str(Path(root) if root is not None else default_root()))
