# SPDX-License-Identifier: GPL-2.0-or-later
"""The annotated OpenCL C kernel library: annotations, dependency sort, index, minimal subsets.

The library lives in ``cl/`` (shipped inside the wheel as ``daskcl/cl``)::

    OPENCL.cl      layer 0, always first
    shims/         layer 1, always emitted whole
    nmath/         layer 2, only the units a kernel needs; nmath/kernel_dependency_index.tsv
    OPENCL_END.cl  the close of layer 0, after the units (what OPENCL.cl set for them only)
    kernels/       layer 3, __kernel entry points naming what they call (@depends_nmath)

Every unit in ``shims/`` and ``nmath/`` opens with ``// @provides: ...`` and ``// @depends: ...``.
:meth:`Library.sort` orders them in passes (a file is emitted once everything it depends on has
been); :meth:`Library.build_index` records, per stem, its transitive dependencies in load order;
:meth:`Library.program_source` expands a kernel's names through that index (no sort at run
time) and concatenates the layers.

Beside that *base* library, a program may draw on *unit trees* of the user's own: directories
of annotated ``.cl`` units (directly in the directory, no subdirectories), each with its own
``kernel_dependency_index.tsv`` listing its stems.  Their units may depend on the base's units
and on units of earlier trees; they are loaded after the base, tree by tree.
:func:`get_library` combines a base and trees; the combined :class:`Library` has the same
interface as a single one.

Example
-------
>>> from daskcl.runtime.library import Library
>>> lib = Library()
>>> src = lib.program_source(["dnorm"], "__kernel void k(__global double *x) {}")
>>> "nmath/dnorm.cl" in src.files
True
>>> lib.find_names("power = pnt(c, df, ncp, 1, 0) + exp(-x)")
('pnt',)
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import stat
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn, TypeAlias

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
    "closest_names",
    "default_root",
    "get_library",
    "parse_annotations",
    "split_roots",
]

#: the stem suffix of a unit's ``accuracy = "best"`` variant (cl/README.md)
_BEST = "_best"

_StrPath: TypeAlias = "str | os.PathLike[str]"

INDEX_NAME = "kernel_dependency_index.tsv"
_LAYERS = ("shims", "nmath")
_TAG = re.compile(r"^//\s*@([A-Za-z_]+)\s*:(.*)$")
#: the annotations of a unit (``@source`` is free text)
_UNIT_TAGS = ("provides", "depends", "source")
_STEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_Rows: TypeAlias = "list[tuple[str, tuple[str, ...]]]"


def default_root() -> Path:
    """The kernel library shipped with daskcl.

    ``daskcl/cl`` in an installed wheel; ``cl/`` beside the package in a source checkout.
    The config key ``library`` (``DASKCL_LIBRARY``) overrides both (a directory laid out like
    ``cl/``).
    """
    chosen: Path | None = config.get("library")
    if chosen is not None:
        return chosen
    return _shipped_root()


@functools.cache
def _shipped_root() -> Path:
    """The shipped library's directory (looked up once: every kernel call asks for it)."""
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
    """One annotated file: of layer 1 (``shims``), of layer 2 (``nmath``), or of a unit tree.

    A unit of a tree has ``layer`` ``"tree"`` and ``tree`` its directory (absolute); it is
    emitted, as layer 2 is, only where a program needs it.
    """

    stem: str
    layer: str
    path: Path
    provides: tuple[str, ...]
    depends: tuple[str, ...]
    tree: Path | None = None

    @property
    def name(self) -> str:
        """How programs and messages name the file: relative to the library root for the base
        (``nmath/pnorm.cl``), the absolute path for a unit of a tree."""
        return str(self.path) if self.tree is not None else f"{self.layer}/{self.stem}.cl"


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
    """A kernel library directory, with any unit trees of the user's own beside it.

    Parameters
    ----------
    root
        The base: a directory laid out like ``cl/`` (``OPENCL.cl``, ``shims/``, ``nmath/``,
        ``kernels/``); the library shipped with daskcl by default.
    trees
        Unit trees, in load order: directories holding annotated ``.cl`` units directly (files
        whose names start with ``.`` are skipped) and their ``kernel_dependency_index.tsv``.
        Their units may depend on the base's units and on those of earlier trees.

    Raises
    ------
    LibraryError
        A unit lacks its annotations or has a stem that is not a C identifier; two files share
        a stem; two units provide one symbol, or a symbol is another unit's stem; a tree is not
        a directory, has no units, or is itself a library (has ``OPENCL.cl``).

    Notes
    -----
    The dependencies of a tree's units are checked, and its index compared with them, when the
    index is first read (:meth:`read_index`, so at the first :meth:`program_source`).  Files
    are read once: :func:`get_library` gives a fresh library when a tree's files change.
    """

    def __init__(self, root: _StrPath | None = None, trees: Iterable[_StrPath] = ()) -> None:
        self.root = Path(root) if root is not None else default_root()
        if not (self.root / "OPENCL.cl").is_file():
            what = ("it does not exist" if not self.root.exists() else
                    "it is not a directory" if not self.root.is_dir() else "it has no OPENCL.cl")
            if self.root.is_dir() and any(self.root.glob("*.cl")):
                what += (" (a directory of annotated units of your own is a unit tree: give it "
                         "as a kernel's library=, beside the shipped library)")
            chosen = config.get("library")
            given = (" (the config key library, DASKCL_LIBRARY)" if chosen is not None
                     and _absolute(chosen) == _absolute(self.root) else "")
            raise LibraryError(f"{self.root}{given} is not a kernel library: {what}")
        self.trees: tuple[Path, ...] = tuple(_absolute(t) for t in trees)
        #: the base, then the trees, in load order
        self.roots: tuple[Path, ...] = (self.root, *self.trees)
        self.units: dict[str, Unit] = {}
        self.symbols: dict[str, str] = {}
        #: the text of each unit of a tree, by unit name, as read with its annotations
        self._texts: dict[str, str] = {}
        for layer in _LAYERS:
            for path in sorted((self.root / layer).glob("*.cl")):
                self._add(path, layer, None, _unit_text(path))
        for tree in self.trees:
            paths = _tree_files(tree)
            for path in paths:
                if not _STEM.match(path.stem):
                    raise LibraryError(
                        f"{path}: a unit's stem (its file name without .cl) must be a C "
                        "identifier (letters, digits and _, not first a digit): @depends "
                        "lists and the index name units by it"
                    )
                text = _unit_text(path)
                _check_tags(path, text)
                self._add(path, "tree", tree, text)
                self._texts[str(path)] = text
        #: assembled programs, by (names, kernel source, kernel name): a library does not change
        #: once read, and kernels are assembled on every call of the functions that use them
        self._assembled: dict[tuple[tuple[str, ...], str, str, bool], ProgramSource] = {}
        #: the combined index, with the stamps of the index files it was read from
        self._combined: tuple[tuple[object, ...], dict[str, tuple[str, ...]]] | None = None

    def _add(self, path: Path, layer: str, tree: Path | None, text: str) -> None:
        """Read the annotations of one file and register its stem and symbols."""
        shown = str(path) if tree is not None else f"{layer}/{path.name}"
        tags = parse_annotations(text)
        for required in ("provides", "depends"):
            if required not in tags:
                raise LibraryError(
                    f"{shown} has no '// @{required}:' line in its opening "
                    "comment block (write '// @depends:' with nothing after it for none)"
                )
        stem = path.stem
        if stem in self.units:
            raise LibraryError(
                f"two units share the stem {stem!r}: {self.units[stem].name} and {shown}; a "
                "stem names one file across the library and its unit trees: rename one"
            )
        if stem in self.symbols:
            self._clash(stem, self.units[self.symbols[stem]].name, shown)
        unit = Unit(stem, layer, path, tuple(tags["provides"]), tuple(tags["depends"]), tree)
        for sym in unit.provides:
            owner = self.symbols.get(sym)
            if owner is not None and owner != stem:
                raise LibraryError(
                    f"two units provide the symbol {sym!r}: {self.units[owner].name} and "
                    f"{shown}; a program defines each symbol once: remove it from one "
                    "@provides (and rename the function there)"
                )
            if sym in self.units and sym != stem:
                self._clash(sym, shown, self.units[sym].name)
        self.units[stem] = unit
        for sym in unit.provides:
            self.symbols.setdefault(sym, stem)

    @staticmethod
    def _clash(name: str, provider: str, file: str) -> NoReturn:
        raise LibraryError(
            f"the name {name!r} is a symbol of {provider} and the stem of {file}: a name given "
            "to program_source or @depends_nmath must mean one unit: rename the file or the "
            "symbol"
        )

    def _describe(self) -> str:
        if not self.trees:
            return str(self.root)
        return f"{self.root} or its unit trees {', '.join(map(str, self.trees))}"

    def _root_of(self, root: _StrPath | None) -> Path:
        """The root of this library that ``root`` names (the base for None)."""
        if root is None:
            return self.root
        want = _absolute(root)
        for r in self.roots:
            if _absolute(r) == want:
                return r
        raise LibraryError(
            f"{root} is not a root of this library (its roots: "
            f"{', '.join(map(str, self.roots))})"
        )

    def _tree_stems(self, tree: Path) -> list[str]:
        return [s for s, u in self.units.items() if u.tree == tree]

    # -- sorting and the index ----------------------------------------------------------------

    @property
    def index_path(self) -> Path:
        """The base's index, ``nmath/kernel_dependency_index.tsv``."""
        return self.root / "nmath" / INDEX_NAME

    def index_file(self, root: _StrPath | None = None) -> Path:
        """The index file of ``root``, one of :attr:`roots` (the base by default)."""
        r = self._root_of(root)
        return self.index_path if r == self.root else r / INDEX_NAME

    def index_command(self, root: _StrPath | None = None) -> str:
        """The command that writes the index of ``root`` (the base by default): for a tree,
        it names the base where that is not the default one, and the trees before it."""
        r = self._root_of(root)
        try:
            usual = _absolute(self.root) == _absolute(default_root())
        except LibraryError:
            usual = False
        if r == self.root:
            return "daskcl index build" + ("" if usual else f" {self.root}")
        dirs = ([] if usual else [self.root]) + list(self.trees[: self.trees.index(r) + 1])
        return "daskcl index build " + " ".join(map(str, dirs))

    def _missing(self, unit: Unit, missing: Sequence[str], where: str) -> MissingDependencyError:
        """The error for ``unit``'s dependencies ``missing``, with what is known of each."""
        hints = []
        for d in missing:
            other = self.units.get(d)
            if other is not None and other.tree is not None:
                hints.append(f"{d} is a unit of the tree {other.tree}, "
                             + ("and the library may not depend on its unit trees"
                                if unit.tree is None else "which comes later among the roots: "
                                "give it before " + str(unit.tree)))
            elif other is not None:
                hints.append(f"{d} is not in {self.index_path}: run '{self.index_command()}'")
            elif d in self.symbols:
                hints.append(f"{d} is a symbol of {self.units[self.symbols[d]].name}: @depends "
                             "names stems")
            else:
                close = closest_names(d, self.units)
                if close:
                    hints.append(f"did you mean {' or '.join(close)}?")
        return MissingDependencyError(
            f"{unit.name} depends on {', '.join(missing)}, which no file in {where} provides "
            "(a stem is a file name without .cl)" + "".join(f"; {h}" for h in hints)
        )

    def _check_known(self) -> None:
        base = {s for s, u in self.units.items() if u.tree is None}
        for unit in self.units.values():
            if unit.tree is not None:
                continue
            missing = [d for d in unit.depends if d not in base]
            if missing:
                raise self._missing(unit, missing, f"{self.root}/shims or {self.root}/nmath")
            if unit.layer == "shims":
                up = [d for d in unit.depends if self.units[d].layer != "shims"]
                if up:
                    raise LibraryError(
                        f"{unit.name} is a shim but depends on nmath units {', '.join(up)}; "
                        "layer 1 may only depend on layer 1"
                    )

    def _check_tree_known(self, tree: Path, known: Collection[str]) -> None:
        own = set(self._tree_stems(tree))
        for s in own:
            unit = self.units[s]
            missing = [d for d in unit.depends if d not in known and d not in own]
            if missing:
                before = self.trees[: self.trees.index(tree)]
                where = " or ".join([str(self.root), *map(str, before), str(tree)])
                raise self._missing(unit, missing, where)

    def _passes(self, pending: list[str], done: set[str], order: list[str], npass: int,
                verbose: bool) -> int:
        """Emit ``pending`` in passes after ``done``; append to ``order``; the last pass."""
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
        return npass

    def sort(self, verbose: bool = False) -> list[str]:
        """All stems in load order: the shims, the nmath units, then each tree's units.

        A pass emits, in name order, every file whose dependencies have all been emitted.

        Parameters
        ----------
        verbose
            Print each pass, ``Pass 1: emitting a.cl, b.cl``.

        Raises
        ------
        MissingDependencyError
            A file depends on a stem that does not exist (or, for a tree, that comes later).
        DependencyCycleError
            Some files can never be emitted; the message names each and what it still waits for.
        """
        order, npass = self._base_order(verbose)
        done = set(order)
        for tree in self.trees:
            self._check_tree_known(tree, done)
            npass = self._passes(self._tree_stems(tree), done, order, npass, verbose)
        return order

    def _base_order(self, verbose: bool) -> tuple[list[str], int]:
        """The base's stems in load order, and the number of passes that took."""
        self._check_known()
        order: list[str] = []
        done: set[str] = set()
        npass = 0
        for layer in _LAYERS:
            pending = [s for s, u in self.units.items() if u.tree is None and u.layer == layer]
            npass = self._passes(sorted(pending), done, order, npass, verbose)
        return order, npass

    @staticmethod
    def _closures(order: Sequence[str], depends: dict[str, tuple[str, ...]],
                  before: dict[str, tuple[str, ...]]) -> _Rows:
        """The rows of ``order``: each stem's transitive dependencies, in the load order of
        ``before`` (stems already indexed, with theirs) then ``order``."""
        pos = {s: i for i, s in enumerate([*before, *order])}
        closure: dict[str, set[str]] = {}
        for s in order:
            acc: set[str] = set()
            for d in depends[s]:
                acc.add(d)
                acc.update(before[d] if d in before else closure[d])
            closure[s] = acc
        return [(s, tuple(sorted(closure[s], key=pos.__getitem__))) for s in order]

    def _base_rows(self, verbose: bool = False) -> _Rows:
        order, _ = self._base_order(verbose)
        return self._closures(order, {s: self.units[s].depends for s in order}, {})

    def _tree_rows(self, tree: Path, before: dict[str, tuple[str, ...]],
                   verbose: bool = False) -> _Rows:
        """The index rows of ``tree``, resolved against ``before`` (the rows of everything
        loaded before it)."""
        self._check_tree_known(tree, before)
        order: list[str] = []
        self._passes(self._tree_stems(tree), set(before), order, 0, verbose)
        return self._closures(order, {s: self.units[s].depends for s in order}, before)

    def _rows_of(self, root: Path, verbose: bool = False) -> _Rows:
        """What the index of ``root`` should hold: the base's from its annotations; a tree's
        from its annotations, against the base's index on disk and the trees before it."""
        if root == self.root:
            return self._base_rows(verbose)
        before = dict(self._base_index())
        for tree in self.trees:
            rows = self._tree_rows(tree, before, verbose and tree == root)
            if tree == root:
                return rows
            before.update(rows)
        raise AssertionError(root)      # _root_of returned a root of this library

    def build_index(self, verbose: bool = False) -> list[tuple[str, tuple[str, ...]]]:
        """Each stem, in load order, with its transitive dependencies in load order: the
        base's rows, then each tree's, all from the annotations (:meth:`sort`)."""
        order = self.sort(verbose=verbose)
        return self._closures(order, {s: self.units[s].depends for s in order}, {})

    @staticmethod
    def format_index(rows: Iterable[tuple[str, Sequence[str]]]) -> str:
        """The text of an index file holding ``rows``."""
        lines = ["stem\tall_depends"] + [f"{s}\t{','.join(deps)}" for s, deps in rows]
        return "\n".join(lines) + "\n"

    def write_index(self, verbose: bool = False, root: _StrPath | None = None) -> Path:
        """Regenerate the index of ``root`` from the annotations and return its path.

        Parameters
        ----------
        verbose
            Print each pass of the sort.
        root
            One of :attr:`roots`: the base (by default; ``nmath/kernel_dependency_index.tsv``)
            or a tree (its ``kernel_dependency_index.tsv``, resolved against the base's index
            on disk and the trees before it).
        """
        r = self._root_of(root)
        path = self.index_file(r)
        text = self.format_index(self._rows_of(r, verbose))
        tmp = path.with_suffix(".tsv.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
        _read_index.cache_clear()
        self._combined = None
        return path

    def check_index(self, root: _StrPath | None = None) -> list[str]:
        """The differences between the index of ``root`` (the base by default) on disk and
        its annotations, as a unified diff (empty if current)."""
        r = self._root_of(root)
        path = self.index_file(r)
        want = self.format_index(self._rows_of(r)).splitlines()
        have = (_read_file(path).decode(errors="replace").splitlines()
                if path.exists() else [])
        return list(difflib.unified_diff(have, want, str(path), "annotations", lineterm=""))

    def _base_index(self) -> dict[str, tuple[str, ...]]:
        if not self.index_path.exists():
            raise StaleIndexError(
                f"{self.index_path} does not exist; run '{self.index_command()}'"
            )
        return _read_index(str(self.index_path), self.index_path.stat().st_mtime_ns)

    def read_index(self) -> dict[str, tuple[str, ...]]:
        """The index: stem -> all_depends, in load order (dict order is load order).

        The base's index as it is on disk, then each tree's, which is checked against the
        tree's annotations (a tree is small; the base is checked by ``daskcl index check``).

        Raises
        ------
        StaleIndexError
            An index file is missing, or a tree's does not match its annotations; the message
            gives the command that rewrites it.
        MissingDependencyError, DependencyCycleError
            A tree's units name a stem that is not loaded before them, or form a cycle.
        """
        base = self._base_index()
        if not self.trees:
            return base
        stamp = tuple(_stamp(p) for p in (self.index_path, *(t / INDEX_NAME for t in self.trees)))
        if self._combined is not None and self._combined[0] == stamp:
            return self._combined[1]
        combined = dict(base)
        for tree in self.trees:
            path = tree / INDEX_NAME
            if not path.is_file():
                # a cycle or a missing dependency is why the index could not be built: say so
                # rather than give the command that fails on it
                self._tree_rows(tree, combined)
                raise StaleIndexError(
                    f"the unit tree {tree} has no index {INDEX_NAME}; run "
                    f"'{self.index_command(tree)}'"
                )
            try:
                have = _read_index(str(path), path.stat().st_mtime_ns)
            except StaleIndexError as exc:
                raise StaleIndexError(f"{exc}; run '{self.index_command(tree)}'") from None
            want = self._tree_rows(tree, combined)
            if list(have.items()) != want:
                raise StaleIndexError(
                    f"{path} does not match the annotations of its units "
                    f"({_difference(have, dict(want))}); run '{self.index_command(tree)}'"
                )
            combined.update(want)
        self._combined = (stamp, combined)
        return combined

    # -- minimal subsets ------------------------------------------------------------------------

    def stem_of(self, name: str) -> str | None:
        """The stem of the unit named ``name`` or providing it; ``None`` if there is none."""
        return name if name in self.units else self.symbols.get(name)

    def closest(self, name: str, n: int = 3) -> list[str]:
        """The stems and symbols of the library nearest to ``name``, best first (for "did you
        mean" in the errors about a name it does not have)."""
        return closest_names(name, {*self.units, *self.symbols}, n)

    def resolve(self, names: Iterable[str]) -> list[str]:
        """The stems a kernel calling ``names`` needs, in load order, shims first.

        ``names`` are stems or provided symbols.  All shims are included (layer 1 is emitted
        whole); of the nmath units and the units of trees only the named ones and their
        transitive dependencies.

        Raises
        ------
        MissingDependencyError
            A name is neither a stem nor a symbol of the library.
        StaleIndexError
            The index lacks a stem the library has, or a tree's index is stale.
        """
        index = self.read_index()
        want: set[str] = set()
        for name in names:
            stem = self.stem_of(name)
            if stem is None:
                close = self.closest(name)
                raise MissingDependencyError(
                    f"no unit of {self._describe()} is named or provides {name!r}"
                    + (f"; did you mean {', '.join(close)}?" if close else "")
                )
            if stem not in index:
                raise StaleIndexError(
                    f"{stem} is not in {self.index_path}; run '{self.index_command()}'"
                )
            want.add(stem)
            want.update(index[stem])
        return [
            s for s in index
            if s in self.units and (self.units[s].layer == "shims" or s in want)
        ]

    def _without_best(self, stems: list[str], names: Iterable[str]) -> list[str]:
        """``stems`` (of :meth:`resolve`) without the ``*_best`` units that only the default
        mode's units reach (they call them under ``#ifdef DASKCL_ACCURACY_BEST``), nor what only
        those units need; a unit named in ``names`` stays, and so do the shims."""
        want = set(stems)
        keep: set[str] = set()
        todo = [s for s in (self.stem_of(n) for n in names) if s is not None]
        named = set(todo)
        while todo:
            s = todo.pop()
            if s in keep or s not in self.units:
                continue
            keep.add(s)
            todo += [d for d in self.units[s].depends
                     if d in want and (d in named or not d.endswith(_BEST))]
        return [s for s in stems if s in keep or self.units[s].layer == "shims"]

    def find_names(self, text: str) -> tuple[str, ...]:
        """The names of this library that a piece of OpenCL C uses, in order of first use.

        An identifier counts where it is called (followed by ``(``) and is a stem or a
        provided symbol, or where it is a provided symbol that is not a function (an
        object-like macro, a constant, a type) and is used bare.  So a variable named like a
        function (``df``, ``beta``) is not a use of it.  Comments, string and character
        literals, numbers and member names (``.x``, ``->x``) are skipped.  A call of an OpenCL
        C built-in function (``cospi``, ``exp``) or a keyword counts only where the library
        provides a symbol of exactly that name: a stem such as ``cospi`` (whose unit provides
        ``R_cospi``) is not matched by a call of the built-in.  Names are matched exactly:
        ``pnorm`` is the stem ``pnorm`` (which provides ``pnorm5``), not an alias.

        Parameters
        ----------
        text
            OpenCL C: an elementwise operation, a function body, a whole kernel.

        Returns
        -------
        tuple of str
            The names as written, each once; :meth:`resolve` and :meth:`program_source`
            take them.

        Example
        -------
        >>> get_library().find_names(
        ...     "double c = qt(alpha / 2, df, 0, 0); "
        ...     "power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);")
        ('qt', 'pnt')
        """
        found: dict[str, None] = {}
        objects = self._object_symbols
        for m in _TOKEN.finditer(_strip(text)):
            name, called = m.group(1), m.group(2) is not None
            if name is None or name in found:
                continue
            if name in self.symbols:
                if called or name in objects:
                    found[name] = None
            elif called and name in self.units and not _builtin(name):
                found[name] = None
        return tuple(found)

    @functools.cached_property
    def _object_symbols(self) -> frozenset[str]:
        """The provided symbols that are not functions: a symbol is a function where its unit
        defines it as a function-like macro (``#define s(``) or writes ``s(`` outside the
        preprocessor (its definition, a declaration, a call)."""
        out: set[str] = set()
        for unit in self.units.values():
            if not unit.provides:
                continue
            code = _strip(self.read(unit.name)).replace("\\\n", " ")
            lines = code.splitlines()
            pre = "\n".join(ln for ln in lines if ln.lstrip().startswith("#"))
            body = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#"))
            for sym in unit.provides:
                s = re.escape(sym)
                if not (re.search(rf"#\s*define\s+{s}\(", pre)
                        or re.search(rf"(?<![\w.]){s}\s*\(", body)):
                    out.add(sym)
        return frozenset(out)

    def read(self, name: str) -> str:
        """The text of the library file ``name`` (e.g. ``kernels/elementwise.cl``, relative to
        the base; a unit of a tree by its absolute path), read once."""
        text = self._texts.get(name)
        if text is not None:
            return text
        try:
            return _read_text(str(self.root / name))
        except FileNotFoundError:
            stem = name[len("kernels/"):-len(".cl")] if name.startswith("kernels/") else ""
            hint = (f": an extract holds the kernel files asked for only (daskcl index extract "
                    f"DEST --kernels {stem} adds this one; daskcl.nmath's functions, the "
                    "generators and ElementwiseKernel need kernels/elementwise.cl)"
                    if stem else "")
            raise LibraryError(f"the kernel library {self.root} has no {name}{hint}") from None
        except OSError as exc:
            raise LibraryError(f"{self.root / name} cannot be read: {exc.strerror or exc}"
                               ) from None

    def kernel(self, stem: str) -> Kernel:
        """The kernel file ``kernels/<stem>.cl`` of the base.  Its ``@depends_nmath`` names
        without template fields (``${DEPENDS}`` of the elementwise template, filled per kernel
        when one is made)."""
        path = self.root / "kernels" / f"{stem}.cl"
        if not path.is_file():
            raise LibraryError(f"no kernel file {path}")
        tags = parse_annotations(self.read(f"kernels/{stem}.cl"))
        return Kernel(stem, path, tuple(d for d in tags.get("depends_nmath", ())
                                        if not d.startswith("${")))

    def program_source(
        self, names: Iterable[str], kernel_source: str, kernel_name: str = "<kernel>"
    ) -> ProgramSource:
        """Layer 0, layer 1, the minimal subset of nmath and the trees for ``names``, then
        ``kernel_source``.

        The units come in load order (the base's, then each tree's); a unit of a tree is
        named by its absolute path in ``files``, in the program's ``// ==== name ====`` lines
        and so in the locations of a :class:`~daskcl.errors.BuildError`.

        The program depends on the config key ``accuracy``: in the default mode the ``*_best``
        units that the units call only under ``DASKCL_ACCURACY_BEST`` are left out (their text
        is dead there, and compiling it cost every build that reaches them), with what only
        they need; a ``*_best`` unit named in ``names`` stays.  Whoever keeps a program source
        keeps it by the mode too.
        """
        best = config.get("accuracy") == "best"
        key = (tuple(names), kernel_source, kernel_name, best)
        hit = self._assembled.get(key)
        if hit is None:
            hit = self._assembled.setdefault(
                key, self._assemble(key[0], kernel_source, kernel_name, best))
        return hit

    def _assemble(self, names: tuple[str, ...], kernel_source: str, kernel_name: str,
                  best: bool) -> ProgramSource:
        stems = self.resolve(names)
        if not best and any(s.endswith(_BEST) for s in stems):
            stems = self._without_best(stems, names)
        parts: list[tuple[str, str]] = [("OPENCL.cl", self.read("OPENCL.cl"))]
        for s in stems:
            unit = self.units[s]
            parts.append((unit.name, self._texts.get(unit.name) or _read_text(str(unit.path))))
        if (self.root / "OPENCL_END.cl").is_file():     # the close of layer 0 (optional)
            parts.append(("OPENCL_END.cl", self.read("OPENCL_END.cl")))
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
        self, dest: _StrPath, names: Iterable[str] = (), kernels: Iterable[str] = (), *,
        force: bool = False,
    ) -> Library:
        """Copy the subset of the library that ``names`` and ``kernels`` need into ``dest``.

        The copy holds ``OPENCL.cl``, every shim, the needed nmath units (units of trees
        among them), the named kernel files and its index, built from those units; it is
        itself a :class:`Library` (so a downstream package can ship only that, or use it as
        the base of its own unit trees) and passes ``daskcl index check``.

        No file of ``dest`` is overwritten unless ``force``: where a file the copy would write
        is there already with other contents (or is not a regular file), :class:`LibraryError`
        lists those files and nothing is written.  Files already as the copy would write them
        (an extract made again) are no obstacle, nor is the index, which is generated: it is
        written anew from the annotations of the units in ``dest``.
        """
        dest = Path(dest)
        if dest.exists() and not dest.is_dir():
            raise LibraryError(f"{dest} is not a directory: extract into a directory (made if "
                               "missing); nothing was written")
        kernel_files = [self.kernel(k) for k in kernels]
        wanted = list(names) + [n for k in kernel_files for n in k.depends_nmath]
        stems = self.resolve(wanted)
        # what to write: a path under dest, and the bytes
        files = [(Path(f), _read_file(self.root / f))
                 for f in ("OPENCL.cl", "OPENCL_END.cl") if (self.root / f).is_file()]
        for s in stems:
            unit = self.units[s]
            if unit.tree is None:
                files.append((Path(unit.name), _read_file(unit.path)))
            else:
                files.append((Path("nmath", f"{s}.cl"), self._texts[unit.name].encode()))
        files += [(Path("kernels", k.path.name), _read_file(k.path)) for k in kernel_files]
        clash = [f for f, data in files if _differs(dest / f, data)]
        if clash and not force:
            raise LibraryError(
                f"{dest} already has {len(clash)} of the files the extract would write, with "
                f"other contents: {', '.join(str(dest / f) for f in clash)}. Nothing was "
                "written: move them away, choose another destination, or overwrite them with "
                "--force (daskcl index extract) or force=True (Library.extract)")
        for layer in _LAYERS:
            (dest / layer).mkdir(parents=True, exist_ok=True)
        for f, data in files:
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            if (dest / f).is_symlink():
                (dest / f).unlink()        # the link is replaced, not what it points to
            (dest / f).write_bytes(data)
        sub = Library(dest)
        sub.write_index()
        return sub


def closest_names(name: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The names of ``choices`` nearest to ``name``, at most ``n``, best first: what "did you
    mean" offers in daskcl's errors about a name it does not know (difflib's close matches)."""
    return difflib.get_close_matches(name, sorted(set(choices)), n)


def _differs(path: Path, data: bytes) -> bool:
    """Whether writing ``data`` as ``path`` would overwrite something other than the same
    bytes (``path`` is there, and is not a regular file holding ``data``)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(st.st_mode) or st.st_size != len(data) or path.read_bytes() != data


#: OpenCL C keywords, types, qualifiers and built-in functions (OpenCL C 1.2 and 2.0, 6.1-6.13)
_OPENCL_RESERVED = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while bool half uchar ushort uint ulong size_t ptrdiff_t
    intptr_t uintptr_t true false __global global __local local __constant constant __private
    private __generic generic __kernel kernel __read_only read_only __write_only write_only
    __read_write read_write __attribute__ uniform pipe
    acos acosh acospi asin asinh asinpi atan atan2 atanh atanpi atan2pi cbrt ceil copysign
    cos cosh cospi erfc erf exp exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod fract
    frexp hypot ilogb ldexp lgamma lgamma_r log log2 log10 log1p logb mad maxmag minmag modf
    nan nextafter pow pown powr remainder remquo rint rootn round rsqrt sin sincos sinh sinpi
    sqrt tan tanh tanpi tgamma trunc
    abs abs_diff add_sat hadd rhadd clamp clz ctz mad_hi mad_sat max min mul_hi rotate sub_sat
    upsample popcount mad24 mul24
    degrees mix radians step smoothstep sign
    cross dot distance length normalize fast_distance fast_length fast_normalize
    isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater isfinite
    isinf isnan isnormal isordered isunordered signbit any all bitselect select
    barrier mem_fence read_mem_fence write_mem_fence work_group_barrier
    async_work_group_copy async_work_group_strided_copy wait_group_events prefetch
    get_work_dim get_global_size get_global_id get_local_size get_local_id get_num_groups
    get_group_id get_global_offset get_enqueued_local_size get_global_linear_id
    get_local_linear_id shuffle shuffle2 printf vec_step
""".split())
#: prefixes of families of built-ins (native_exp, half_exp, convert_int_rte, as_double, ...)
_OPENCL_PREFIXES = ("native_", "half_", "convert_", "as_", "vload", "vstore", "atomic_",
                    "atom_", "read_image", "write_image", "get_image_", "work_group_",
                    "sub_group_", "get_sub_group_")

#: comments and string or character literals
_NOISE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
#: member names and numbers (no group), or an identifier and the ( of a call after it
_TOKEN = re.compile(r"(?:\.|->)\s*[A-Za-z_]\w*|\.?\d(?:[eEpP][+-]|[\w.])*|([A-Za-z_]\w*)(\s*\()?")


def _strip(text: str) -> str:
    """``text`` without comments (newlines kept) and with empty string literals."""
    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s[0] * 2 if s[0] in "\"'" else " " + "\n" * s.count("\n")
    return _NOISE.sub(blank, text)


def _builtin(name: str) -> bool:
    return name in _OPENCL_RESERVED or name.startswith(_OPENCL_PREFIXES)


def _difference(have: dict[str, tuple[str, ...]], want: dict[str, tuple[str, ...]]) -> str:
    """The first difference between an index on disk and what it should hold, in words."""
    extra = [s for s in have if s not in want]
    if extra:
        return f"it lists {', '.join(extra)}, which the tree does not have"
    absent = [s for s in want if s not in have]
    if absent:
        return f"it lacks {', '.join(absent)}"
    for s, deps in want.items():
        if have[s] != deps:
            return (f"{s} depends on {','.join(deps) or 'nothing'}, it says "
                    f"{','.join(have[s]) or 'nothing'}")
    return "its rows are not in load order"


def _absolute(path: _StrPath) -> Path:
    return Path(os.path.abspath(path))


def _unit_text(path: Path) -> str:
    """The text of the unit ``path``, read as UTF-8 (whatever the locale), without a byte
    order mark (which would stop its annotations being read, and land amid a program); a
    :class:`LibraryError` naming the file, line and column of a byte that is not UTF-8."""
    data = _read_file(path)
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - data.rfind(b"\n", 0, exc.start)
        raise LibraryError(f"{path}:{line}:{col}: the file is not UTF-8 text (byte "
                           f"0x{data[exc.start]:02x}): save it as UTF-8 (or ASCII)") from None
    return text.removeprefix("\ufeff")


def _check_tags(path: Path, text: str) -> None:
    """A :class:`LibraryError` naming the file and line of an annotation of the unit ``path``
    that is misspelt (``// @dpends:``, ``// @depends_nmath:``, which would be ignored) or has
    no colon (``// @depends pnorm``)."""
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s.startswith("//"):
            break
        m = re.match(r"//\s*@([A-Za-z_]+)\s*(:?)", s)
        if m is None:
            continue
        tag, colon = m.groups()
        if tag in _UNIT_TAGS:
            if not colon:
                raise LibraryError(f"{path}:{n}: {s!r} has no colon: write '// @{tag}: ...'")
            continue
        near = closest_names(tag.lower(), _UNIT_TAGS, 1)
        if near:
            raise LibraryError(
                f"{path}:{n}: @{tag} is not an annotation of a unit (they are @provides, "
                f"@depends and @source): did you mean @{near[0]}?")


def _tree_files(tree: Path) -> list[Path]:
    """The units of a unit tree, checking that it is one."""
    if not tree.is_dir():
        raise LibraryError(f"the unit tree {tree} is not a directory")
    if (tree / "OPENCL.cl").is_file():
        raise LibraryError(
            f"{tree} is a kernel library (it has OPENCL.cl), not a unit tree; give it as the "
            "base (the first root) of the library"
        )
    paths = sorted(p for p in tree.glob("*.cl") if not p.name.startswith("."))
    if not paths:
        raise LibraryError(
            f"{tree} holds no .cl units: a unit tree has its annotated units directly in it "
            "(a directory laid out like cl/ is a kernel library and needs OPENCL.cl)"
        )
    return paths


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def _tree_stamp(tree: Path) -> tuple[tuple[str, int, int], ...]:
    """What identifies the state of a tree's files: names, times and sizes of its units and
    its index."""
    out = []
    with os.scandir(tree) as it:
        for e in it:
            if e.name.endswith(".cl") or e.name == INDEX_NAME:
                st = e.stat()
                out.append((e.name, st.st_mtime_ns, st.st_size))
    return tuple(sorted(out))


@functools.lru_cache(maxsize=16)
def _read_index(path: str, mtime_ns: int) -> dict[str, tuple[str, ...]]:
    try:
        lines = _read_file(Path(path)).decode().splitlines()
    except UnicodeDecodeError as exc:
        raise StaleIndexError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})"
                              ) from None
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
    return _read_file(Path(path)).decode()


def _read_file(path: Path) -> bytes:
    """The bytes of the library file ``path``, a regular file: a FIFO, socket or device named
    ``*.cl`` is a :class:`LibraryError` naming it (opening never blocks, links are followed)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LibraryError(f"{path} is not a regular file: a kernel library holds regular "
                               "files only; move it away")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def split_roots(
    roots: _StrPath | Sequence[_StrPath] | None,
) -> tuple[Path, tuple[Path, ...]]:
    """The base and the unit trees of ``roots``, as :func:`get_library` reads them.

    The base is the first root that is a kernel library (has ``OPENCL.cl``: the shipped
    ``cl/``, or the output of ``daskcl index extract``), else :func:`default_root`; every
    other root is a unit tree, made absolute, in the order given.

    Raises
    ------
    LibraryError
        A root is not a directory, is given twice, or is a second kernel library.
    """
    if roots is None:
        given: list[_StrPath] = []
    elif isinstance(roots, (str, os.PathLike)):
        given = [roots]
    else:
        given = list(roots)
    base: Path | None = None
    trees: list[Path] = []
    seen: set[Path] = set()
    for r in given:
        path = Path(r)
        if not path.is_dir():
            raise LibraryError(
                f"the root {r} is not a directory: a root is a kernel library (laid out like "
                "cl/) or a unit tree (a directory of annotated .cl units)"
            )
        if _absolute(path) in seen:
            raise LibraryError(f"the root {r} is given twice")
        seen.add(_absolute(path))
        if (path / "OPENCL.cl").is_file():
            if base is not None:
                raise LibraryError(
                    f"two kernel libraries among the roots: {base} and {r} (both have "
                    "OPENCL.cl); a program has one base: give one, and what you need of the "
                    "other as a unit tree or through 'daskcl index extract'"
                )
            base = path
        else:
            trees.append(_absolute(path))
    return (base if base is not None else default_root()), tuple(trees)


@functools.lru_cache(maxsize=16)
def _library(root: str, trees: tuple[tuple[str, tuple[tuple[str, int, int], ...]], ...]) -> Library:
    return Library(root, [t for t, _ in trees])


def get_library(roots: _StrPath | Sequence[_StrPath] | None = None) -> Library:
    """The (cached) :class:`Library` of ``roots``: a base library and unit trees.

    Parameters
    ----------
    roots
        None (the shipped library, or the config key ``library``), one directory, or a
        sequence of them.  The first that is a kernel library (has ``OPENCL.cl``) is the base,
        else the shipped library is; the others are unit trees, loaded after the base in the
        order given (see :func:`split_roots`).

    Returns
    -------
    Library
        The same object while the roots' files are unchanged; a fresh one, read again, once a
        tree's ``.cl`` files or index change (added, removed, edited).

    Raises
    ------
    LibraryError
        See :func:`split_roots` and :class:`Library`.

    Example
    -------
    >>> get_library() is get_library(None)
    True
    """
    base, trees = split_roots(roots)
    return _library(str(base), tuple((str(t), _tree_stamp(t)) for t in trees))
