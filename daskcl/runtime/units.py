# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel library's files: where the library is, a unit's annotations, reading files safely.

A unit is one annotated ``.cl`` file (``// @provides:``, ``// @depends:``) of the base library
(``shims/``, ``nmath/``) or of a unit tree of the user's own; :mod:`~daskcl.runtime.library`
combines them, :mod:`~daskcl.runtime.index` orders them.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from .. import config
from ..errors import LibraryError

__all__ = ["INDEX_NAME", "Kernel", "Unit", "closest_names", "default_root", "parse_annotations"]

_StrPath: TypeAlias = "str | os.PathLike[str]"

INDEX_NAME = "kernel_dependency_index.tsv"
_LAYERS = ("shims", "nmath")
_TAG = re.compile(r"^//\s*@([A-Za-z_]+)\s*:(.*)$")
#: the annotations of a unit (``@source`` is free text)
_UNIT_TAGS = ("provides", "depends", "source")
_STEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


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
