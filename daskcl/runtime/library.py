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

The parts: :mod:`~daskcl.runtime.units` (the files and their annotations),
:mod:`~daskcl.runtime.index` (the sort and the index), :mod:`~daskcl.runtime.names` (the names
a piece of OpenCL C uses); this module combines them and assembles programs.

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

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from .. import config
from ..errors import (
    LibraryError,
    MissingDependencyError,
    StaleIndexError,
)
from .index import LibraryIndex
from .names import find_names, object_symbols
from .units import (
    _LAYERS,
    _STEM,
    INDEX_NAME,
    Kernel,
    Unit,
    _absolute,
    _check_tags,
    _differs,
    _read_file,
    _read_text,
    _StrPath,
    _tree_files,
    _tree_stamp,
    _unit_text,
    closest_names,
    default_root,
    parse_annotations,
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


class Library(LibraryIndex):
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
                    "it is not a directory" if not self.root.is_dir() else
                    "its OPENCL.cl is not a regular file" if (self.root / "OPENCL.cl").exists()
                    else "it has no OPENCL.cl")
            if what.endswith("has no OPENCL.cl") and any(self.root.glob("*.cl")):
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
        return find_names(text, self.symbols, self.units, self._object_symbols)

    @functools.cached_property
    def _object_symbols(self) -> frozenset[str]:
        """The provided symbols that are not functions (see :func:`.names.object_symbols`)."""
        return object_symbols(self.units.values(), self.read)

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
