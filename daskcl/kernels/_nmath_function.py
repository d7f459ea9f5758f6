# SPDX-License-Identifier: GPL-2.0-or-later
"""The kind of every Mathlib function of :mod:`daskcl.nmath`: :class:`NmathFunction`, the
elementwise kernel of one :class:`~daskcl.kernels._table.Fn` row with R's interface."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, DeviceError, LibraryError
from . import _docs, _launch
from ._elementwise import ElementwiseDef, ElementwiseKernel, called_as, flag_value, table_calls
from ._kernel import Kernel, misspelt
from ._table import PUBLIC_MODULE, Fn

__all__ = ["INLINE_FASTER", "NmathFunction"]

#: the functions whose kernels ran more than 5% faster on GPUs with the library routines
#: inlined (``benchmarks/bench_inline.py``, ``results/inline-all-gpu-h200.json``).  Their inlined
#: programs take longer to build, so they are built after the out-of-line ones, in the
#: background (``noinline`` ``tiered``).
INLINE_FASTER = frozenset({"dpois", "qhyper", "qtukey", "pf", "ptukey", "phyper", "dgamma",
                           "pgamma", "pbeta", "bessel_j", "pchisq", "pgeom"})

class NmathFunction(ElementwiseKernel):
    """A function of :mod:`daskcl.nmath`: the elementwise kernel of one table row, called with
    Rmath.h's arguments in Rmath.h's order (R's defaults) and R's flags as keywords.

    It pickles by its name (``daskcl.nmath.<name>``), so dask tasks carry only that.
    """

    def __init__(self, fn: Fn) -> None:
        Kernel.__init__(self, fn.name)
        self.fn = fn
        inputs = tuple(f"a{j}" for j in range(len(fn.args)))
        self._setup(ElementwiseDef(
            name=fn.name, inputs=inputs, outputs=("r",), operation=f"r = {fn.c_call()};",
            ints=tuple(c for _, c in fn.flags), depends=fn.depends,
            classify=fn.c_classify() if fn.classify else "",
            nonint=tuple(inputs[fn.arg_names.index(a)] for a in fn.nonint),
            nonint_min=fn.nonint_min,
            nonint_nan=fn.nonint_nan,
            nonint_abs=fn.nonint_abs,
            range_warn=fn.range_warn,
            tables=table_calls(fn.name, fn.c_call(), "", inputs)))
        self.input_names = fn.arg_names
        self.tier_up = fn.name in INLINE_FASTER
        #: R's keyword names this function also takes (``rate=``, ``ncp=``, ``mu=``, ...)
        self.aliases = _docs.ALIASES.get(fn.name, {})
        optional = _docs.optional_params(fn.name)
        params = [
            inspect.Parameter(
                n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=None if n in optional else fn.defaults.get(n, inspect.Parameter.empty))
            for n in fn.arg_names
        ]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
                   for k, v in fn.flag_defaults.items()]
        params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None)
                   for a in self.aliases]
        self.__signature__ = inspect.Signature(params)
        # the call's fast path (:meth:`__call__`): each argument's default (None where there is
        # none, or where None means "not given"), the flags' defaults and their positions
        self._arg_defaults = [None if n in optional else fn.defaults.get(n)
                              for n in fn.arg_names]
        self._flag_names = {k: j for j, k in enumerate(fn.flag_defaults)}
        self._flag_defaults = tuple(int(v) for v in fn.flag_defaults.values())
        self.__name__ = self.__qualname__ = fn.name
        self.__module__ = PUBLIC_MODULE
        self.__doc__ = _docs.docstring(fn)

    def __reduce__(self) -> str:
        # a global of daskcl.nmath (``__module__``): unpickling imports it and takes the name
        return self.fn.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.fn
        # the common call (arguments by position, R's flags by keyword) without inspect's
        # binding (14 us of a device-resident call's 200); anything else goes the full way
        given = len(args)
        if given <= len(self._arg_defaults) and (not kwargs
                                                 or self._flag_names.keys() >= kwargs.keys()):
            vals = [*args, *self._arg_defaults[given:]]
            for v in vals:
                if v is None:
                    break
            else:
                flags: Sequence[int] = self._flag_defaults
                if kwargs:
                    flags = given_flags = list(flags)
                    for k, v in kwargs.items():
                        given_flags[self._flag_names[k]] = int(flag_value(fn.name, k, v))
                try:
                    out = _launch.fast(self, vals, flags)
                except (ConfigError, DeviceError, LibraryError) as exc:
                    # as compute raises them: at the call, with their message only
                    raise exc.with_traceback(None) from None
                if out is not _launch.NO:
                    return out[0]
                return self.apply(vals, flags)
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(self._binding_error(args, kwargs, exc)) from None
        if self.aliases:
            target = _docs.apply_aliases(fn.name, bound.arguments)
            if target != fn.name:
                with called_as(fn.name):
                    return _by_name(target)(**bound.arguments)
        bound.apply_defaults()
        vals = [bound.arguments[n] for n in fn.arg_names]
        return self.apply(vals, [int(flag_value(fn.name, k, bound.arguments[k]))
                                 for k in fn.flag_defaults])

    def _binding_error(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                       exc: TypeError) -> str:
        """inspect's complaint about a call, with the function's name and its signature, and
        what to do where a flag came by position or a name is misspelt."""
        fn = self.fn
        msg = f"{fn.name}{self.__signature__}: {exc}"
        flags = list(fn.flag_defaults)
        positional = [a for a in self.aliases.values() if a.kind == "function"]
        if len(args) > len(fn.arg_names) and positional:
            # R's next argument by position is the noncentrality or the mean (R's pchisq(3, 4,
            # 0) is ncp = 0), not a flag: the flags' hint would give another value silently
            a, extra = positional[0], args[len(fn.arg_names)]
            msg += (f"; R's {fn.name} takes {a.name} next by position: pass it by name, "
                    f"{fn.name}(..., {a.name}={extra!r}) (R's flags are keywords here: "
                    + ", ".join(f"{k}=" for k in flags) + ")")
        elif len(args) > len(fn.arg_names) and flags:
            extra = args[len(fn.arg_names):]
            msg += (f"; R's flags are keywords here: {fn.name}(..., "
                    + ", ".join(f"{k}={v!r}" for k, v in zip(flags, extra)) + ")")
        return msg + misspelt(kwargs, [*fn.arg_names, *flags, *self.aliases])

    def _nonint_names(self) -> list[str]:
        return list(self.fn.nonint)


def _by_name(name: str) -> Any:
    """The public function ``name`` (what R's keyword names dispatch to), from its module."""
    return getattr(importlib.import_module(PUBLIC_MODULE), name)
