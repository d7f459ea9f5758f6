# SPDX-License-Identifier: GPL-2.0-or-later
"""The declarative description of an elementwise Mathlib function.

One :class:`Fn` row per public function of :mod:`daskcl.nmath` (an :class:`RFn` row per
generator).  The row holds every fact of its function: which C function the kernel calls, the
Rmath.h argument order with R's defaults, R's flags, R's own call, the examples with R's values
and the documentation that is the function's own; the public Python function, its OpenCL kernel,
its docstring, the type stub and the documentation's function table are generated from it.
Adding a function is one row plus its unit in ``cl/nmath`` (the checklist: ``cl/README.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["FLAGS", "NCLASS", "PUBLIC_MODULE", "Example", "Fn", "RFn"]

#: the module whose attributes the generated functions are (and as which they pickle)
PUBLIC_MODULE = "daskcl.nmath"

#: R's flags by kind of function: the Python keyword and the C parameter it feeds.
FLAGS: dict[str, tuple[tuple[str, str], ...]] = {
    "d": (("log", "give_log"),),
    "p": (("lower_tail", "lower_tail"), ("log_p", "log_p")),
    "q": (("lower_tail", "lower_tail"), ("log_p", "log_p")),
    "s": (),
}

#: classes a row's ``classify`` function may return (0 .. NCLASS - 1)
NCLASS = 128

_FLAG_DEFAULTS = {"log": False, "lower_tail": True, "log_p": False}


@dataclass(frozen=True)
class Example:
    """One example call and the value R gives for it.

    Parameters
    ----------
    args
        The positional arguments of daskcl's call (Rmath.h's order; a generator's count first).
    kwargs
        Its keywords (R's flags, R's keywords of :data:`daskcl.kernels._docs.ALIASES`).
    r
        R's expression for the same value, as an R user writes it; None where R has no function
        (libRmath's C function gives the value).
    value
        R's value (a generator's: the whole result, where R's is deterministic).
    """

    args: tuple[float, ...]
    kwargs: Mapping[str, float | bool]
    r: str | None
    value: float | tuple[float, ...]


@dataclass(frozen=True)
class Fn:
    """One public elementwise function.

    Parameters
    ----------
    name
        Public name, ``daskcl.nmath.<name>`` (a row of ``tests/data/rmath_api.tsv``).
    csym
        The C function of the kernel library that computes it (Rmath.h symbol, or its ``R_``
        spelling where the Rmath.h name is an OpenCL built-in).
    kind
        ``"d"``, ``"p"``, ``"q"`` (R's flags follow from it) or ``"s"`` (special function).
    args
        Argument names in Rmath.h order; a ``(name, default)`` pair gives R's default.
    summary
        One line for the docstring.
    units
        Names for the kernel's ``@depends_nmath`` (stems or provided symbols); ``csym`` if empty.
    nonint
        Arguments for which R warns "non-integer" (the kernel counts them for the warning).
    nonint_min
        Where R checks them only from this value on (dhyper returns 0 for x < 0 before its
        check, without a warning); ``None``: everywhere.
    nonint_nan
        R warns "non-integer" and then returns NaN (pbinom's size), where its parameters (every
        argument after the first) are finite and no argument is NaN; otherwise R warns only
        where it computes a value.
    nonint_abs
        R's test of "non-integer" is absolute, more than 1e-7 from the nearest integer
        (choose's k), not R_nonint's 1e-7 relative to the value.
    range_warn
        Where R warns that an argument is out of its algorithm's range and returns a value all
        the same (bessel_j's 0 beyond x = 1e5): a C condition on ``a0`` .. ``a<n-1>`` and the
        warning's words after the count.
    call
        C expression for the call when it is not ``csym(a0, ..., flags)``; it may use ``a0`` ..
        ``a<n-1>`` (doubles) and the flag variables ``give_log``, ``lower_tail``, ``log_p``.
    classify
        C function (same arguments as ``csym``, returning an ``int`` below
        :data:`NCLASS`) that tells which of its methods the function takes for an element; on
        GPUs a launch sorts its elements by it before computing them (see
        ``cl/kernels/elementwise.cl``).  It orders work only; results do not depend on it.
    r_call
        R's call, as ``args()`` prints it in R 4.2 (R's names, order and defaults); empty where
        R has no function (Rmath.h's C API only).
    r_note
        Where R's call differs from this function's in name, order or meaning, where no rule of
        a family in :mod:`daskcl.kernels._docs` says so (``gammafn`` is R's ``gamma``).
    examples
        The docstring's examples, with R's values (``tests/nmath/test_docs.py`` checks them against
        libRmath and R).
    meanings
        What each argument means, for a special function (``kind="s"``); a distribution's
        arguments are documented by its family (:mod:`daskcl.kernels._docs`).
    """

    name: str
    csym: str
    kind: str
    args: tuple[str | tuple[str, float], ...]
    summary: str = ""
    units: tuple[str, ...] = ()
    nonint: tuple[str, ...] = ()
    nonint_min: float | None = None
    nonint_nan: bool = False
    nonint_abs: bool = False
    range_warn: tuple[str, str] | None = None
    call: str | None = None
    classify: str = ""
    # the documentation: not part of what the kernel computes, so not compared
    r_call: str = field(default="", compare=False)
    r_note: str = field(default="", compare=False)
    examples: tuple[Example, ...] = field(default=(), compare=False)
    meanings: Mapping[str, str] = field(default_factory=dict, compare=False)
    flags: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        if self.kind not in FLAGS:
            raise ValueError(f"{self.name}: kind must be one of {sorted(FLAGS)}, not {self.kind!r}")
        object.__setattr__(self, "flags", FLAGS[self.kind])
        unknown = set(self.nonint) - set(self.arg_names)
        if unknown:
            raise ValueError(f"{self.name}: nonint names unknown arguments {sorted(unknown)}")
        if self.meanings and list(self.meanings) != list(self.arg_names):
            raise ValueError(f"{self.name}: meanings must follow the arguments {self.arg_names}")

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a if isinstance(a, str) else a[0] for a in self.args)

    @property
    def defaults(self) -> dict[str, float]:
        return {a[0]: a[1] for a in self.args if not isinstance(a, str)}

    @property
    def flag_defaults(self) -> dict[str, bool]:
        return {py: _FLAG_DEFAULTS[py] for py, _ in self.flags}

    @property
    def depends(self) -> tuple[str, ...]:
        return self.units or (self.csym,)

    def c_call(self) -> str:
        """The C expression the kernel evaluates for one element."""
        if self.call is not None:
            return self.call
        return f"{self.csym}({self._c_params()})"

    def c_classify(self) -> str:
        """The C expression of an element's class (``classify`` rows only)."""
        return f"{self.classify}({self._c_params()})"

    def class_row(self) -> Fn:
        """A row that evaluates this row's class function, as a double (tests, tuning)."""
        return dataclasses.replace(self, call=f"(double){self.c_classify()}", classify="")

    def _c_params(self) -> str:
        return ", ".join([f"a{i}" for i in range(len(self.args))] + [c for _, c in self.flags])


@dataclass(frozen=True)
class RFn:
    """One r-function: its C symbol, Rmath.h parameters and method.

    Parameters
    ----------
    name
        Public name, ``daskcl.nmath.<name>`` (a row of ``tests/data/rmath_api.tsv``).
    csym
        The C function of the kernel library, called as ``csym(&stream, a0, a1, ...)``.
    args
        Parameter names in Rmath.h order; a ``(name, default)`` pair gives R's default.
    summary
        One line for the docstring.
    method
        The method and its reference, for the docstring.
    units
        The kernel's ``@depends_nmath`` names; ``csym`` if empty.
    limit
        The largest parameters the generator takes (NaN beyond), for the docstring and the
        warning; empty where every finite parameter is taken.
    cost
        Words drawn per variate at most, as a function of the largest value of each parameter
        (which it may clip to the limit); ``None`` for a few words.  Launches are sized by it.
    quiet_nan
        A C condition on the parameters ``a0`` .. ``a<n-1>`` where a NaN variate is not counted
        (R computes it in R code, without a warning: rbeta with ncp's X / (X + Y) of 0 / 0 or
        Inf / Inf); empty where every NaN is counted, as R's C generators warn.
    r_call
        R's call, as ``args()`` prints it in R 4.2.
    r_note
        Where R's call differs from this generator's, where no rule of a family says so.
    examples
        The docstring's examples, with R's values where R's result is deterministic.
    stream_args
        The parameters of the docstring's example that draws one stream twice.
    """

    name: str
    csym: str
    args: tuple[str | tuple[str, float], ...]
    summary: str
    method: str
    units: tuple[str, ...] = ()
    limit: str = ""
    cost: Callable[..., float] | None = None
    quiet_nan: str = ""
    # the documentation: not part of what the kernel computes, so not compared
    r_call: str = field(default="", compare=False)
    r_note: str = field(default="", compare=False)
    examples: tuple[Example, ...] = field(default=(), compare=False)
    stream_args: tuple[float, ...] = field(default=(), compare=False)

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a if isinstance(a, str) else a[0] for a in self.args)

    @property
    def defaults(self) -> dict[str, float]:
        return {a[0]: a[1] for a in self.args if not isinstance(a, str)}

    @property
    def depends(self) -> tuple[str, ...]:
        return self.units or (self.csym,)
