# SPDX-License-Identifier: GPL-2.0-or-later
"""The files a sweep's Python function reads: its local modules and its data.

A ``file.py:func`` sweep is identified by its file's text, but its values depend also on the
modules it imports from beside it and the files it opens.  While the file loads and while each
chunk evaluates, :func:`recording` collects, through Python's audit hooks (``open`` and
``import`` events of the evaluating thread), every regular file read that is not part of the
installed environment (the interpreter's prefixes, site-packages, daskcl itself, ``/proc``,
``/sys``, ``/dev``, ``/etc``, ``/usr/lib``, ``/usr/share``), with a SHA-256 of its content.  A
module imported earlier in the process raises no ``import`` event: the file's ``import``
statements go through :func:`importing`, and each module found is followed through its
globals to the local modules it uses (:func:`_local_closure`).  A chunk's inputs are written
to the store (:func:`save`) before its mark, so a resume can check every file that any
finished chunk read (:func:`changed`).  Files opened by other threads or processes the
function starts, modules loaded other than by ``import`` (``importlib``), and data read from
anywhere but files, are not seen.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import site
import stat
import sys
import sysconfig
import threading
import types
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["GROUP", "changed", "digest", "importing", "note", "recording", "save", "saved"]

#: the bookkeeping group that holds one group per set of inputs, named by its hash
GROUP = "_daskcl/inputs"

_STATE = threading.local()
_HOOKED = threading.Lock()
_hooked: list[bool] = []
#: (path, device, inode, size, mtime) -> SHA-256 of the content
_HASHES: dict[tuple[str, int, int, int, int], str] = {}
#: the sets written through each open group (a run's: a store made anew has its own), and the
#: lock of writing one
_SAVED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_SAVING = threading.Lock()


@functools.cache
def _environment() -> tuple[str, ...]:
    """Directories of the installed environment, whose files are not a sweep's inputs."""
    import daskcl

    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            *sysconfig.get_paths().values(), os.path.dirname(daskcl.__file__), "/proc", "/sys", "/dev", "/usr/lib", "/usr/share",
            "/etc"}
    with contextlib.suppress(AttributeError):
        dirs.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        dirs.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(d).rstrip("/") + "/" for d in dirs if d))


def _hook(event: str, args: tuple[Any, ...]) -> None:
    seen: set[str] | None = getattr(_STATE, "seen", None)
    if seen is None:
        return
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int) or path is None:
            return
        writes = (any(c in mode for c in "wax+") if isinstance(mode, str)
                  else isinstance(flags, int) and flags & os.O_ACCMODE != os.O_RDONLY)
        if not writes:
            seen.add(os.path.abspath(os.fsdecode(path)))
    elif event == "import":
        _STATE.modules.add(args[0])


@contextlib.contextmanager
def recording(own: str | None = None) -> Iterator[set[str]]:
    """Collect the files this thread reads in the block; yields the set of paths, complete
    (local modules added, the environment's files and ``own`` left out) when the block ends."""
    with _HOOKED:
        if not _hooked:
            sys.addaudithook(_hook)
            _hooked.append(True)
    outer, outer_modules = getattr(_STATE, "seen", None), getattr(_STATE, "modules", None)
    seen: set[str] = set()
    _STATE.seen, _STATE.modules = seen, set()
    try:
        yield seen
    finally:
        modules = list(_STATE.modules)
        _STATE.seen, _STATE.modules = outer, outer_modules
        seen.update(_local_closure([sys.modules.get(name) for name in modules]))
        env = _environment()
        for path in list(seen):
            real = os.path.realpath(path)
            if (real.startswith(env) or "/__pycache__/" in real or not _regular(real)
                    or path == own):
                seen.discard(path)
        if outer is not None:
            outer.update(seen)


def note(module: types.ModuleType) -> None:
    """Count ``module`` (and the local modules it uses) among the recording's inputs."""
    if getattr(_STATE, "seen", None) is not None:
        _STATE.modules.add(module.__name__)


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
            level: int = 0) -> Any:
    """``__import__``, noting what it returns while this thread records: a module imported
    before raises no audit event."""
    mod = __import__(name, globals, locals, fromlist, level)
    if getattr(_STATE, "seen", None) is not None and isinstance(mod, types.ModuleType):
        note(mod)
        for attr in fromlist or ():
            sub = mod.__dict__.get(attr) if isinstance(attr, str) else None
            if isinstance(sub, types.ModuleType):
                note(sub)
    return mod


def importing() -> dict[str, Any]:
    """Builtins whose ``__import__`` notes each module imported while a recording runs (a
    sweep's file is run with them, so that its ``import`` statements, in its functions too,
    are seen)."""
    import builtins

    return {**builtins.__dict__, "__import__": _import}


def _local_closure(roots: Iterable[types.ModuleType | None]) -> set[str]:
    """The files of ``roots`` and of the local modules they use: every module in their globals,
    and the module of every function and class there, followed through local modules only
    (not through the installed environment)."""
    env, files, done = _environment(), set(), set()
    stack = [m for m in roots if isinstance(m, types.ModuleType)]
    while stack:
        mod = stack.pop()
        if id(mod) in done:
            continue
        done.add(id(mod))
        path = getattr(mod, "__file__", None)
        if not isinstance(path, str) or os.path.realpath(path).startswith(env):
            continue
        files.add(os.path.abspath(path))
        for value in list(vars(mod).values()):
            if isinstance(value, types.ModuleType):
                stack.append(value)
            elif isinstance(value, (types.FunctionType, type)):
                owner = sys.modules.get(getattr(value, "__module__", None) or "")
                if owner is not None:
                    stack.append(owner)
    return files


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def digest(path: str) -> str | None:
    """SHA-256 of the file's content (``None`` where it cannot be read), once per version of
    the file in a process."""
    try:
        st = os.stat(path)
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key in _HASHES:
            return _HASHES[key]
        if not stat.S_ISREG(st.st_mode):
            return None
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def save(group: Any, files: Mapping[str, str]) -> None:
    """Record ``files`` (path -> SHA-256) in the store, as the group ``_daskcl/inputs/<hash>``
    (written once per open group and set; another writer of the same set writes the same
    group, so one found there already is the same)."""
    if not files:
        return
    from zarr.errors import ContainsArrayError, ContainsGroupError

    text = json.dumps(dict(sorted(files.items())))
    name = hashlib.sha256(text.encode()).hexdigest()[:16]
    with _SAVING:
        try:
            done = _SAVED.setdefault(group, set())
        except TypeError:       # a group without weak references: written every time
            done = set()
        if name in done:
            return
        path, attrs = f"{GROUP}/{name}", {"daskcl_inputs": dict(files)}
        try:
            group.create_group(path, attributes=attrs)
        except (ContainsGroupError, ContainsArrayError, FileNotFoundError):
            # written before (by an earlier run, or meanwhile by another process's writer,
            # which zarr renames into place): kept where it says the same, else written again
            if _read_set(group, path) != attrs["daskcl_inputs"]:
                group.create_group(path, attributes=attrs, overwrite=True)
        done.add(name)


def _read_set(group: Any, path: str) -> Any:
    """The set recorded at ``path`` of the store of ``group`` (its metadata as it is now, not
    the consolidated copy), ``None`` where it cannot be read."""
    import zarr

    try:
        node = zarr.open_group(group.store, path=path, mode="r", use_consolidated=False)
        return node.attrs.get("daskcl_inputs")
    except Exception:     # missing or damaged: not the same
        return None


def saved(url: str, options: dict[str, Any] | None) -> dict[str, str]:
    """Every file that the store's finished chunks read, with its SHA-256 then."""
    import zarr

    try:
        top = zarr.open_group(url, mode="r", storage_options=options, use_consolidated=False)
        sets = top[GROUP]
    except (KeyError, OSError, ValueError):
        return {}
    if not isinstance(sets, zarr.Group):
        return {}
    out: dict[str, str] = {}
    for _, g in sets.groups():
        files = g.attrs.get("daskcl_inputs")
        if isinstance(files, dict):
            out.update({str(k): str(v) for k, v in files.items()})
    return out


def changed(files: Mapping[str, str]) -> list[tuple[str, str]]:
    """The recorded files that differ now: (path, ``"changed"`` or ``"cannot be read here"``)."""
    out = []
    for path, want in sorted(files.items()):
        now = digest(path)
        if now != want:
            out.append((path, "changed" if now is not None else "cannot be read here"))
    return out
