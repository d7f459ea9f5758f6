# SPDX-License-Identifier: GPL-2.0-or-later
"""The errors daskcl raises, one hierarchy, each message saying what to do next; and R's
warnings (NaNs produced), which a sweep's chunk records per thread."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "TERMINATED",
    "BuildError",
    "CacheWarning",
    "ClusterError",
    "ConfigError",
    "DaskclError",
    "DaskclWarning",
    "DependencyCycleError",
    "DeviceError",
    "LibraryError",
    "MissingDependencyError",
    "NoFp64DeviceError",
    "NoMatchingDeviceError",
    "NoPlatformError",
    "PosteriorModeError",
    "StaleIndexError",
    "SweepError",
    "Terminated",
    "collect_r_warnings",
    "every_r_warning",
    "outside_stacklevel",
    "report_stop",
    "sigterm_raises",
    "warn_r",
]


class Terminated(KeyboardInterrupt):
    """SIGTERM reached a ``daskcl sweep`` or ``daskcl slurm`` command (``kill``, a batch
    system's time limit).  A ``KeyboardInterrupt``, so that a sweep stops as at Ctrl-C:
    its finished chunks kept, its cluster closed; the command exits 143."""


class DaskclError(Exception):
    """Base class of every daskcl error."""


class ConfigError(DaskclError, ValueError):
    """A configuration value (a ``daskcl.config`` key or its ``DASKCL_*`` variable) that daskcl
    does not understand; the message names the key and the values it takes."""


class LibraryError(DaskclError):
    """The kernel library (``cl/``) is inconsistent: annotations, index or files."""


class MissingDependencyError(LibraryError):
    """A unit or kernel names a stem or symbol that no file provides."""


class DependencyCycleError(LibraryError):
    """The units' ``@depends`` form a cycle; the message names the stuck files."""


class StaleIndexError(LibraryError):
    """``kernel_dependency_index.tsv`` does not match the annotations."""


class BuildError(DaskclError):
    """An OpenCL program failed to build.

    Attributes
    ----------
    log : str
        The compiler's build log.
    units : tuple of str
        The library files that were concatenated into the program.
    """

    def __init__(self, message: str, log: str = "", units: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.log = log
        self.units = units


class DeviceError(DaskclError):
    """No usable OpenCL device could be bound."""


class NoPlatformError(DeviceError):
    """No OpenCL platform is installed."""


class NoFp64DeviceError(DeviceError):
    """Devices exist, but none supports double precision."""


class NoMatchingDeviceError(DeviceError):
    """The requested device (argument or ``DASKCL_DEVICE``) matches nothing."""


class ClusterError(DaskclError):
    """A dask cluster cannot be set up as asked: no device for its workers, a bad worker count
    or address, a kernel to warm that does not exist, a missing optional dependency."""


class SweepError(DaskclError, ValueError):
    """A spec or store that cannot be run; the message says what to fix."""


class DaskclWarning(UserWarning):
    """Base class of every warning daskcl issues."""


class CacheWarning(DaskclWarning):
    """The disk cache could not be used for one program (it was built from source instead)."""


class PosteriorModeError(DaskclError, ValueError):
    """The posterior mode could not be found (a singular Hessian, or no convergence)."""


#: where daskcl's own modules lie, and contextlib's (whose frames run daskcl's ``with`` blocks)
_INSIDE = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
           os.path.abspath(contextlib.__file__))


def outside_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` made by the function that calls this, so that
    the warning points at the first frame outside the daskcl package: the user's line that
    called into daskcl, however deep in a build the warning arose (``contextlib``'s frames,
    which run daskcl's ``with`` blocks, are passed over too).  Where the whole stack is
    daskcl's, the outermost frame."""
    frame = sys._getframe(1)        # the function that calls warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_INSIDE):
        frame = frame.f_back
        level += 1
    return level


_collector = threading.local()


def warn_r(message: str, stacklevel: int = 2) -> None:
    """Issue R's warning ``message`` (``pgamma: 3 NaN(s) produced``) as a ``RuntimeWarning``,
    or, inside a :func:`collect_r_warnings` block of this thread, add it to that block's list.

    The block is per thread: a chunk of a sweep records its own warnings while other threads
    of the worker (writes, builds, other tasks) warn as usual.  ``warnings.catch_warnings``
    cannot do that: it swaps the filters of the whole process, so two threads' blocks undo
    each other's."""
    into: list[str] | None = getattr(_collector, "into", None)
    if into is not None:
        into.append(f"RuntimeWarning: {message}")
    elif getattr(_collector, "every", False):
        # each chunk of a dask computation: the chunks' warnings come from one line of dask's,
        # and the filters' "default" action shows a text once per line (in that module's
        # registry), so that six chunks of one NaN each showed "1 NaN(s) produced" once;
        # without a registry each is shown ("once", "ignore" and "error" still apply)
        frame = sys._getframe(stacklevel + 1)
        warnings.warn_explicit(message, RuntimeWarning, frame.f_code.co_filename,
                               frame.f_lineno, module=frame.f_globals.get("__name__"),
                               registry=None, module_globals=frame.f_globals)
    else:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel + 1)


@contextmanager
def every_r_warning() -> Iterator[None]:
    """In this block of this thread, each :func:`warn_r` warning is shown however often the
    same text came from the same line before (one for each chunk of a dask computation)."""
    before = getattr(_collector, "every", False)
    _collector.every = True
    try:
        yield
    finally:
        _collector.every = before


@contextmanager
def collect_r_warnings() -> Iterator[list[str]]:
    """Collect the warnings :func:`warn_r` issues on this thread, as ``"RuntimeWarning: ..."``
    lines, instead of issuing them (blocks nest: the innermost collects)."""
    outer = getattr(_collector, "into", None)
    into: list[str] = []
    _collector.into = into
    try:
        yield into
    finally:
        _collector.into = outer


#: set when :func:`sigterm_raises` raised :class:`Terminated`: Python ignores an exception
#: raised while a finalizer runs (a ``distributed`` future's ``__del__``), so a loop that drops
#: futures checks this too
TERMINATED = threading.Event()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread, so that a
    command stops as at Ctrl-C (before, the process died at once: no line, no cleanup, and
    multiprocessing's semaphores reported leaked).  Elsewhere than the main thread, nothing
    changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        TERMINATED.set()
        raise Terminated

    TERMINATED.clear()
    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
        TERMINATED.clear()


def report_stop(exc: KeyboardInterrupt,
                what: str = "finished chunks are kept; run again with --resume") -> int:
    """Say in one line on stderr that a sweep command was stopped, by Ctrl-C or by SIGTERM
    (:class:`Terminated`), and ``what`` of it; return its exit status: 130 or 143."""
    import sys

    how, code = ("terminated", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
    print(f"\n{how}: {what}", file=sys.stderr)
    return code
