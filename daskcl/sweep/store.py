# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep's zarr v3 store (:class:`Store`): who may write or replace it, how a run opens it,
writes its chunks and records them, and how a finished one is verified.

Its layout is :mod:`~daskcl.sweep.layout`'s (``format`` ``daskcl-sweep/4``).  Stores of
``daskcl-sweep/3`` (a mark and a checksum file a chunk), ``/2`` (the same, every checksum a
CRC-32) and ``/1`` (also ``_done`` and ``_checksum`` at the top, ``daskcl`` a nested attribute)
are still read, resumed and verified, each with its own checksums; a store of a newer format
than this module's is neither resumed nor verified (its checksums may be unknown here): the
error says to upgrade.

A chunk is written by :meth:`Store.write_chunk`: its zarr chunks (a large chunk's encoded in
parallel, their checksums computed meanwhile), then one record in the store's journal, its mark and checksums
(:mod:`~daskcl.sweep.journal`); so a chunk is either complete and recorded, or written again
(a writer killed between leaves it unrecorded).  A recorded chunk counts as done only if it
still matches its checksums: a chunk corrupted or deleted since is written again.  A run folds
the journal into the bookkeeping arrays at its end (:meth:`Store.fold`).

The store is known as daskcl's by its ``daskcl`` attribute (``format``); ``overwrite`` replaces
only such a store, and only where it holds nothing but what daskcl wrote there
(:mod:`~daskcl.sweep.contents`).  :meth:`Store.check` applies these rules before anything is
computed, :meth:`Store.verify` checks a finished store.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import posixpath
import re
import shutil
import socket
import threading
import uuid
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._version import __version__
from . import inputs
from . import lease as _lease
from .chunks import BOOK as _BOOK
from .chunks import CHECKSUM as _CHECKSUM
from .chunks import (
    CRC32,
    CRC32C,
    DISK_FULL,
    STORE_READ_ERRORS,
    Arrays,
    algorithm,
    checksum,
    checksum_array,
    chunk_matches,
    inline,
    keep_freed_buffers,
    new_algorithm,
    read_book,
    write_book,
    write_chunk,
    write_error,
)
from .chunks import DONE as _DONE
from .chunks import OLD_CHECKSUM as _OLD_CHECKSUM
from .chunks import OLD_DONE as _OLD_DONE
from .contents import TMP_META, foreign_inside, own_entries, refuse_odd_entries
from .journal import Book, Journal
from .layout import (
    FORMAT,
    NESTED_FORMAT,
    array_names,
    codecs,
    consolidate,
    coordinate,
    create_arrays,
    meta_hash,
    now,
    read_info,
    record_run,
)
from .spec import Axis, Sweep, SweepError, axes_hash, listing

__all__ = [
    "CRC32",
    "CRC32C",
    "DISK_FULL",
    "FORMAT",
    "STORE_READ_ERRORS",
    "Book",
    "Store",
    "algorithm",
    "checksum",
    "codecs",
    "exists",
    "keep_freed_buffers",
    "local_url",
    "new_algorithm",
    "newer_format",
    "open_group",
    "open_result",
    "read_info",
    "verify",
    "write_error",
]

_log = logging.getLogger("daskcl.sweep")

#: the formats this module reads: its own, the third (a file a chunk's mark and checksums), the
#: second (CRC-32 checksums) and the first (also bookkeeping at the top, a nested attribute)
_FORMATS = (NESTED_FORMAT, "daskcl-sweep/2", "daskcl-sweep/3", FORMAT)


def local_url(url: str) -> str:
    """A store's path or URL as the run uses it: a local path (or a ``file://`` URL, taken as
    the path it names, so that it is written as a path is: its directories made, links not
    followed, checked as daskcl's own) made absolute here, where the user named it -- the
    workers of a cluster, started elsewhere, would read a relative path from their own working
    directories; an fsspec URL (``s3://...``) as it is."""
    if url.startswith("file://"):
        rest = url[len("file://"):]
        url = rest[len("localhost"):] if rest.startswith("localhost/") else rest
    elif "://" in url:
        return url
    return _absolute(url)


def _absolute(path: str) -> str:
    """``path`` as an absolute path naming what it names in this process's working directory.
    Only ``.`` and repeated or trailing ``/`` are dropped, which changes nothing; the store's own
    name is never followed as a link.  A path through ``..`` has the directory above its last
    component resolved (``realpath``) instead, as the system resolves it (``link/..`` is the
    link target's parent, not the working directory)."""
    full = os.path.join(os.getcwd(), path)
    if ".." not in full.split("/"):
        return os.path.normpath(full)
    head, tail = os.path.split(full.rstrip("/") or "/")
    if tail in ("", ".", ".."):
        return os.path.realpath(full)
    return os.path.join(os.path.realpath(head), tail)


def open_group(url: str, mode: str, storage_options: dict[str, Any] | None = None) -> Any:
    """The zarr group at ``url`` (a path or an fsspec URL), opened in zarr's ``mode``."""
    import zarr

    return zarr.open_group(url, mode=mode, storage_options=storage_options)  # type: ignore[arg-type]


def open_result(out: str | os.PathLike[str], storage_options: dict[str, Any] | None = None
                ) -> Any:
    """The zarr group of a sweep, read-only.

    Parameters
    ----------
    out : str or path
        The store: a directory or an fsspec URL.
    storage_options : dict, optional
        fsspec options of the store.

    Returns
    -------
    zarr.Group
        The result arrays, one coordinate array per axis and the attributes (the layout:
        :mod:`daskcl.sweep.layout`).
    """
    return open_group(local_url(str(out)), "r", storage_options)


def exists(url: str, storage_options: dict[str, Any] | None = None) -> bool:
    """Whether anything is at ``url``: a file, or a directory that is not empty."""
    entries = Store(url, storage_options).entries()
    return entries is None or bool(entries)


def _is_ours(info: Any) -> bool:
    """Whether a group's ``daskcl`` attribute is one daskcl writes: of a format this module
    reads or of a newer one, or written before stores had a ``format`` (a finished sweep's
    attributes, or ``{"preparing": True}``)."""
    if not isinstance(info, dict):
        return False
    if info.get("format") in _FORMATS or newer_format(info):
        return True
    return info == {"preparing": True} or {"identity", "outputs", "axes"} <= set(info)


def newer_format(info: Mapping[str, Any]) -> bool:
    """Whether a store's ``daskcl`` attribute names a format newer than this module's
    (``daskcl-sweep/<n>``, ``n`` above this one's): its checksums or layout may be unknown
    here, so it is neither resumed nor verified, only replaced on ``overwrite``."""
    m = re.fullmatch(r"daskcl-sweep/(\d+)", str(info.get("format", "")))
    return m is not None and int(m.group(1)) > int(FORMAT.rsplit("/", 1)[1])


def _newer_error(url: str, info: Mapping[str, Any], what: str) -> SweepError:
    return SweepError(
        f"{url} was written by a newer daskcl ({info.get('version', 'version unknown')}, store "
        f"format {info.get('format')}); this daskcl ({__version__}) reads formats up to "
        f"{FORMAT}, so it cannot {what} it: upgrade daskcl")


_PLURAL = {"axes", "args", "chunks", "outputs", "glm", "settings"}   # "the axes differ"
_PROBLEMS = {
    "function": "the function", "function_code": "the Python function's code",
    "kernel_source": "the kernel source", "axes": "the axes", "args": "the arguments",
    "settings": "the settings that change values (fp_contract, accuracy)",
    "chunks": "the chunks", "outputs": "the outputs", "glm": "the GLM data or model",
}


def _what_changed(info: dict[str, Any], sweep: Sweep) -> str:
    stored = info.get("identity_parts")
    if not isinstance(stored, dict):
        return "it was written by an older daskcl, whose identity does not say what"
    now = sweep.identity_parts()
    if set(stored) != set(now):
        return (f"it was written by daskcl {info.get('version', '(version unknown)')}, whose "
                "identity covers other things than this one's")
    keys = [k for k in now if k != "sweep" and stored.get(k) != now[k]]
    changed = [_PROBLEMS.get(k, k) for k in keys]
    plural = len(keys) > 1 or (keys and keys[0] in _PLURAL)
    return ", ".join(changed) + (" differ" if plural else " differs")


#: fsspec protocols whose files live in one process's memory: gone when it ends, and each of a
#: cluster's workers would write its own
_VOLATILE = ("memory",)


def _refuse_volatile(url: str) -> None:
    """A :class:`SweepError` where ``url`` (or a layer of a chained URL, ``a::memory://``)
    names a file system that cannot hold a sweep: a ``memory://`` store "succeeded" with
    ``--sync`` and was gone at exit, and failed chunk by chunk on a cluster."""
    for part in url.split("::"):
        protocol, sep, _ = part.partition("://")
        if sep and protocol.lower() in _VOLATILE:
            raise SweepError(f"{url}: a {protocol}:// store lives in one process's memory, gone "
                             "when it ends (and each worker of a cluster would have its own); "
                             "give --out a directory or a URL of lasting storage (s3://...)")


#: what reading a damaged zarr.json raises (null where a document is: a TypeError)
_DAMAGED: tuple[type[Exception], ...] = (*STORE_READ_ERRORS, TypeError)


def _read_coordinate(group: Any, name: str) -> np.ndarray | None:
    """The values of the coordinate array ``name`` as float64, ``None`` where it cannot be
    read (a chunk file truncated or overwritten)."""
    try:
        return np.asarray(group[name][...], dtype=np.float64)
    except _DAMAGED:
        return None


#: when a process started, which tells it from a later one given the same pid
_process_start = _lease.process_start


def _preparer() -> dict[str, Any]:
    """The run that prepares a new store, as :meth:`Store._create_group` records it."""
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "since": _process_start(os.getpid()), "started": now()}


def _preparer_alive(owner: Any) -> bool | None:
    """Whether the run that :func:`_preparer` recorded is still running: ``True`` (another
    process of this host, alive), ``False`` (ended, or this process, or not recorded: a store
    of an earlier daskcl), ``None`` (a process of another host, which cannot be seen here)."""
    if not isinstance(owner, dict):
        return False
    if owner.get("host") != socket.gethostname():
        return None
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
        return False
    return _lease.pid_alive(pid, owner.get("since"))


def _refuse_live_preparer(url: str, info: Mapping[str, Any], overwrite: bool) -> None:
    """A :class:`SweepError` where the store is being prepared by a run that may still be
    running (two runs started on one --out at once): the second replaced the first's store
    while the first was still writing it.  A run on another host cannot be seen from here:
    ``--overwrite`` replaces its store once the user knows it has ended."""
    owner = info.get("preparer")
    alive = _preparer_alive(owner)
    if alive is False:
        return
    assert isinstance(owner, dict)
    who = f"process {owner.get('pid')}, started {owner.get('started')}"
    if alive:
        raise SweepError(f"{url} is being prepared by another run on this machine ({who}); let "
                         "it finish (then --resume, or a plain run, takes it up) or choose "
                         "another --out")
    if not overwrite:
        raise SweepError(f"{url} is being prepared by a run on {owner.get('host')} ({who}), "
                         "which this machine cannot see; if that run has ended, --overwrite "
                         "starts it again; else let it finish or choose another --out")


class Store:
    """A sweep's store: where it is (``url``: a local path, made absolute, or an fsspec URL;
    ``options``: fsspec's) and, once opened, its zarr group and journal, each opened once.

    A run checks it (:meth:`check`, writing nothing), opens it under its lease (:meth:`open`:
    made, replaced or taken up) and fills a new one's arrays (:meth:`create`); its workers
    write the chunks (:meth:`write_chunk`); at its end it folds the journal (:meth:`fold`) and
    records the run (:meth:`record_run`).  :meth:`verify` checks a finished store,
    :meth:`plan` says what a run would do with it."""

    def __init__(self, url: str | os.PathLike[str],
                 options: dict[str, Any] | None = None) -> None:
        self.url = local_url(str(url))
        self.options = options
        self._group: Arrays | None = None
        self._journal: Journal | None = None
        self._lock = threading.Lock()

    @property
    def group(self) -> Any:
        """The store's group, opened for writing once."""
        with self._lock:
            if self._group is None:
                self._group = Arrays(open_group(self.url, "r+", self.options))
            return self._group

    @property
    def journal(self) -> Journal:
        """This process's journal of the store (:mod:`~daskcl.sweep.journal`)."""
        group = self.group
        with self._lock:
            if self._journal is None:
                self._journal = self._journal_of(group)
            return self._journal

    def _journal_of(self, group: Any) -> Journal:
        return Journal(self.url, self.options, _DONE if _BOOK in group else _OLD_DONE)

    @functools.cached_property
    def algo(self) -> str:
        """The store's checksum algorithm."""
        return algorithm(checksum_array(self.group))

    def writer(self) -> Store:
        """This store with its group opened and its checksum algorithm read: done before a
        worker's first chunk computes (a process's first zarr open takes a while)."""
        self.algo  # noqa: B018 (reads and caches it)
        return self

    def reader(self) -> Any:
        """The store's group, read-only."""
        return open_group(self.url, "r", self.options)

    def entries(self) -> list[str] | None:
        """The names at the top of the store (empty if there is nothing), ``None`` for a file."""
        if "://" not in self.url:
            p = os.path.abspath(self.url)
            if not os.path.lexists(p):
                return []
            return sorted(os.listdir(p)) if os.path.isdir(p) else None
        import fsspec

        try:
            fs, path = fsspec.core.url_to_fs(self.url, **(self.options or {}))
            if not fs.exists(path):
                return []
            if not fs.isdir(path):
                return None
            return sorted(posixpath.basename(str(e).rstrip("/")) for e in fs.ls(path, detail=False))
        except Exception as exc:   # an unknown protocol, missing credentials, no network
            why = str(exc).strip().splitlines()
            raise SweepError(f"cannot open the store {self.url}: {type(exc).__name__}"
                             + (f": {why[0]}" if why else "")) from exc

    def check(self, sweep: Sweep, *, resume: bool, overwrite: bool
              ) -> tuple[str, Sweep, Any, list[str]]:
        """What a run would do with the store, deciding it without writing anything:
        ``("create", sweep, None, [])`` (nothing there), ``("replace", sweep, None, entries)``
        (``overwrite``, or a store that daskcl was still preparing) or ``("resume", sweep, group,
        [])`` (the sweep with the envelope axes the store holds, for a GLM envelope; the group
        read-only).  What it would refuse is a :class:`SweepError`, the run's own message."""
        url, options = self.url, self.options
        _refuse_volatile(url)
        entries = self.entries()
        if entries is None:
            raise SweepError(f"{url} exists and is not a zarr group (it is a file); choose another "
                             "--out")
        if entries:
            _lease.refuse_live(url, options)
        if not entries or entries == [_lease.LEASE]:   # nothing, or only a run's lease
            return "create", sweep, None, []
        hint = "move it away or choose another --out"
        links = refuse_odd_entries(url, links=False, hint=hint)
        try:
            existing = self.reader()
            info = read_info(existing)
        except STORE_READ_ERRORS as exc:  # not a zarr group: said below, with what it holds
            _log.debug("daskcl: %s is not a readable zarr group: %s", url, exc)
            existing, info = None, None
        if not _is_ours(info):
            what = (f"exists and is not a zarr group (it holds {listing(entries)})"
                    if existing is None else "is a zarr group that daskcl did not write (it has "
                    "no daskcl attributes)")
            how = (": --overwrite replaces only a store written by daskcl sweep and deletes "
                   "nothing else; choose another --out") if overwrite else "; choose another --out"
            raise SweepError(f"{url} {what}{how}")
        assert isinstance(info, dict)
        newer = newer_format(info)
        if resume and not overwrite and newer:
            raise _newer_error(url, info, "resume")
        same = info.get("identity") == sweep.identity()
        if overwrite or (info.get("preparing") and (resume or same) and not newer):
            if info.get("preparing"):
                _refuse_live_preparer(url, info, overwrite)
            self._refuse_foreign(info, entries)
            return "replace", sweep, None, entries
        if not resume and not (same and not sweep.has_envelope and not newer
                               and not self._any_done(existing)):
            raise SweepError(f"{url} already holds a sweep; pass --resume to finish it or "
                             "--overwrite to start again")
        # resumed; or the same sweep with no chunk done yet (a run that stopped before its first
        # chunk, whose cluster did not start, say): it is taken up as it is
        if links:
            refuse_odd_entries(url, links=True, hint=hint)
        return "resume", self._check_resumed(sweep, existing, info), existing, []

    def _refuse_foreign(self, info: dict[str, Any], entries: list[str]) -> None:
        """A :class:`SweepError` where the store holds what daskcl did not write (it would be
        deleted with the store)."""
        own = own_entries(info)
        foreign = [e for e in entries if e not in own and not TMP_META.fullmatch(e)]
        foreign = foreign or foreign_inside(self.url, self.options,
                                            [e for e in entries if e in own])
        if foreign:
            raise SweepError(f"{self.url} is a daskcl sweep store but also holds "
                             f"{listing(foreign)}, which daskcl did not write; it deletes "
                             "nothing it did not create: move them away or choose another --out")

    def _check_resumed(self, sweep: Sweep, existing: Any, info: dict[str, Any]) -> Sweep:
        """The sweep as the store to be resumed holds it (a GLM envelope's axes), or a
        :class:`SweepError` where the store is of another sweep or damaged."""
        url = self.url
        if sweep.has_envelope:  # the envelope found when the sweep started
            sweep = sweep.with_axes([Axis(a.name, existing[a.name][...], {"envelope": True})
                                     for a in sweep.axes])
        if info.get("identity") != sweep.identity():
            raise SweepError(f"{url} holds a different sweep ({info.get('function')}, axes "
                             f"{info.get('axes')}): {_what_changed(info, sweep)}; resume needs the "
                             "same spec and code, or pass --overwrite / another --out")
        self._check_arrays(info)
        if sweep.func is not None and sweep.func.kind == "python":
            self._check_inputs(sweep)
        kept = info.get("compressor")
        if kept and str(kept) != sweep.compressor:     # not part of the identity: said, not refused
            warnings.warn(f"{url} keeps its codec {kept}: the spec's compressor {sweep.compressor} "
                          "applies to new stores (--overwrite writes the store anew with it)",
                          UserWarning, stacklevel=4)
        return sweep

    def _check_inputs(self, sweep: Sweep) -> None:
        """A :class:`SweepError` where a file that the store's finished chunks read (a module the
        function imports, a data file it opens) changed since, or cannot be read here to tell."""
        diff = inputs.changed(inputs.saved(self.url, self.options))
        if diff:
            said = "; ".join(f"{p} {what}" for p, what in diff[:3]) + (
                f" (and {len(diff) - 3} more)" if len(diff) > 3 else "")
            raise SweepError(f"{self.url}: files that {sweep.function} read for the finished chunks "
                             f"differ now: {said}; resume needs the same code and data, or pass "
                             "--overwrite / another --out")

    def _check_arrays(self, info: Mapping[str, Any]) -> None:
        """Every array the store's attributes list opens from its own metadata (not only from the
        consolidated copy at the top, which a resume writes anew from them); a damaged one is a
        :class:`SweepError` naming it (resume recomputed every chunk, then failed on it with
        zarr's traceback, and verify did not look)."""
        import zarr

        url, options = self.url, self.options
        try:
            group = zarr.open_group(url, mode="r", storage_options=options,
                                    use_consolidated=False)
        except _DAMAGED as exc:
            raise SweepError(f"{url}: its group cannot be opened ({type(exc).__name__}); the "
                             "store is damaged: --overwrite starts it again") from None
        names = [str(n) for n in info.get("arrays") or info.get("outputs") or ()]
        try:
            names += [_DONE, _CHECKSUM] if _BOOK in group else [_OLD_DONE, _OLD_CHECKSUM]
        except _DAMAGED:
            names += [_DONE, _CHECKSUM]
        self._check_groups(group)
        recorded = info.get("array_meta")
        recorded = recorded if isinstance(recorded, dict) else {}
        try:
            consolidated = self.reader()
        except _DAMAGED:
            consolidated = None
        for name in names:
            try:
                arr = group[name]
            except _DAMAGED as exc:
                raise SweepError(f"{url}: the array {name!r} cannot be opened ({type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0] if str(exc) else ''}); the store is "
                                 "damaged: --overwrite starts it again") from None
            if name not in recorded:     # a store of an earlier daskcl records none
                continue
            copies = [arr]
            with contextlib.suppress(*_DAMAGED):
                if consolidated is not None:
                    copies.append(consolidated[name])
            if any(meta_hash(a) != recorded[name] for a in copies):
                raise SweepError(f"{url}: the array {name!r} is not as the sweep wrote it (its "
                                 "metadata: data type, shape, chunks or codecs changed), so its "
                                 "checksums do not say what its values are; the store is damaged: "
                                 "--overwrite starts it again")

    def _check_groups(self, group: Any) -> None:
        """The bookkeeping groups open from their own metadata (a resume consolidates the
        store's metadata at its end, and failed there with zarr's traceback, every chunk
        computed); a damaged one is a :class:`SweepError` naming it."""
        name = _BOOK
        try:
            if _BOOK not in group:
                return
            if inputs.GROUP.rpartition("/")[2] in group[_BOOK]:
                name = inputs.GROUP
                for sub, _ in group[inputs.GROUP].groups():
                    name = f"{inputs.GROUP}/{sub}"
                    group[name]     # opened: its metadata read
        except _DAMAGED as exc:
            raise SweepError(f"{self.url}: the group {name!r} cannot be opened "
                             f"({type(exc).__name__}); the store is damaged: --overwrite starts "
                             "it again") from None

    def _any_done(self, group: Any) -> bool:
        """Whether the store marks any chunk done (unreadable marks count as done: not ours to
        judge here)."""
        try:
            return bool(read_book(group, self._journal_of(group)).done.any())
        except STORE_READ_ERRORS:
            return True

    def open(self, sweep: Sweep, *, resume: bool, overwrite: bool) -> tuple[Sweep, Book | None]:
        """Check the store (:meth:`check`) and open it, under the run's lease.  Returns the
        sweep and the chunks' marks and checksums to resume it (the sweep with the envelope
        axes the store holds, for a GLM envelope; the journal of an earlier run folded in), or
        the sweep and ``None`` where the store was made anew, empty and proven writable, for
        :meth:`create` to fill.  Runs before anything is computed: after a local cluster has
        started (:func:`daskcl.sweep.run` checks the store first, writing nothing, then starts
        the cluster, so that a cluster that does not start leaves no store).

        ``overwrite`` replaces only a store daskcl wrote (its ``daskcl`` attribute says so)
        that holds nothing else; anything else at the store's URL is refused and left as it
        is."""
        action, sweep, _, entries = self.check(sweep, resume=resume, overwrite=overwrite)
        if action == "replace":
            self._remove(entries)
        if action in ("create", "replace"):
            self._create_group(sweep)
            return sweep, None
        book = [_DONE, _CHECKSUM] if _BOOK in self.group else [_OLD_DONE, _OLD_CHECKSUM]
        self._prove_writable([*sweep.output_names, *book])
        self._repair_coordinates(sweep)
        return sweep, self.fold()

    def create(self, sweep: Sweep, envelope: dict[str, Any] | None, *,
               shards: bool = False) -> None:
        """The arrays and attributes of a store just made
        (:func:`~daskcl.sweep.layout.create_arrays`), then its consolidated metadata."""
        create_arrays(sweep, self.group, envelope, shards=shards)
        consolidate(self.url, self.options)

    def read_book(self) -> Book:
        """The chunks' marks and checksums: the bookkeeping arrays and the journal."""
        return read_book(self.group, self.journal)

    def matches(self, sweep: Sweep, index: tuple[int, ...], book: Book) -> bool:
        """Whether chunk ``index`` still holds what ``book`` says was written."""
        return chunk_matches(self.group, sweep.output_names, sweep.chunk_slices(index),
                             book.sums[index].reshape(-1), book.algo)

    def quick(self, nbytes: int) -> bool:
        """Whether writing a chunk of ``nbytes`` (its outputs together) is quick: a small chunk
        (:func:`~daskcl.sweep.chunks.inline`) into a local store."""
        return "://" not in self.url and inline(nbytes)

    def write_chunk(self, sweep: Sweep, index: tuple[int, ...],
                    results: Mapping[str, np.ndarray]) -> None:
        """Write one chunk's values, then record it done with its checksums in the journal."""
        sums = write_chunk(self.group, sweep, index, results, self.algo)
        self.journal.append(int(np.ravel_multi_index(index, sweep.grid)), sums)

    def fold(self) -> Book:
        """Write the journal's records into the bookkeeping arrays, then delete the journal
        files folded; returns the marks and checksums.  Only the run holding the lease folds,
        when no chunk of its own is being written."""
        group, journal = self.group, self.journal
        journal.close()
        before = read_book(group)
        book = Book(before.done.copy(), before.sums.copy(), before.algo)
        names = journal.apply(book, int(book.sums.shape[-1]))
        if names:
            changed = (book.done != before.done) | np.any(book.sums != before.sums, axis=-1)
            write_book(group, book, changed)
            journal.remove(names)
        return book

    def record_run(self, devices: Iterable[str], run: Mapping[str, Any]) -> None:
        """Add one run's record to the store's attributes, then consolidate its metadata."""
        record_run(self.group, devices, run)
        consolidate(self.url, self.options)

    def _repair_coordinates(self, sweep: Sweep) -> None:
        """Write again the coordinate arrays of a resumed store that no longer hold the spec's
        axes: they have no checksums, and a deleted one read as zeros (its fill value), a
        truncated one not at all, while every chunk still matched and the resume computed
        nothing (the axes' values are the spec's: its identity is the store's)."""
        group, bad = self.group, []
        for a in sweep.axes:
            got, want = _read_coordinate(group, a.name), coordinate(a)
            if got is None or got.shape != want.shape or not np.array_equal(got, want):
                group[a.name][...] = want
                bad.append(a.name)
        if bad:
            warnings.warn(f"{self.url}: the coordinate array(s) {listing(bad)} no longer held the "
                          "sweep's axes (corrupted or deleted) and were written again",
                          RuntimeWarning, stacklevel=4)

    def damaged_coordinates(self) -> list[str]:
        """The coordinate arrays of a sweep store that no longer hold the axes its identity
        records (corrupted or deleted: they have no checksums of their own; ``--resume`` writes
        them again); every axis where they differ (the identity hashes the axes together), those
        that cannot be read where only they do; ``[]`` where they match, or where the store
        records no hash of its axes (written by an early daskcl)."""
        group = self.reader()
        info = read_info(group) or {}
        parts = info.get("identity_parts")
        want = parts.get("axes") if isinstance(parts, dict) else None
        names = [str(n) for n in info.get("axes") or ()]
        if not isinstance(want, str) or not names:
            return []
        values = {n: _read_coordinate(group, n) for n in names}
        unreadable = [n for n, v in values.items() if v is None]
        if unreadable:
            return unreadable
        got = axes_hash((n, v) for n, v in values.items() if v is not None)
        return [] if got == want else names

    def _create_group(self, sweep: Sweep) -> None:
        """A new, empty group at the store's URL, which holds nothing but this run's lease (its lease
        keeps other runs out meanwhile).  Its marker is computed first and written with the group,
        in one write, so that a spec that cannot be evaluated (a bad ``DASKCL_LIBRARY``) fails as
        itself and leaves no group behind."""
        import zarr
        from zarr.errors import ContainsArrayError, ContainsGroupError

        # the spec's identity too: a run of the same spec that finds the store still being
        # prepared (its run failed or was stopped before its first chunk: a GLM envelope that
        # did not converge, Ctrl-C) takes it up without --resume or --overwrite
        marker = {"daskcl_format": FORMAT, "daskcl": json.dumps(
            {"preparing": True, "format": FORMAT, "identity": sweep.identity(),
             "arrays": [*array_names(sweep), _BOOK], "preparer": _preparer()})}
        try:
            group = zarr.create_group(self.url, overwrite=False, attributes=marker,
                                      storage_options=self.options)
        except (ContainsGroupError, ContainsArrayError, FileExistsError) as exc:
            raise SweepError(f"{self.url} was created by another run meanwhile (two runs started on "
                             "one --out at once); let that run finish, or choose another --out") \
                from exc
        except Exception as exc:
            raise write_error(self.url, exc) from exc
        with self._lock:
            self._group = Arrays(group)

    def _remove(self, names: list[str]) -> None:
        """Delete the top-level entries ``names`` of the store (links themselves, not their
        targets), but the run's lease; the group's ``zarr.json`` last, so that a run killed
        meanwhile leaves a store that is still known as daskcl's."""
        names = sorted((n for n in names if n != _lease.LEASE), key=lambda n: n == "zarr.json")
        url = self.url
        try:
            if "://" not in url:
                root = os.path.abspath(url)
                for n in names:
                    p = os.path.join(root, n)
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p)
                    else:
                        os.unlink(p)
                return
            import fsspec

            fs, path = fsspec.core.url_to_fs(url, **(self.options or {}))
            for n in names:
                fs.rm(posixpath.join(path, n), recursive=True)
        except OSError as exc:
            raise write_error(url, exc) from exc

    def _prove_writable(self, arrays: list[str]) -> None:
        """Write and delete a probe at the top of the store and where each array's chunks go."""
        probe = f"daskcl-probe-{uuid.uuid4().hex[:12]}"
        keys = [probe, *(f"{a}/c/{probe}" for a in arrays)]
        url = self.url
        try:
            if "://" not in url:
                root = os.path.abspath(url)
                for k in keys:
                    p = os.path.join(root, *k.split("/"))
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with open(p, "wb"):
                        pass
                    os.unlink(p)
                return
            import fsspec

            fs, path = fsspec.core.url_to_fs(url, **(self.options or {}))
            for k in keys:
                fs.pipe_file(posixpath.join(path, k), b"")
                fs.rm_file(posixpath.join(path, k))
        except OSError as exc:
            raise write_error(url, exc) from exc

    def verify(self) -> tuple[int, list[tuple[int, ...]], list[tuple[int, ...]]]:
        """Read every finished chunk back and compare it with its checksums (:func:`verify`):
        the number of chunks, those that no longer match, those not finished."""
        url = self.url
        refuse_odd_entries(url, links=True, hint="move it away, then verify again")
        try:
            group = self.reader()
            info = read_info(group)
        except STORE_READ_ERRORS as exc:
            raise SweepError(f"{url} is not a zarr store ({type(exc).__name__}: {exc})") from None
        if info is None or not _is_ours(info) or info.get("preparing"):
            raise SweepError(f"{url} is not a finished daskcl sweep store (its daskcl attributes "
                             "are missing or say it was never prepared)")
        if newer_format(info):
            raise _newer_error(url, info, "verify")
        if _BOOK not in group and _OLD_CHECKSUM not in group:
            raise SweepError(f"{url} has no checksums (written by daskcl {info.get('version')}, "
                             "before sweeps recorded them); there is nothing to verify against")
        self._check_arrays(info)
        outputs = [str(o) for o in info["outputs"]]
        chunks = [int(c) for c in info["chunks"]]
        book = read_book(group, self._journal_of(group))
        grid = book.done.shape
        shape = group[outputs[0]].shape[:len(grid)]
        bad: list[tuple[int, ...]] = []
        missing: list[tuple[int, ...]] = []
        for idx in np.ndindex(*grid):
            if not book.done[idx]:
                missing.append(idx)
                continue
            sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))
            if not chunk_matches(group, outputs, sl, book.sums[idx].reshape(-1), book.algo):
                bad.append(idx)
        return math.prod(grid), bad, missing



    def plan(self, sweep: Sweep, *, resume: bool, overwrite: bool) -> str:
        """What a run would do with the store, as ``--dry-run`` says it: the sweep's plan with
        the chunks already done, and the store (new, replaced or resumed); what a run would
        refuse is the run's :class:`SweepError`."""
        action, sweep, group, _ = self.check(sweep, resume=resume, overwrite=overwrite)
        done, note = None, ""
        if action == "resume":
            try:
                done = int(read_book(group, self._journal_of(group)).done.sum())
            except STORE_READ_ERRORS as exc:
                note = (f"note      the done marks cannot be read ({type(exc).__name__}); the "
                        "plan counts no chunk done\n")
        what = {"create": " (new)", "replace": " (replaced: --overwrite)"}.get(action, "")
        return f"{note}{sweep.plan(done, store=self.url)}\nstore     {self.url}{what}"


def verify(url: str, options: dict[str, Any] | None = None
           ) -> tuple[int, list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Read every finished chunk of a sweep store and compare it with its checksums.

    ``daskcl sweep SPEC --out STORE --resume`` computes both kinds of chunk returned again.

    Parameters
    ----------
    url : str
        The store: a directory or an fsspec URL.
    options : dict, optional
        fsspec options of the store.

    Returns
    -------
    n_chunks : int
        The number of chunks of the sweep.
    bad : list of tuple
        The finished chunks (their indices on the grid of chunks) that no longer match their
        checksums (corrupted or deleted).
    missing : list of tuple
        The chunks not finished yet.

    Raises
    ------
    SweepError
        Not a finished daskcl sweep store, or one without checksums.
    """
    return Store(url, options).verify()
