# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl's configuration: one object, read from ``DASKCL_*`` variables, settable in code.

Each key has an environment variable and a default.  :func:`get` returns, in this order, the
value set in code with :func:`set`, else the key's environment variable as it is at the time
of the call (so a variable set after import, or by a test, takes effect), else the default.
Values are checked where they are set and where they are read from the environment: a value
daskcl does not understand raises :class:`~daskcl.errors.ConfigError` (a ``ValueError``) naming
the key, its variable and the values it takes.

==========================  ==============================  ==========  ================================
key                         environment variable            default     meaning
==========================  ==============================  ==========  ================================
``device``                  ``DASKCL_DEVICE``               any         the device a process binds:
                                                                        ``"P:D"`` or a name substring
``accuracy``                ``DASKCL_ACCURACY``             ``r``       ``r``: R's algorithms and
                                                                        values; ``best``: correct
                                                                        where R loses digits
                                                                        (docs/accuracy.rst)
``binning``                 ``DASKCL_BINNING``              ``auto``    launches sorted by class: ``0``,
                                                                        ``1``, ``auto`` (GPUs) or
                                                                        ``WGxEPIrN``
``cache.dir``               ``DASKCL_CACHE_DIR``            XDG         the program cache's directory
``cache.enabled``           ``DASKCL_NO_CACHE`` (not)       true        whether programs are cached on
                                                                        disk
``cache.shared``            ``DASKCL_CACHE_SHARED``         private     ``group``: a cache shared by a
                                                                        group is trusted
``fp_contract``             ``DASKCL_FP_CONTRACT``          false       let compilers fuse ``a*b+c``
``noinline``                ``DASKCL_NOINLINE``             ``auto``    heavy routines out of line;
                                                                        ``tiered``: and inlined later
                                                                        (``auto``: on GPUs; tiered
                                                                        there with a disk cache or
                                                                        in daskcl's dask workers)
``build.link``              ``DASKCL_LINK``                 ``auto``    units compiled separately and
                                                                        linked (``auto``: where
                                                                        measured faster)
``library``                 ``DASKCL_LIBRARY``              shipped     the kernel library directory
``transfer.mode``           ``DASKCL_TRANSFER``             ``auto``    how NumPy data moves to a GPU:
                                                                        ``direct``, ``pinned``,
                                                                        ``staged``
``transfer.threads``        ``DASKCL_TRANSFER_THREADS``     ``auto``    host threads copying into
                                                                        pinned staging (0: inputs
                                                                        by pageable copies)
``transfer.pinned_limit``   ``DASKCL_PINNED_LIMIT``         RAM/8       pinned bytes results may hold
``warnings``                ``DASKCL_WARNINGS``             deferred    when calls on device arrays
                                                                        raise R's warnings:
                                                                        ``deferred`` (at the next
                                                                        wait), ``immediate``
``worker.warm``             ``DASKCL_WARM``                 none        kernels a preloaded worker
                                                                        builds at start-up
``worker.log_level``        ``DASKCL_WORKER_LOG_LEVEL``     unset       a preloaded worker's log level
==========================  ==============================  ==========  ================================

Values set in code are held by a donfig ``Config`` (as ``dask.config`` and ``zarr.config``
hold theirs); :class:`daskcl.cluster.DaskclPlugin` carries them to dask workers.

Examples
--------
>>> import daskcl.config
>>> with daskcl.config.set({"noinline": True}):
...     daskcl.config.get("noinline")
True
>>> daskcl.config.set(binning="fast")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
daskcl.errors.ConfigError: config key 'binning' must be 0, 1, auto or WGxEPIrN ...
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import donfig
from donfig.config_obj import ConfigSet

from .errors import ConfigError

__all__ = ["KEYS", "Key", "check", "environ", "explicit", "get", "set", "stamp"]

#: the values set in code (empty at start: the environment and the defaults are not copied in,
#: so that a read sees the environment as it is then)
_config = donfig.Config("daskcl", defaults=[], paths=[], env={})

_UNSET = object()


class _Bad(Exception):
    """A value a key's check does not take; carries the words for the allowed values."""

    def __init__(self, allowed: str) -> None:
        super().__init__(allowed)
        self.allowed = allowed


@dataclass(frozen=True)
class Key:
    """One configuration key: its environment variable, its default and its check.

    ``check(value)`` returns the value in its canonical form or raises ``_Bad``;
    ``from_env(text)``, when given, reads the variable's text instead (``cache.enabled`` is the
    negation of ``DASKCL_NO_CACHE``).
    """

    name: str
    env: str
    default: Any
    check: Callable[[Any], Any]
    doc: str
    from_env: Callable[[str], Any] | None = None


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("", "0", "false", "no", "off"):
            return False
    raise _Bad("0 or 1 (or true/false, yes/no, on/off)")


def _not_flag(text: str) -> bool:
    return not _flag(text)


def _device(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    raise _Bad("a 'P:D' pair of indices or a device name substring (a string), or None")


_BINNING_RE = re.compile(r"(\d+)(?:x(\d+))?(?:r(\d+))?")


def _binning(value: Any) -> str:
    allowed = ("0, 1, auto or WGxEPIrN (e.g. 256x16 or 256x32r64; work-group size and "
               "elements per work-item 1 to 1024, registers N 0 (the compiler's choice) or "
               "16 to 255)")
    if value is None:
        return "auto"
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return str(int(value))
    if not isinstance(value, str):
        raise _Bad(allowed)
    text = value.strip().lower()
    if text in ("", "auto"):
        return "auto"
    if text in ("0", "1"):
        return text
    m = _BINNING_RE.fullmatch(text)
    if not m or not all(1 <= int(g or 1) <= 1024 for g in m.groups()[:2]) \
            or int(m.group(3) or 0) not in (0, *range(16, 256)):
        raise _Bad(allowed)
    return text


def _path(value: Any) -> Path | None:
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, str):
            # "~/x" as a shell would take it unquoted (quoted in a job script or a YAML file, it
            # made a directory named "~" in the working directory)
            return Path(text).expanduser() if text.strip() else None
    raise _Bad("a directory path (a string or path), or None")


def _shared(value: Any) -> str:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "0", "no", "private"):
            return "private"
        if text == "group":
            return "group"
    raise _Bad("'group' or 'private' (or nothing)")


def _auto_flag(value: Any) -> bool | str | None:
    """``"auto"`` (also None or nothing), True or False in their spellings (a bool, 0 or 1,
    true or false); ``None`` for anything else."""
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if text in ("", "auto"):
        return "auto"
    if text in ("0", "1", "true", "false"):
        return text in ("1", "true")
    return None


def _auto_flag_or(word: str, accepted: str) -> Callable[[Any], bool | str]:
    """A check of a key that takes what :func:`_auto_flag` takes and ``word`` (``accepted``
    says all of it in the error)."""
    def check(value: Any) -> bool | str:
        chosen = _auto_flag(value)
        if chosen is not None:
            return chosen
        if isinstance(value, str) and value.strip().lower() == word:
            return word
        raise _Bad(accepted)
    return check


_noinline = _auto_flag_or("tiered", "0 or 1, true or false, tiered, or auto (out of line on "
                                    "GPUs, tiered there with a disk cache or in daskcl's "
                                    "dask workers)")
_link = _auto_flag_or("closure", "0 or 1 (true or false), closure, or auto (linked on the "
                                 "devices where it was measured to build faster)")


def _accuracy(value: Any) -> str:
    if value is None:
        return "r"
    if isinstance(value, str) and value.strip().lower() in ("", "r", "best"):
        return value.strip().lower() or "r"
    raise _Bad("'r' (R's algorithms and values) or 'best' (correct where R loses digits)")


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(n.strip() for n in value.split(",") if n.strip())
    if isinstance(value, Iterable) and all(isinstance(n, str) for n in value):
        return tuple(n.strip() for n in value if n.strip())
    raise _Bad("kernel names (a list of strings, or one comma-separated string)")


def _transfer(value: Any) -> str:
    if value is None:
        return "auto"
    if isinstance(value, str) and value.strip().lower() in ("", "auto", "direct", "pinned",
                                                             "staged"):
        return value.strip().lower() or "auto"
    raise _Bad("auto, direct, pinned or staged")


def _whole(value: Any) -> int | None:
    """``value`` as a whole number (an int, or a string of digits), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    # ASCII digits only: str.isdigit is true of "²", which int refuses with a bare ValueError
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None


def _threads(value: Any) -> int | str:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return "auto"
    n = _whole(value)
    if n is None or not 0 <= n <= 64:
        raise _Bad("a number of threads from 0 to 64, or auto")
    return n


def _bytes(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    n = _whole(value)
    if n is None or n < 0:
        raise _Bad("a number of bytes (0 or more), or nothing for the default")
    return n


def _warnings(value: Any) -> str:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "deferred")):
        return "deferred"
    if isinstance(value, str) and value.strip().lower() == "immediate":
        return "immediate"
    raise _Bad("deferred or immediate")


_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


def _level(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().upper()
        if not text:
            return None
        if isinstance(logging.getLevelName(text), int):
            return text
    raise _Bad("a logging level: " + ", ".join(_LEVELS))


#: every key, by name
KEYS: dict[str, Key] = {k.name: k for k in (
    Key("device", "DASKCL_DEVICE", None, _device,
        "the device a process binds ('P:D' or a name substring); None: GPUs first"),
    Key("accuracy", "DASKCL_ACCURACY", "r", _accuracy,
        "'r': R's algorithms and R's values; 'best': the functions where R's algorithms lose "
        "digits computed by others, correct to about 1e-13 (a build option of every program)"),
    Key("binning", "DASKCL_BINNING", "auto", _binning,
        "launches sorted by class: 0 off, 1 on every device, auto on GPUs, or WGxEPIrN"),
    Key("cache.dir", "DASKCL_CACHE_DIR", None, _path,
        "the program cache's directory; None: $XDG_CACHE_HOME/daskcl or ~/.cache/daskcl"),
    Key("cache.enabled", "DASKCL_NO_CACHE", True, _flag,
        "whether built programs are kept on disk (DASKCL_NO_CACHE=1 turns it off)", _not_flag),
    Key("cache.shared", "DASKCL_CACHE_SHARED", "private", _shared,
        "'group': a setgid cache directory of one of the user's groups is trusted too"),
    Key("fp_contract", "DASKCL_FP_CONTRACT", False, _flag,
        "let the compiler fuse a*b+c into fma"),
    Key("noinline", "DASKCL_NOINLINE", "auto", _noinline,
        "heavy library routines (and, in the units, the costly math built-ins) out of line: "
        "true, false, tiered (out of line first, the kernels measured faster inlined then "
        "built inlined in the background), or auto (on GPUs, tiered there with a disk cache or "
        "in daskcl's dask workers)"),
    Key("build.link", "DASKCL_LINK", "auto", _link,
        "library units compiled separately into cached objects and linked per kernel: true "
        "(an object per unit), closure (one for a kernel's units), false, or auto (per device, "
        "where measured to build faster)"),
    Key("library", "DASKCL_LIBRARY", None, _path,
        "a kernel library directory laid out like cl/; None: the one shipped"),
    Key("transfer.mode", "DASKCL_TRANSFER", "auto", _transfer,
        "how NumPy data moves to and from a GPU: direct, pinned, staged or auto"),
    Key("transfer.threads", "DASKCL_TRANSFER_THREADS", "auto", _threads,
        "host threads copying inputs into pinned staging (0: pageable copies); auto: up to 8"),
    Key("transfer.pinned_limit", "DASKCL_PINNED_LIMIT", None, _bytes,
        "bytes of pinned host memory results may hold at once; None: an eighth of the RAM"),
    Key("warnings", "DASKCL_WARNINGS", "deferred", _warnings,
        "when calls on device arrays raise R's warnings: deferred (at the next wait: a call "
        "from NumPy or dask data, daskcl.synchronize()) or immediate (each call waits)"),
    Key("worker.warm", "DASKCL_WARM", (), _names,
        "kernels a worker preloaded with daskcl.cluster builds at start-up"),
    Key("worker.log_level", "DASKCL_WORKER_LOG_LEVEL", None, _level,
        "the 'distributed' logger's level on a worker preloaded with daskcl.cluster"),
)}


def _key(name: str) -> Key:
    try:
        return KEYS[name]
    except KeyError:
        raise ConfigError(f"daskcl has no config key {name!r}; its keys are: "
                          + ", ".join(KEYS)) from None


def _checked(key: Key, value: Any) -> Any:
    """``value`` set in code for ``key``, in canonical form."""
    try:
        return key.check(value)
    except _Bad as bad:
        allowed = bad.allowed
    # raised outside the handler: the error carries no context of daskcl's own
    raise ConfigError(f"config key {key.name!r} must be {allowed}, not {value!r} "
                      f"(set in code; its environment variable is {key.env})")


def _from_env(key: Key, text: str) -> Any:
    """The variable's ``text`` for ``key``, in canonical form."""
    try:
        return (key.from_env or key.check)(text)
    except _Bad as bad:
        allowed = bad.allowed
    raise ConfigError(f"{key.env}={text!r} is not understood; {key.env} must be "
                      f"{allowed} (config key {key.name!r})")


def get(name: str) -> Any:
    """The value of the key ``name``: set in code, else from its environment variable now,
    else the default.

    Parameters
    ----------
    name : str
        A key of the table in the module's docstring (``"device"``, ``"cache.dir"``, ...).

    Returns
    -------
    object
        The key's value, checked and in canonical form (a ``Path`` for directories, a bool
        for flags, ...).

    Raises
    ------
    ConfigError
        ``name`` is not a key, or its environment variable holds a value it does not take.

    Examples
    --------
    >>> import daskcl.config
    >>> with daskcl.config.set({"fp_contract": True}):
    ...     daskcl.config.get("fp_contract")
    True
    """
    # every call on the device reads keys: a value is kept until :func:`set` changes something
    # or its variable's text is another object (os.environ's values are replaced, never edited)
    hit = _cache.get(name)
    if hit is not None and _env_raw(hit[0]) is hit[1]:
        return hit[2]
    key = KEYS.get(name) or _key(name)
    generation = _generation[0]
    raw_key = _raw_key(key.env)
    raw = _env_raw(raw_key)
    value = _read(key)
    _cache[name] = (raw_key, raw, value)
    if generation != _generation[0]:     # a set() in between: the value may be stale
        _cache.pop(name, None)
    return value


def _read(key: Key) -> Any:
    """``key``'s value now (set in code, its variable, its default), not cached."""
    if _config.config:
        value = _config.get(key.name, _UNSET)
        if value is not _UNSET:
            return value
    text = os.environ.get(key.env)
    if text is None or not text.strip():
        return key.default
    return _from_env(key, text)


#: key name -> (its variable's key in os.environ's raw mapping, the raw value then, the key's
#: value): :func:`get`'s values, dropped whenever :func:`set` changes something
_cache: dict[str, tuple[Any, Any, Any]] = {}
#: bumped by every change made in code (:func:`set` and the end of its block)
_generation = [0]

# os.environ's underlying mapping (encoded names to encoded values on POSIX): a lookup there
# is a fifth of os.environ.get's cost; elsewhere, os.environ itself
_env_data: Any = getattr(os.environ, "_data", None)
if isinstance(_env_data, dict) and callable(getattr(os.environ, "encodekey", None)):
    _env_raw = _env_data.get
    _raw_key: Callable[[str], Any] = os.environ.encodekey
else:                                                     # pragma: no cover
    _env_raw = os.environ.get

    def _raw_key(name: str) -> Any:
        return name


#: the keys' variables as os.environ's raw mapping names them (:func:`stamp`)
_RAW_KEYS = tuple(_raw_key(k.env) for k in KEYS.values())


def stamp() -> tuple[int, tuple[Any, ...]]:
    """What changes whenever a key's value may have: the generation of the values set in code
    and the raw text of every key's variable (objects compared by identity first).  What is
    computed from the configuration (a prepared launch) keeps the stamp it was made under."""
    return _generation[0], tuple(map(_env_raw, _RAW_KEYS))


def _changed() -> None:
    _generation[0] += 1
    _cache.clear()


class _Set(ConfigSet):  # type: ignore[misc]
    """donfig's change of the values set in code, which drops :func:`get`'s cached values
    when it is made and when its block ends."""

    def __exit__(self, *exc: Any) -> None:
        try:
            super().__exit__(*exc)
        finally:
            _changed()


def _flat(arg: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in arg.items():
        full = f"{prefix}{name}"
        if isinstance(value, Mapping) and full not in KEYS:
            out.update(_flat(value, full + "."))
        else:
            out[full] = value
    return out


def set(arg: Mapping[str, Any] | None = None, **kwargs: Any) -> ConfigSet:
    """Set keys in code, for the process or (as a context manager) for a block.

    Each value is checked first: nothing is set if one is refused.

    Parameters
    ----------
    arg : mapping, optional
        Key names (``"cache.dir"``, or nested: ``{"cache": {"dir": ...}}``) to values.
    **kwargs
        More keys, ``__`` standing for the dot (``cache__dir=...``).

    Returns
    -------
    donfig.config_obj.ConfigSet
        The change; as a context manager it undoes itself at the end of the block.

    Raises
    ------
    ConfigError
        An unknown key, or a value the key does not take.

    Examples
    --------
    >>> import daskcl.config
    >>> with daskcl.config.set({"cache.enabled": False}, noinline=True):
    ...     daskcl.config.get("cache.enabled"), daskcl.config.get("noinline")
    (False, True)
    """
    values = dict(arg or {})
    values.update({name.replace("__", "."): value for name, value in kwargs.items()})
    checked = check(values)
    try:
        return _Set(_config.config, _config.config_lock, _config.deprecations, arg=checked)
    finally:
        _changed()


def check(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (keys as :func:`set` takes them) checked and in canonical form, flat.

    Raises
    ------
    ConfigError
        An unknown key, or a value the key does not take.
    """
    return {name: _checked(_key(name), value) for name, value in _flat(values).items()}


def explicit() -> dict[str, Any]:
    """The keys set in code and their values: a plain, picklable dict (what
    :class:`daskcl.cluster.DaskclPlugin` carries to workers)."""
    return {name: value for name in KEYS
            if (value := _config.get(name, _UNSET)) is not _UNSET}


def environ(values: Mapping[str, Any]) -> dict[str, str]:
    """The environment variables that say ``values`` (keys and canonical values, as
    :func:`explicit` gives them) to a child process, which reads them as :func:`get` does;
    a value of ``None`` (the default of a path or the device) sets nothing."""
    out: dict[str, str] = {}
    for name, value in values.items():
        key = _key(name)
        if value is None:
            continue
        if name == "cache.enabled":
            text = "0" if value else "1"
        elif isinstance(value, bool):
            text = "1" if value else "0"
        elif isinstance(value, tuple):
            text = ",".join(value)
        else:
            text = str(value)
        out[key.env] = text
    return out
