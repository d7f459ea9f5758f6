# SPDX-License-Identifier: GPL-2.0-or-later
"""The zarr v3 store of a :class:`daskcl.sweep.Sweep`: its layout, who may overwrite it, the
chunk write protocol and its checksums.

Layout (``format`` ``daskcl-sweep/3``), as ``xr.open_zarr(store)`` reads it with no warning:

- the result array(s), float64, each with a ``long_name`` (``"pnorm(q, mean, sd)"``);
- one coordinate array per axis, with a ``long_name``; integers where the spec gave integers
  (``values`` or ``arange`` of integers) and every value is one (int32, or int64 beyond int32's
  range), float64 otherwise; a GLM's ``grad`` also has a ``coefficient`` coordinate holding
  the coefficients' names;
- the bookkeeping, in the sub-group ``_daskcl/`` (which xarray does not show as data):
  ``_daskcl/checksum`` (a checksum per chunk and output, of the algorithm its ``algorithm``
  attribute names: ``crc32c``, or ``crc32`` where Google's CRC-32C library is not found) and
  ``_daskcl/done`` (one ``uint8`` mark per chunk);
- the group's attributes, every one a string or a number as NetCDF takes them:
  ``Conventions = "CF-1.10"``, ``title``, ``source``, ``history`` (one line per run, resumes
  included), ``daskcl_format``, ``daskcl_version``, ``daskcl_function``, ``daskcl_identity``,
  ``daskcl_created``, ``daskcl_spec`` (the spec as JSON), ``daskcl_spec_toml`` (its text) and
  ``daskcl``: everything daskcl records (spec, identity and its parts, axes, outputs, chunks,
  envelope, coefficients, devices, the log of every run) as one JSON string, read by
  :func:`read_info`;
- consolidated metadata (zarr v3's ``consolidate_metadata``), written once the arrays exist
  and again after each run.

Stores of ``format`` ``daskcl-sweep/2`` (the same layout, every checksum a CRC-32) and
``daskcl-sweep/1`` (also ``_done`` and ``_checksum`` at the top, ``daskcl`` a nested attribute)
are still read, resumed and verified, each with its own checksums.

The result arrays are compressed with the spec's codec (``sweep.compressor``, recorded as
``compressor`` in the ``daskcl`` attribute, ``daskcl_compressor``, and in each array's zarr
metadata).  A task's chunk is one or several zarr chunks (of at most 2^20 values, each its own
file); :func:`create_arrays` can store each task's chunk as one zarr v3 shard instead (one
file a task), which ``benchmarks/bench_store.py`` measures: on local disk the separate files
are written faster.

A chunk is written by :func:`write_chunk`: its zarr chunks (each by its own call, encoded in
parallel; the checksum of the values computed meanwhile), then the checksum, then its mark;
so a chunk is either complete and marked, or written again (a writer killed between the
writes leaves the chunk unmarked).  A marked chunk counts as done only if it still matches its
checksums (:func:`chunk_matches`): a chunk corrupted or deleted since is written again.
Chunk writes change no metadata, so the consolidated metadata stays true while a sweep runs.

The store is known as daskcl's by its ``daskcl`` attribute (``format``); ``overwrite`` replaces
only such a store, and only where it holds nothing but what daskcl wrote there: its arrays'
metadata and chunks, each a regular file, a chunk's key one index per dimension of its array,
within the grid of chunks (or shards) that the array's zarr metadata gives.  A store of a newer format
than this module's is neither resumed nor verified (its checksums may be unknown here): the
error says to upgrade.  :func:`open_store` applies these rules before anything is computed,
:func:`verify` checks a finished store.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import math
import os
import posixpath
import re
import shutil
import socket
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
    algorithm,
    checksum,
    chunk_marked,
    chunk_matches,
    done_array,
    keep_freed_buffers,
    new_algorithm,
    read_done,
    write_chunk,
    write_error,
)
from .chunks import DONE as _DONE
from .chunks import OLD_CHECKSUM as _OLD_CHECKSUM
from .chunks import OLD_DONE as _OLD_DONE
from .contents import (
    TMP_META,
    foreign_inside,
    own_entries,
    read_local_json,
    refuse_odd_entries,
)
from .spec import Axis, Sweep, SweepError, axes_hash, jsonable, listing

__all__ = [
    "CRC32",
    "CRC32C",
    "DISK_FULL",
    "FORMAT",
    "STORE_READ_ERRORS",
    "algorithm",
    "check_store",
    "checksum",
    "chunk_marked",
    "chunk_matches",
    "codecs",
    "consolidate",
    "create_arrays",
    "damaged_coordinates",
    "exists",
    "keep_freed_buffers",
    "local_url",
    "new_algorithm",
    "newer_format",
    "open_group",
    "open_result",
    "open_store",
    "read_done",
    "read_info",
    "record_run",
    "verify",
    "write_chunk",
    "write_error",
]

_log = logging.getLogger("daskcl.sweep")

#: the ``format`` of the ``daskcl`` attribute of a store this module writes
FORMAT = "daskcl-sweep/3"
#: the formats this module reads: its own, the second (CRC-32 checksums) and the first
#: (also bookkeeping at the top of the store and a nested attribute)
_FORMATS = ("daskcl-sweep/1", "daskcl-sweep/2", FORMAT)
_NESTED_FORMAT = "daskcl-sweep/1"


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
        this module's docstring).
    """
    return open_group(local_url(str(out)), "r", storage_options)


def exists(url: str, storage_options: dict[str, Any] | None = None) -> bool:
    """Whether anything is at ``url``: a file, or a directory that is not empty."""
    entries = _entries(url, storage_options)
    return entries is None or bool(entries)


def read_info(group: Any) -> dict[str, Any] | None:
    """What daskcl recorded in a store: its ``daskcl`` attribute, a JSON string (or, in a
    ``daskcl-sweep/1`` store, a nested mapping); ``None`` where there is none or it is not
    JSON of a mapping."""
    info = group.attrs.get("daskcl")
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except ValueError:
            return None
    return dict(info) if isinstance(info, dict) else None


def codecs(compressor: str) -> list[Any] | None:
    """The zarr v3 compressors of ``sweep.compressor`` (``NAME:LEVEL`` or ``"none"``, as
    :func:`daskcl.sweep.spec.parse_compressor` spells it); ``None`` for ``"none"``."""
    from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec

    from .spec import parse_compressor

    name, _, level = parse_compressor(compressor).partition(":")
    if name == "none":
        return None
    if name == "blosc-lz4":
        return [BloscCodec(cname="lz4", clevel=int(level), shuffle="shuffle")]
    if name == "blosc-zstd":
        return [BloscCodec(cname="zstd", clevel=int(level), shuffle="shuffle")]
    if name == "zstd":
        return [ZstdCodec(level=int(level))]
    return [GzipCodec(level=int(level))]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _info(sweep: Sweep, envelope: dict[str, Any] | None, sharded: bool) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": __version__,
        "function": sweep.function,
        "description": sweep.description,
        "spec": jsonable(sweep.spec),
        "spec_toml": sweep.text,
        "identity": sweep.identity(),
        "identity_parts": sweep.identity_parts(),
        "axes": [a.name for a in sweep.axes],
        "outputs": list(sweep.output_names),
        "arrays": _arrays(sweep),
        "chunks": list(sweep.chunks),
        "store_chunks": list(sweep.store_chunks),
        "compressor": sweep.compressor,
        "shards": list(sweep.chunks) if sharded else None,
        "created": _now(),
        "envelope": envelope,
        "coefficients": list(sweep.glm.names) if sweep.glm is not None else None,
        "devices": [],
        "runs": [],
    }


def _arrays(sweep: Sweep) -> list[str]:
    """The top-level arrays of the sweep's store (results and coordinates)."""
    coef = ["coefficient"] if sweep.glm is not None else []
    return [*sweep.output_names, *(a.name for a in sweep.axes), *coef]


def _write_info(group: Any, info: dict[str, Any]) -> None:
    """The group's attributes: CF's, the flat ``daskcl_*`` scalars and ``daskcl`` as JSON."""
    runs = info.get("runs") or []
    created = str(info.get("created", ""))
    history = [f"{created} daskcl {info.get('version')}: created for sweep "
               f"{info.get('function')}"] if created else []
    for r in runs:
        how = "resumed" if r.get("resumed") else "ran"
        history.append(f"{r.get('finished')} daskcl {r.get('version', info.get('version'))}: "
                       f"{how} sweep {info.get('function')}: {r.get('chunks_computed')} chunks "
                       f"computed, {r.get('chunks_repaired', 0)} repaired in "
                       f"{r.get('seconds')} s")
    attrs: dict[str, Any] = {
        "Conventions": "CF-1.10",
        "title": str(info.get("description") or f"daskcl sweep of {info.get('function')}"),
        "source": f"daskcl {info.get('version')}",
        "history": "\n".join(history),
        "daskcl_format": str(info.get("format")),
        "daskcl_version": str(info.get("version")),
        "daskcl_function": str(info.get("function")),
        "daskcl_identity": str(info.get("identity")),
        "daskcl_created": created,
        "daskcl_spec": json.dumps(info.get("spec"), sort_keys=True),
        "daskcl": json.dumps(info, sort_keys=True),
    }
    if info.get("compressor"):
        attrs["daskcl_compressor"] = str(info["compressor"])
    if info.get("spec_toml"):
        attrs["daskcl_spec_toml"] = str(info["spec_toml"])
    group.attrs.put(attrs)  # replaces them all: the preparing marker goes


def consolidate(url: str, options: dict[str, Any] | None = None) -> None:
    """Write the store's consolidated metadata (zarr v3's, which zarr warns is not yet in the
    v3 specification: xarray reads it, and warns where it is missing)."""
    import zarr

    store: Any = url
    if "://" in url:
        from zarr.storage import FsspecStore

        store = FsspecStore.from_url(url, storage_options=options)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")
        zarr.consolidate_metadata(store)
    _unlist_lease(url, options)


def _unlist_lease(url: str, options: dict[str, Any] | None) -> None:
    """Leave the run's lease out of the consolidated metadata: it goes with the run."""
    if "://" not in url:
        path = os.path.join(os.path.abspath(url), "zarr.json")
        meta = read_local_json(path)
    else:
        import fsspec

        fs, root = fsspec.core.url_to_fs(url, **(options or {}))
        path = posixpath.join(str(root), "zarr.json")
        try:
            fs.invalidate_cache(path)     # zarr wrote it through another handle
            meta = json.loads(fs.cat_file(path))
        except Exception:    # not readable now: the lease stays listed (harmless), not fatal
            _log.info("daskcl: %s cannot be read to unlist the lease", path, exc_info=True)
            return
    listed = (meta.get("consolidated_metadata") or {}).get("metadata") if isinstance(
        meta, dict) else None
    if not isinstance(listed, dict) or _lease.LEASE not in listed:
        return
    for key in [k for k in listed if _lease.is_lease_file(k)]:
        del listed[key]
    data = json.dumps(meta, indent=2).encode()
    if "://" in url:
        fs.pipe_file(path, data)
        return
    tmp = f"{path}.daskcl-{uuid.uuid4().hex[:12]}"     # TMP_META
    with open(tmp, "xb") as f:
        f.write(data)
    os.replace(tmp, path)


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


def check_store(sweep: Sweep, url: str, *, resume: bool, overwrite: bool,
                options: dict[str, Any] | None = None) -> tuple[str, Sweep, Any, list[str]]:
    """What a run would do with the store at ``url``, deciding it without writing anything:
    ``("create", sweep, None, [])`` (nothing there), ``("replace", sweep, None, entries)``
    (``overwrite``, or a store that daskcl was still preparing) or ``("resume", sweep, group,
    [])`` (the sweep with the envelope axes the store holds, for a GLM envelope; the group
    read-only).  What it would refuse is a :class:`SweepError`, the run's own message."""
    _refuse_volatile(url)
    entries = _entries(url, options)
    if entries is None:
        raise SweepError(f"{url} exists and is not a zarr group (it is a file); choose another "
                         "--out")
    if entries:
        _lease.refuse_live(url, options)
    if not entries or _only_lease(url, options, entries):
        return "create", sweep, None, []
    hint = "move it away or choose another --out"
    links = refuse_odd_entries(url, links=False, hint=hint)
    try:
        existing = open_group(url, "r", options)
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
        own = own_entries(info)
        foreign = [e for e in entries if e not in own and not TMP_META.fullmatch(e)]
        foreign = foreign or foreign_inside(url, options, [e for e in entries if e in own])
        if foreign:
            raise SweepError(f"{url} is a daskcl sweep store but also holds {listing(foreign)}, "
                             "which daskcl did not write; it deletes nothing it did not create: "
                             "move them away or choose another --out")
        return "replace", sweep, None, entries
    if not resume and not (same and not sweep.has_envelope and not newer
                           and not _any_done(existing, sweep)):
        raise SweepError(f"{url} already holds a sweep; pass --resume to finish it or "
                         "--overwrite to start again")
    # resumed; or the same sweep with no chunk done yet (a run that stopped before its first
    # chunk, whose cluster did not start, say): it is taken up as it is
    if links:
        refuse_odd_entries(url, links=True, hint=hint)
    if sweep.has_envelope:  # the envelope found when the sweep started
        sweep = sweep.with_axes([Axis(a.name, existing[a.name][...], {"envelope": True})
                                 for a in sweep.axes])
    if info.get("identity") != sweep.identity():
        raise SweepError(f"{url} holds a different sweep ({info.get('function')}, axes "
                         f"{info.get('axes')}): {_what_changed(info, sweep)}; resume needs the "
                         "same spec and code, or pass --overwrite / another --out")
    _check_arrays(url, info, options)
    if sweep.func is not None and sweep.func.kind == "python":
        _check_inputs(url, options, sweep)
    kept = info.get("compressor")
    if kept and str(kept) != sweep.compressor:     # not part of the identity: said, not refused
        warnings.warn(f"{url} keeps its codec {kept}: the spec's compressor {sweep.compressor} "
                      "applies to new stores (--overwrite writes the store anew with it)",
                      UserWarning, stacklevel=3)
    return "resume", sweep, existing, []


def _check_inputs(url: str, options: dict[str, Any] | None, sweep: Sweep) -> None:
    """A :class:`SweepError` where a file that the store's finished chunks read (a module the
    function imports, a data file it opens) changed since, or cannot be read here to tell."""
    diff = inputs.changed(inputs.saved(url, options))
    if diff:
        said = "; ".join(f"{p} {what}" for p, what in diff[:3]) + (
            f" (and {len(diff) - 3} more)" if len(diff) > 3 else "")
        raise SweepError(f"{url}: files that {sweep.function} read for the finished chunks "
                         f"differ now: {said}; resume needs the same code and data, or pass "
                         "--overwrite / another --out")


#: what reading a damaged zarr.json raises (null where a document is: a TypeError)
_DAMAGED: tuple[type[Exception], ...] = (*STORE_READ_ERRORS, TypeError)


def _meta_names(info: Mapping[str, Any]) -> list[str]:
    """The arrays whose metadata a store records (:func:`_meta_hash`)."""
    return [str(n) for n in info.get("arrays") or ()] + [_DONE, _CHECKSUM]


def _meta_hash(arr: Any) -> str:
    """A hash of what an array's metadata says its bytes mean: data type, shape, chunk grid
    and keys, codecs, fill value (not its attributes)."""
    meta = {k: v for k, v in arr.metadata.to_dict().items() if k != "attributes"}
    return hashlib.sha256(json.dumps(meta, sort_keys=True, default=str).encode()).hexdigest()


def _check_arrays(url: str, info: Mapping[str, Any], options: dict[str, Any] | None) -> None:
    """Every array the store's attributes list opens from its own metadata (not only from the
    consolidated copy at the top, which a resume writes anew from them); a damaged one is a
    :class:`SweepError` naming it (resume recomputed every chunk, then failed on it with
    zarr's traceback, and verify did not look)."""
    import zarr

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
    recorded = info.get("array_meta")
    recorded = recorded if isinstance(recorded, dict) else {}
    try:
        consolidated = open_group(url, "r", options)
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
        if any(_meta_hash(a) != recorded[name] for a in copies):
            raise SweepError(f"{url}: the array {name!r} is not as the sweep wrote it (its "
                             "metadata: data type, shape, chunks or codecs changed), so its "
                             "checksums do not say what its values are; the store is damaged: "
                             "--overwrite starts it again")


def open_store(sweep: Sweep, url: str, *, resume: bool, overwrite: bool,
               options: dict[str, Any] | None) -> tuple[Sweep, Any, np.ndarray | None]:
    """Check the store (:func:`check_store`) and open it.  Returns the sweep, the group and
    its done marks to resume it (the sweep with the envelope axes the store holds, for a GLM
    envelope), or the sweep, a fresh, empty group (proven writable) and ``None`` for
    :func:`create_arrays` to fill.  Runs before anything is computed: after a local cluster
    has started (:func:`daskcl.sweep.run` checks the store first, writing nothing, then starts
    the cluster, so that a cluster that does not start leaves no store).

    ``overwrite`` replaces only a store daskcl wrote (its ``daskcl`` attribute says so) that
    holds nothing else; anything else at ``url`` is refused and left as it is."""
    action, sweep, _, entries = check_store(sweep, url, resume=resume, overwrite=overwrite,
                                            options=options)
    if action == "replace":
        _remove(url, options, entries)
    if action in ("create", "replace"):
        return sweep, _create(sweep, url, options), None
    group = open_group(url, "r+", options)
    book = [_DONE, _CHECKSUM] if _BOOK in group else [_OLD_DONE, _OLD_CHECKSUM]
    _prove_writable(url, options, [*sweep.output_names, *book])
    _repair_coordinates(group, sweep, url)
    return sweep, group, read_done(group, sweep.grid)


def _read_coordinate(group: Any, name: str) -> np.ndarray | None:
    """The values of the coordinate array ``name`` as float64, ``None`` where it cannot be
    read (a chunk file truncated or overwritten)."""
    try:
        return np.asarray(group[name][...], dtype=np.float64)
    except _DAMAGED:
        return None


def _repair_coordinates(group: Any, sweep: Sweep, url: str) -> None:
    """Write again the coordinate arrays of a resumed store that no longer hold the spec's
    axes: they have no checksums, and a deleted one read as zeros (its fill value), a
    truncated one not at all, while every chunk still matched and the resume computed
    nothing (the axes' values are the spec's: its identity is the store's)."""
    bad = []
    for a in sweep.axes:
        got, want = _read_coordinate(group, a.name), _coordinate(a)
        if got is None or got.shape != want.shape or not np.array_equal(got, want):
            group[a.name][...] = want
            bad.append(a.name)
    if bad:
        warnings.warn(f"{url}: the coordinate array(s) {listing(bad)} no longer held the "
                      "sweep's axes (corrupted or deleted) and were written again",
                      RuntimeWarning, stacklevel=4)


def damaged_coordinates(url: str, options: dict[str, Any] | None = None) -> list[str]:
    """The coordinate arrays of a sweep store that no longer hold the axes its identity
    records (corrupted or deleted: they have no checksums of their own; ``--resume`` writes
    them again); every axis where they differ (the identity hashes the axes together), those
    that cannot be read where only they do; ``[]`` where they match, or where the store
    records no hash of its axes (written by an early daskcl)."""
    url = local_url(url)
    group = open_group(url, "r", options)
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


def _any_done(group: Any, sweep: Sweep) -> bool:
    """Whether the store marks any chunk done (unreadable marks count as done: not ours to
    judge here)."""
    try:
        return bool(read_done(group, sweep.grid).any())
    except STORE_READ_ERRORS:
        return True


#: when a process started, which tells it from a later one given the same pid
_process_start = _lease.process_start


def _preparer() -> dict[str, Any]:
    """The run that prepares a new store, as :func:`_create` records it."""
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "since": _process_start(os.getpid()), "started": _now()}


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


def _create(sweep: Sweep, url: str, options: dict[str, Any] | None) -> Any:
    """A new, empty group at ``url``, which holds nothing but this run's lease (its lease
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
         "arrays": [*_arrays(sweep), _BOOK], "preparer": _preparer()})}
    try:
        return zarr.create_group(url, overwrite=False, attributes=marker,
                                 storage_options=options)
    except (ContainsGroupError, ContainsArrayError, FileExistsError) as exc:
        raise SweepError(f"{url} was created by another run meanwhile (two runs started on "
                         "one --out at once); let that run finish, or choose another --out") \
            from exc
    except Exception as exc:
        raise write_error(url, exc) from exc


def _only_lease(url: str, options: dict[str, Any] | None, entries: list[str]) -> bool:
    """Whether the store holds nothing but a run's lease (a run that stopped before it made
    the store, or this run's own)."""
    return entries == [_lease.LEASE]


def _entries(url: str, options: dict[str, Any] | None) -> list[str] | None:
    """The names at the top of the store (empty if there is nothing), ``None`` for a file."""
    if "://" not in url:
        p = os.path.abspath(url)
        if not os.path.lexists(p):
            return []
        return sorted(os.listdir(p)) if os.path.isdir(p) else None
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url, **(options or {}))
        if not fs.exists(path):
            return []
        if not fs.isdir(path):
            return None
        return sorted(posixpath.basename(str(e).rstrip("/")) for e in fs.ls(path, detail=False))
    except Exception as exc:   # an unknown protocol, missing credentials, no network
        why = str(exc).strip().splitlines()
        raise SweepError(f"cannot open the store {url}: {type(exc).__name__}"
                         + (f": {why[0]}" if why else "")) from exc


def _remove(url: str, options: dict[str, Any] | None, names: list[str]) -> None:
    """Delete the top-level entries ``names`` of the store (links themselves, not their
    targets), but the run's lease; the group's ``zarr.json`` last, so that a run killed
    meanwhile leaves a store that is still known as daskcl's."""
    names = sorted((n for n in names if n != _lease.LEASE), key=lambda n: n == "zarr.json")
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

        fs, path = fsspec.core.url_to_fs(url, **(options or {}))
        for n in names:
            fs.rm(posixpath.join(path, n), recursive=True)
    except OSError as exc:
        raise write_error(url, exc) from exc


def _prove_writable(url: str, options: dict[str, Any] | None, arrays: list[str]) -> None:
    """Write and delete a probe at the top of the store and where each array's chunks go."""
    probe = f"daskcl-probe-{uuid.uuid4().hex[:12]}"
    keys = [probe, *(f"{a}/c/{probe}" for a in arrays)]
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

        fs, path = fsspec.core.url_to_fs(url, **(options or {}))
        for k in keys:
            fs.pipe_file(posixpath.join(path, k), b"")
            fs.rm_file(posixpath.join(path, k))
    except OSError as exc:
        raise write_error(url, exc) from exc


def _function_call(sweep: Sweep) -> str:
    """The result's ``long_name``: the function and its numeric parameters, ``pnorm(q, mean,
    sd)``."""
    if sweep.func is None:
        return sweep.function
    flags = set(sweep.func.flags)
    params = [p for p in sweep.func.params if p not in flags] or [a.name for a in sweep.axes]
    return f"{sweep.function}({', '.join(params)})"


def _coordinate(axis: Axis) -> np.ndarray:
    """An axis's values as its coordinate: integers where the spec gave integers (``values``
    or ``arange``) and every value is one (int32 where they fit, as NetCDF-3 takes them),
    float64 otherwise."""
    v = axis.values
    given = axis.source.get("values", axis.source.get("arange"))
    if (isinstance(given, list) and given and all(isinstance(t, int) and not isinstance(t, bool)
                                                   for t in given)
            and np.all(np.isfinite(v)) and np.all(v == np.round(v))):
        i32 = np.iinfo(np.int32)
        if v.min() >= i32.min and v.max() <= i32.max:
            return v.astype(np.int32)
        if np.all(np.abs(v) <= 2.0 ** 53):
            return v.astype(np.int64)
    return np.asarray(v, dtype=np.float64)


def create_arrays(sweep: Sweep, group: Any, envelope: dict[str, Any] | None,
                  url: str | None = None, options: dict[str, Any] | None = None, *,
                  shards: bool = False) -> None:
    """The result, coordinate and bookkeeping arrays of a new store, its attributes and (given
    the store's ``url``) its consolidated metadata.  ``shards``: a task whose chunk spans
    several zarr chunks stores them as one zarr v3 shard, one file a task (default: one file a
    zarr chunk)."""
    compressors = codecs(sweep.compressor)
    call = _function_call(sweep)
    sharded = shards and sweep.store_chunks != sweep.chunks
    # each array's attributes go with its metadata: one write of it, not two
    for o in sweep.outputs:
        if sweep.glm is None:
            long_name = call
        elif o.name == "qf":
            long_name = "quadratic form of the GLM's log posterior (f2)"
        else:
            long_name = "gradient of qf by coefficient (f3)"
        group.create_array(o.name, shape=o.shape, chunks=o.store_chunks,
                           shards=o.chunks if sharded else None,
                           dtype="float64", fill_value=float("nan"),
                           dimension_names=list(o.dims), compressors=compressors,
                           attributes={"long_name": long_name})
    for a in sweep.axes:
        values = _coordinate(a)
        arr = group.create_array(a.name, shape=values.shape, chunks=values.shape,
                                 dtype=values.dtype, dimension_names=[a.name],
                                 attributes={"long_name": (
                                     f"coefficient {a.name}" if sweep.glm is not None
                                     else f"{a.name} (argument of {sweep.function})")})
        arr[...] = values
    if sweep.glm is not None:
        names = [str(n) for n in sweep.glm.names]
        arr = group.create_array("coefficient", shape=(len(names),), chunks=(len(names),),
                                 dtype=str, dimension_names=["coefficient"],
                                 attributes={"long_name": "coefficient of the GLM"})
        arr[...] = np.array(names)
    book = group.create_group(_BOOK)
    chunk_dims = [f"{a.name}_chunk" for a in sweep.axes]
    book.create_array("done", shape=sweep.grid, chunks=(1,) * len(sweep.grid), dtype="uint8",
                      fill_value=0, compressors=None, dimension_names=chunk_dims)
    nout = len(sweep.output_names)
    book.create_array("checksum", shape=(*sweep.grid, nout),
                      chunks=(1,) * len(sweep.grid) + (nout,), dtype="uint32", fill_value=0,
                      compressors=None, dimension_names=[*chunk_dims, "output"],
                      attributes={"algorithm": new_algorithm()})
    info = _info(sweep, envelope, sharded)
    info["array_meta"] = {name: _meta_hash(group[name]) for name in _meta_names(info)}
    _write_info(group, info)
    if url is not None:
        consolidate(url, options)


def record_run(group: Any, devices: Iterable[str], run: Mapping[str, Any],
               url: str | None = None, options: dict[str, Any] | None = None) -> None:
    """Add the devices that computed and one run's record (``finished`` and ``version`` are
    filled in) to the store's attributes (the run log and ``history`` keep every run), and
    (given the store's ``url``) write its consolidated metadata again."""
    info = read_info(group) or {}
    info["devices"] = sorted(set(info.get("devices") or []) | set(devices))
    info["runs"] = [*(info.get("runs") or []), {
        "finished": _now(), "version": __version__, **run}]
    if info.get("format") != _NESTED_FORMAT:
        _write_info(group, info)
    else:  # a daskcl-sweep/1 store keeps its nested attribute
        group.attrs["daskcl"] = info
    if url is not None:
        consolidate(url, options)


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
    url = local_url(url)
    refuse_odd_entries(url, links=True, hint="move it away, then verify again")
    try:
        group = open_group(url, "r", options)
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
    _check_arrays(url, info, options)
    outputs = [str(o) for o in info["outputs"]]
    chunks = [int(c) for c in info["chunks"]]
    grid = tuple(done_array(group).shape)
    shape = group[outputs[0]].shape[:len(grid)]
    done = read_done(group, grid)
    bad: list[tuple[int, ...]] = []
    missing: list[tuple[int, ...]] = []
    for idx in np.ndindex(*grid):
        if not done[idx]:
            missing.append(idx)
            continue
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))
        if not chunk_matches(group, outputs, sl, idx):
            bad.append(idx)
    return math.prod(grid), bad, missing
