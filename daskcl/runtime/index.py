# SPDX-License-Identifier: GPL-2.0-or-later
"""The dependency index: the library's units sorted in passes, and each stem's transitive
dependencies in load order, written to and checked against ``kernel_dependency_index.tsv``.

:class:`LibraryIndex` holds the methods; :class:`~daskcl.runtime.library.Library` inherits them.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import TypeAlias

from ..errors import (
    DependencyCycleError,
    LibraryError,
    MissingDependencyError,
    StaleIndexError,
)
from .units import (
    _LAYERS,
    INDEX_NAME,
    Unit,
    _absolute,
    _read_file,
    _stamp,
    _StrPath,
    closest_names,
    default_root,
)

__all__ = ["LibraryIndex"]

_Rows: TypeAlias = "list[tuple[str, tuple[str, ...]]]"


class LibraryIndex:
    """The sort and the index of a library's units (the half of
    :class:`~daskcl.runtime.library.Library` that orders them)."""

    #: the base library, the unit trees after it, and both in load order
    root: Path
    trees: tuple[Path, ...]
    roots: tuple[Path, ...]
    #: every unit by stem, and the stem that provides each symbol
    units: dict[str, Unit]
    symbols: dict[str, str]
    #: the combined index, with the stamps of the index files it was read from
    _combined: tuple[tuple[object, ...], dict[str, tuple[str, ...]]] | None

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
