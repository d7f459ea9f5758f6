# SPDX-License-Identifier: GPL-2.0-or-later
"""A new sweep store's layout: its arrays, their codecs, its attributes and consolidated
metadata (:func:`create_arrays`), and the run log added at each run's end (:func:`record_run`).

Layout (``format`` ``daskcl-sweep/4``), as ``xr.open_zarr(store)`` reads it with no warning:

- the result array(s), float64, each with a ``long_name`` (``"pnorm(q, mean, sd)"``);
- one coordinate array per axis, with a ``long_name``; integers where the spec gave integers
  (``values`` or ``arange`` of integers) and every value is one (int32, or int64 beyond int32's
  range), float64 otherwise; a GLM's ``grad`` also has a ``coefficient`` coordinate holding
  the coefficients' names;
- the bookkeeping, in the sub-group ``_daskcl/`` (which xarray does not show as data):
  ``_daskcl/checksum`` (a checksum per chunk and output, of the algorithm its ``algorithm``
  attribute names: ``crc32c``, or ``crc32`` where Google's CRC-32C library is not found) and
  ``_daskcl/done`` (one ``uint8`` mark per chunk), each one zarr chunk, written at the end of
  each run from the journal that the chunks' writers append to
  (:mod:`~daskcl.sweep.journal`);
- the group's attributes, every one a string or a number as NetCDF takes them:
  ``Conventions = "CF-1.10"``, ``title``, ``source``, ``history`` (one line per run, resumes
  included), ``daskcl_format``, ``daskcl_version``, ``daskcl_function``, ``daskcl_identity``,
  ``daskcl_created``, ``daskcl_spec`` (the spec as JSON), ``daskcl_spec_toml`` (its text) and
  ``daskcl``: everything daskcl records (spec, identity and its parts, axes, outputs, chunks,
  envelope, coefficients, devices, the log of every run) as one JSON string;
- consolidated metadata (zarr v3's ``consolidate_metadata``), written once the arrays exist
  and again after each run.

The result arrays are compressed with the spec's codec (``sweep.compressor``, recorded as
``compressor`` in the ``daskcl`` attribute, ``daskcl_compressor``, and in each array's zarr
metadata).  A task's chunk is one or several zarr chunks (of at most 2^20 values, each its own
file); :func:`create_arrays` can store each task's chunk as one zarr v3 shard instead (one
file a task), which ``benchmarks/bench_store.py`` measures.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import posixpath
import uuid
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._version import __version__
from . import lease as _lease
from .chunks import BOOK as _BOOK
from .chunks import CHECKSUM as _CHECKSUM
from .chunks import DONE as _DONE
from .chunks import new_algorithm
from .contents import read_local_json
from .spec import Axis, Sweep, jsonable

__all__ = ["FORMAT", "NESTED_FORMAT", "array_names", "codecs", "consolidate", "coordinate",
           "create_arrays", "meta_hash", "meta_names", "now", "read_info", "record_run"]

_log = logging.getLogger("daskcl.sweep")

#: the ``format`` of the ``daskcl`` attribute of a store this module writes
FORMAT = "daskcl-sweep/4"
#: the format whose ``daskcl`` attribute is a nested mapping, its bookkeeping at the top
NESTED_FORMAT = "daskcl-sweep/1"


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


def now() -> str:
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
        "arrays": array_names(sweep),
        "chunks": list(sweep.chunks),
        "store_chunks": list(sweep.store_chunks),
        "compressor": sweep.compressor,
        "shards": list(sweep.chunks) if sharded else None,
        "created": now(),
        "envelope": envelope,
        "coefficients": list(sweep.glm.names) if sweep.glm is not None else None,
        "devices": [],
        "runs": [],
    }


def array_names(sweep: Sweep) -> list[str]:
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


def meta_names(info: Mapping[str, Any]) -> list[str]:
    """The arrays whose metadata a store records (:func:`_meta_hash`)."""
    return [str(n) for n in info.get("arrays") or ()] + [_DONE, _CHECKSUM]


def meta_hash(arr: Any) -> str:
    """A hash of what an array's metadata says its bytes mean: data type, shape, chunk grid
    and keys, codecs, fill value (not its attributes)."""
    meta = {k: v for k, v in arr.metadata.to_dict().items() if k != "attributes"}
    return hashlib.sha256(json.dumps(meta, sort_keys=True, default=str).encode()).hexdigest()


def _function_call(sweep: Sweep) -> str:
    """The result's ``long_name``: the function and its numeric parameters, ``pnorm(q, mean,
    sd)``."""
    if sweep.func is None:
        return sweep.function
    flags = set(sweep.func.flags)
    params = [p for p in sweep.func.params if p not in flags] or [a.name for a in sweep.axes]
    return f"{sweep.function}({', '.join(params)})"


def coordinate(axis: Axis) -> np.ndarray:
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


def create_arrays(sweep: Sweep, group: Any, envelope: dict[str, Any] | None, *,
                  shards: bool = False) -> None:
    """The result, coordinate and bookkeeping arrays of a new store and its attributes.
    ``shards``: a task whose chunk spans several zarr chunks stores them as one zarr v3 shard,
    one file a task (default: one file a zarr chunk).  The bookkeeping arrays are one zarr
    chunk each, written whole at a run's end."""
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
        values = coordinate(a)
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
    book.create_array("done", shape=sweep.grid, chunks=sweep.grid, dtype="uint8",
                      fill_value=0, compressors=None, dimension_names=chunk_dims)
    nout = len(sweep.output_names)
    book.create_array("checksum", shape=(*sweep.grid, nout),
                      chunks=(*sweep.grid, nout), dtype="uint32", fill_value=0,
                      compressors=None, dimension_names=[*chunk_dims, "output"],
                      attributes={"algorithm": new_algorithm()})
    info = _info(sweep, envelope, sharded)
    info["array_meta"] = {name: meta_hash(group[name]) for name in meta_names(info)}
    _write_info(group, info)


def record_run(group: Any, devices: Iterable[str], run: Mapping[str, Any]) -> None:
    """Add the devices that computed and one run's record (``finished`` and ``version`` are
    filled in) to the store's attributes (the run log and ``history`` keep every run)."""
    info = read_info(group) or {}
    info["devices"] = sorted(set(info.get("devices") or []) | set(devices))
    info["runs"] = [*(info.get("runs") or []), {
        "finished": now(), "version": __version__, **run}]
    if info.get("format") != NESTED_FORMAT:
        _write_info(group, info)
    else:  # a daskcl-sweep/1 store keeps its nested attribute
        group.attrs["daskcl"] = info
