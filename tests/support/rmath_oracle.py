# SPDX-License-Identifier: GPL-2.0-or-later
"""R's own Mathlib (libRmath, Debian's ``r-mathlib``) through ctypes: the oracle of the
R-agreement tests.

:func:`r_eval` evaluates an Rmath.h function over NumPy-broadcast arguments by a plain Python
loop (fine at a few thousand points).  The C signature of each symbol comes from
:data:`SIGNATURES`: one letter per parameter, ``d`` for ``double`` and ``i`` for ``int``,
arguments first and R's flags (``give_log``; ``lower_tail``, ``log_p``) last.  Add a row for
every symbol a case needs.

If libRmath cannot be loaded, :func:`library` raises :class:`OracleMissing` (a RuntimeError),
so that the tests that need it fail and say what to install; they never skip.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SIGNATURES", "OracleMissing", "library", "r_eval"]

#: Rmath.h symbol -> parameter types: ``d`` double, ``i`` int (arguments, then flags)
SIGNATURES: dict[str, str] = {
    # normal
    "dnorm4": "dddi",
    "pnorm5": "dddii",
    "qnorm5": "dddii",
    # Loader's saddle point densities
    "dbinom": "dddi",
    "dbinom_raw": "ddddi",
    "dpois": "ddi",
    "dpois_raw": "ddi",
    "dgamma": "dddi",
    # special functions
    "gammafn": "d",
    "lgammafn": "d",
    "lgamma1p": "d",
    "log1pmx": "d",
    "log1pexp": "d",
    "log1mexp": "d",
    "logspace_add": "dd",
    "logspace_sub": "dd",
    "cospi": "d",
    "sinpi": "d",
    "tanpi": "d",
    # continuous distributions and their special functions (issue 3)
    **{f"d{n}": "d" * k + "i" for n, k in (
        ("unif", 3), ("exp", 2), ("cauchy", 3), ("logis", 3), ("weibull", 3), ("lnorm", 3),
        ("chisq", 2), ("beta", 3), ("t", 2), ("f", 3))},
    **{f"{pq}{n}": "d" * k + "ii" for pq in "pq" for n, k in (
        ("unif", 3), ("exp", 2), ("cauchy", 3), ("logis", 3), ("weibull", 3), ("lnorm", 3),
        ("gamma", 3), ("chisq", 2), ("beta", 3), ("t", 2), ("f", 3))},
    "beta": "dd",
    "lbeta": "dd",
    "choose": "dd",
    "lchoose": "dd",
    "digamma": "d",
    "trigamma": "d",
    "tetragamma": "d",
    "pentagamma": "d",
    "psigamma": "dd",
    # discrete, noncentral, tukey, wilcoxon, signrank, bessel (issue 4)
    "bessel_i": "ddd",
    "bessel_j": "dd",
    "bessel_k": "ddd",
    "bessel_y": "dd",
    "ptukey": "ddddii",
    "qtukey": "ddddii",
    "dgeom": "ddi",
    "dnbinom": "dddi",
    "dnbinom_mu": "dddi",
    "dhyper": "ddddi",
    "pbinom": "dddii",
    "ppois": "ddii",
    "pgeom": "ddii",
    "pnbinom": "dddii",
    "pnbinom_mu": "dddii",
    "phyper": "ddddii",
    "qbinom": "dddii",
    "qpois": "ddii",
    "qgeom": "ddii",
    "qnbinom": "dddii",
    "qnbinom_mu": "dddii",
    "qhyper": "ddddii",
    "dnbeta": "ddddi",
    "pnbeta": "ddddii",
    "qnbeta": "ddddii",
    "dnchisq": "dddi",
    "pnchisq": "dddii",
    "qnchisq": "dddii",
    "dnf": "ddddi",
    "pnf": "ddddii",
    "qnf": "ddddii",
    "dnt": "dddi",
    "pnt": "dddii",
    "qnt": "dddii",
    "dwilcox": "dddi",
    "pwilcox": "dddii",
    "qwilcox": "dddii",
    "dsignrank": "ddi",
    "psignrank": "ddii",
    "qsignrank": "ddii",
    # generators (libRmath's own uniform stream; only their deterministic cases are compared)
    **{f"r{n}": "d" * k for n, k in (
        ("unif", 2), ("norm", 2), ("exp", 1), ("lnorm", 2), ("cauchy", 2), ("logis", 2),
        ("weibull", 2), ("gamma", 2), ("beta", 2), ("chisq", 1), ("t", 1), ("f", 2),
        ("nchisq", 2), ("pois", 1), ("binom", 2), ("geom", 1), ("nbinom", 2), ("nbinom_mu", 2),
        ("hyper", 3), ("wilcox", 2), ("signrank", 1))},
}

_FALLBACK = "/usr/lib/libRmath.so.1"


class OracleMissing(RuntimeError):
    """libRmath could not be loaded."""


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    """The loaded libRmath.

    Raises
    ------
    OracleMissing
        libRmath is not installed: install Debian's ``r-mathlib`` (``apt-get install r-mathlib``).
    """
    # DASKCL_RMATH names the library file where it is not installed system-wide (the GPU
    # machine unpacks Debian's package into a temporary directory)
    candidates = [os.environ.get("DASKCL_RMATH"), ctypes.util.find_library("Rmath"), _FALLBACK]
    errors = []
    for name in candidates:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            errors.append(f"{name}: {exc}")
    tried = "; ".join(errors) or f"find_library('Rmath') found nothing and {_FALLBACK} is absent"
    raise OracleMissing(
        "libRmath, the oracle of the R-agreement tests, is not available: install Debian's "
        f"r-mathlib (apt-get install r-mathlib), which provides {_FALLBACK}. Tried: {tried}"
    )


@functools.cache
def _function(rsym: str) -> tuple[Any, str]:
    try:
        sig = SIGNATURES[rsym]
    except KeyError:
        raise KeyError(
            f"no signature for Rmath symbol {rsym!r}: add it to SIGNATURES in {Path(__file__).name}"
        ) from None
    lib = library()
    try:
        f = getattr(lib, rsym)
    except AttributeError:
        raise OracleMissing(f"libRmath has no symbol {rsym!r}") from None
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_double if t == "d" else ctypes.c_int for t in sig]
    return f, sig


def r_eval(rsym: str, args: Sequence[Any], flags: Sequence[int] = ()) -> np.ndarray:
    """R's value of ``rsym(*args, *flags)`` over the broadcast of ``args``.

    Parameters
    ----------
    rsym
        The Rmath.h symbol (``pnorm5``, not ``pnorm``); its row of :data:`SIGNATURES` gives
        the C types.
    args
        Arrays or scalars, broadcast together as NumPy does; ``i`` parameters are truncated
        to int.
    flags
        R's flags, in C order (``give_log``; or ``lower_tail``, ``log_p``).

    Returns
    -------
    numpy.ndarray
        float64, of the broadcast shape.

    Example
    -------
    >>> float(r_eval("pnorm5", [1.96, 0.0, 1.0], [1, 0]))
    0.9750021048517796
    """
    f, sig = _function(rsym)
    if len(sig) != len(args) + len(flags):
        raise TypeError(
            f"{rsym} takes {len(sig)} parameters ({sig}), got {len(args)} arguments and "
            f"{len(flags)} flags"
        )
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
    shape = arrays[0].shape if arrays else ()
    conv = [float if t == "d" else int for t in sig[: len(args)]]
    flat = [a.ravel() for a in arrays]
    tail = [int(v) for v in flags]
    out = np.empty(int(np.prod(shape)), dtype=np.float64)
    for k in range(out.size):
        out[k] = f(*[c(a[k]) for c, a in zip(conv, flat)], *tail)
    return out.reshape(shape)
