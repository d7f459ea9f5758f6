# SPDX-License-Identifier: GPL-2.0-or-later
"""What a sweep store holds: the entries daskcl writes there, and what it did not.

``--overwrite`` replaces only a store that holds nothing but what daskcl wrote: its arrays'
metadata and chunks, each a regular file, a chunk's key one index per dimension of its array,
within the grid of chunks (or shards) that the array's zarr metadata gives
(:func:`foreign_inside`).  Before zarr opens a store, :func:`refuse_odd_entries` refuses a
FIFO, socket or device in it (which zarr would block on), and links where a run would write
through them.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import SweepError
from . import inputs
from . import lease as _lease
from .chunks import BOOK, BOOKKEEPING, DONE, OLD_DONE
from .journal import DIR as _JOURNAL
from .journal import NAME as _JOURNAL_NAME

#: where a store's journal may be (:mod:`daskcl.sweep.journal`)
_JOURNALS = (f"{DONE}/{_JOURNAL}", f"{OLD_DONE}/{_JOURNAL}")

__all__ = ["TMP_META", "foreign_inside", "own_entries", "read_local_json",
           "refuse_odd_entries"]


def own_entries(info: dict[str, Any]) -> set[str]:
    """The top-level entries daskcl writes in a store with these attributes."""
    names = {"zarr.json", _lease.LEASE, *BOOKKEEPING}
    for key in ("arrays", "outputs", "axes"):
        names.update(str(n) for n in info.get(key) or ())
    if info.get("coefficients"):
        names.add("coefficient")
    return names


# what daskcl writes inside its own entries: an array's metadata and its chunks (zarr v3's
# default chunk keys, c/i/j/...: one index per dimension of the array, each within its grid of
# chunks, or of shards where it is sharded), the bookkeeping group's metadata and arrays, and
# the probes of _prove_writable that a killed run may leave (c/daskcl-probe-...), the journal's
# files (:mod:`daskcl.sweep.journal`); each a regular file
_PROBE = re.compile(r"daskcl-probe-[0-9a-f]{12}")
#: the groups of the files a Python function read (:mod:`daskcl.sweep.inputs`)
_INPUTS = re.compile(re.escape(inputs.GROUP) + r"(/[0-9a-f]{16})?/zarr\.json")
#: the group's metadata while it is rewritten (:func:`_unlist_lease`), or while zarr writes it,
#: left by a run killed then
TMP_META = re.compile(r"zarr\.json\.daskcl-[0-9a-f]{12}|zarr\.[0-9a-f]{32}\.partial")
#: the file zarr writes a metadata document or chunk into before it renames it into place (its
#: name less any suffix, then .<32 hex>.partial), left by a run killed meanwhile
_ZARR_TMP = re.compile(r"(.+?)\.[0-9a-f]{32}\.partial")
_INDEX = re.compile(r"0|[1-9][0-9]*")
#: the most bytes of an array's zarr.json read to learn its grid of chunks
_MAX_META = 1 << 24


def _chunk_grid(meta: Any) -> tuple[int, ...] | None:
    """The number of chunks (of shards, for a sharded array) along each dimension of the zarr
    v3 array whose metadata is ``meta``; ``None`` where it is not such metadata, or its chunk
    keys are not zarr's default ones (``c/i/j/...``), the only ones daskcl writes."""
    if not isinstance(meta, dict) or meta.get("zarr_format") != 3 or \
            meta.get("node_type") != "array":
        return None
    shape, grid, enc = meta.get("shape"), meta.get("chunk_grid"), meta.get("chunk_key_encoding")
    if not isinstance(grid, dict) or grid.get("name") != "regular" or \
            not isinstance(grid.get("configuration"), dict):
        return None
    chunks = grid["configuration"].get("chunk_shape")

    def ints(v: Any, low: int) -> bool:
        return isinstance(v, list) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= low for n in v)

    if not (isinstance(shape, list) and isinstance(chunks, list) and ints(shape, 0)
            and ints(chunks, 1) and len(shape) == len(chunks)):
        return None
    if not isinstance(enc, dict) or enc.get("name") != "default":
        return None
    conf = enc.get("configuration") or {}
    if not isinstance(conf, dict) or conf.get("separator", "/") != "/":
        return None
    return tuple(-(-s // c) for s, c in zip(shape, chunks))


def _is_own_file(rel: str, grid_of: Callable[[str], tuple[int, ...] | None]) -> bool:
    """Whether ``rel`` (a file's path in the store, under one of daskcl's top-level entries)
    is one daskcl writes: ``zarr.json``, ``_daskcl/zarr.json``, and in an array's directory its
    ``zarr.json``, a probe ``c/daskcl-probe-...`` or a chunk key that ``grid_of(array)`` (the
    array's grid of chunks, ``None`` where it is unknown) holds; or zarr's temporary file of
    one of them."""
    if rel.split("/") in (["zarr.json"], [BOOK, "zarr.json"]) or _lease.is_lease_file(rel) \
            or _INPUTS.fullmatch(rel):
        return True
    head, _, name = rel.rpartition("/")
    tmp = _ZARR_TMP.fullmatch(name)
    if tmp:     # zarr's file on its way to an own name: zarr.json, or a chunk key
        real = "zarr.json" if tmp.group(1) == "zarr" else tmp.group(1)
        return _is_own_file(f"{head}/{real}" if head else real, grid_of)
    if head in _JOURNALS and _JOURNAL_NAME.fullmatch(name):
        return True
    array, rest = _array_and_rest(rel)
    if rest == ["zarr.json"]:
        return True
    if not rest or rest[0] != "c":
        return False
    if len(rest) == 2 and _PROBE.fullmatch(rest[1]):
        return True
    return _in_grid(rest[1:], grid_of(array), whole=True)


def _is_own_dir(rel: str, grid_of: Callable[[str], tuple[int, ...] | None]) -> bool:
    """Whether the empty directory ``rel`` is one that daskcl's chunks make: an array's ``c``
    or a prefix of a chunk key that ``grid_of(array)`` holds (``c/0`` of a 2-d grid), left
    empty where a chunk was deleted.  Any other empty directory is the user's, and
    ``--overwrite`` would delete it with its entry."""
    if rel in _JOURNALS:
        return True
    array, rest = _array_and_rest(rel)
    return bool(rest) and rest[0] == "c" and _in_grid(rest[1:], grid_of(array), whole=False)


def _array_and_rest(rel: str) -> tuple[str, list[str]]:
    """A path in the store as its array (``q``, ``_daskcl/done``) and the parts below it."""
    parts = rel.split("/")
    split = 2 if parts[0] == BOOK else 1
    return "/".join(parts[:split]), parts[split:]


def _in_grid(index: list[str], grid: tuple[int, ...] | None, *, whole: bool) -> bool:
    """Whether ``index`` (``c/i/j`` without its ``c``) is a chunk key of ``grid`` (``whole``:
    one index per dimension) or the start of one (fewer), each index within the grid."""
    return grid is not None and (len(index) == len(grid) if whole else len(index) < len(grid)) \
        and all(_INDEX.fullmatch(i) and int(i) < n for i, n in zip(index, grid))


def read_local_json(path: str) -> Any:
    """The JSON of a regular file at ``path`` (a link is not followed, nothing blocks), or
    ``None`` where there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_META:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return json.loads(f.read(_MAX_META))
    except (OSError, ValueError, RecursionError):      # a document nested too deeply too
        return None
    finally:
        os.close(fd)


def _grids(read: Callable[[str], Any]) -> Callable[[str], tuple[int, ...] | None]:
    """``grid_of(array)`` for :func:`_is_own_file`: the array's grid of chunks from its own
    ``zarr.json`` (``read(key)`` gives a key's JSON, or ``None``) and the store's consolidated
    copy of it, the larger where both are readable (a damaged store, which ``--overwrite``
    replaces, may have either edited or unreadable); each read once."""
    cache: dict[str, tuple[int, ...] | None] = {}
    top: list[Any] = []

    def grid_of(array: str) -> tuple[int, ...] | None:
        if array not in cache:
            own = _chunk_grid(read(f"{array}/zarr.json"))
            if not top:
                top.append(read("zarr.json"))
            consolidated = top[0].get("consolidated_metadata") if isinstance(
                top[0], dict) else None
            metadata = consolidated.get("metadata") if isinstance(consolidated, dict) else None
            copy = _chunk_grid(metadata.get(array)) if isinstance(metadata, dict) else None
            # either copy may have been edited since daskcl wrote it: the larger grid
            cache[array] = (tuple(map(max, own, copy)) if own and copy and len(own) == len(copy)
                            else own or copy)
        return cache[array]

    return grid_of


def _walk(top: str, rel: str) -> Iterable[tuple[str, str]]:
    """Every entry under the directory ``top`` but the directories that hold something (a
    link to one included), as its path ``rel/...`` and its kind: ``"file"`` (a regular file),
    ``"dir"`` (an empty directory) or ``"other"``; links are not followed, and a directory that
    cannot be read is passed over (as ``os.walk`` does)."""
    stack = [(top, rel)]
    while stack:
        d, r = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        if not entries and r != rel:
            yield r, "dir"
        for e in entries:
            path = f"{r}/{e.name}"
            if e.is_dir(follow_symlinks=False):
                stack.append((e.path, path))
            else:
                yield path, "file" if e.is_file(follow_symlinks=False) else "other"


def _odd_kind(path: str) -> str:
    """What the entry at ``path`` is, where it is neither a regular file nor a directory."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "gone"
    if stat.S_ISLNK(mode):
        return "link"
    return ("FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")


def refuse_odd_entries(url: str, *, links: bool, hint: str) -> bool:
    """A :class:`SweepError` naming the first entry of the local store ``url`` that zarr would
    block on or write through: a FIFO, socket or device (reading one blocks, or reads what is
    not a chunk), or a link to one; and, with ``links``, any link (a resume writes chunks
    where links point).  Zarr opens the store's files itself, so they are checked here first,
    without opening any.  Returns whether the store holds links (not refused)."""
    if "://" in url:
        return False
    root = os.path.abspath(url)
    found = False
    for rel in sorted(r for r, kind in _walk(root, "") if kind == "other"):
        rel = rel.lstrip("/")
        path = os.path.join(root, *rel.split("/"))
        what = _odd_kind(path)
        if what == "link":
            try:
                target = os.stat(path).st_mode
            except OSError:       # a dangling link: read as missing, as a deleted chunk is
                target = stat.S_IFREG
            if stat.S_ISREG(target) or stat.S_ISDIR(target):
                if links:
                    raise SweepError(f"{url} holds {rel}, a link: daskcl does not write through "
                                     f"links inside a store (the chunks would land where it "
                                     f"points); {hint}")
                found = True
                continue
            what = "link to a special file"
        if what != "gone":
            raise SweepError(f"{url} holds {rel}, a {what}, not a regular file: daskcl opens "
                             f"only regular files in a store (reading it could block); {hint}")
    return found


def foreign_inside(url: str, options: dict[str, Any] | None, names: list[str]) -> list[str]:
    """Files (and links) under the top-level entries ``names`` that daskcl did not write,
    as paths relative to the store: ``--overwrite`` deletes whole entries, so a user's file
    inside one (``pnorm/notes.txt``, or ``pnorm/c/9`` beside an array of one chunk) must stop
    it as one beside them does."""
    found: list[str] = []
    if "://" not in url:
        root = os.path.abspath(url)
        grid_of = _grids(lambda key: read_local_json(os.path.join(root, *key.split("/"))))
        for n in names:
            top = os.path.join(root, n)
            if os.path.islink(top) or not os.path.isdir(top):
                continue      # a link or file of daskcl's name is removed itself, no more
            found += [rel + ("/" if kind == "dir" else "") for rel, kind in _walk(top, n)
                      if not ((kind == "file" and _is_own_file(rel, grid_of))
                              or (kind == "dir" and _is_own_dir(rel, grid_of)))]
        return sorted(found)
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(options or {}))

    def read(key: str) -> Any:
        try:
            return json.loads(fs.cat_file(posixpath.join(path, key)))
        except Exception:     # missing, unreadable or not JSON: not known
            return None

    grid_of = _grids(read)
    base = str(path).rstrip("/") + "/"
    for n in names:
        top = posixpath.join(path, n)
        if not fs.isdir(top):
            continue
        for f in fs.find(top):
            rel = str(f)[len(base):] if str(f).startswith(base) else str(f)
            if not _is_own_file(rel, grid_of):
                found.append(rel)
    return sorted(found)
