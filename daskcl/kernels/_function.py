# SPDX-License-Identifier: GPL-2.0-or-later
"""The kind of every Mathlib function of :mod:`daskcl.nmath`: :class:`NmathFunction`, the
elementwise kernel of one :class:`~daskcl.kernels._table.Fn` row with R's interface."""

from __future__ import annotations

import inspect
import numbers
from typing import Any

import numpy as np

from ._elementwise import ElementwiseDef, ElementwiseKernel
from ._kernel import Kernel
from ._table import PUBLIC_MODULE, Fn

__all__ = ["NmathFunction"]

_FLAG_DOC = {
    "log": "log : bool, default False\n    Return log density.",
    "lower_tail": "lower_tail : bool, default True\n    P[X <= x] if true, else P[X > x].",
    "log_p": "log_p : bool, default False\n    Probabilities are given (or returned) as log(p).",
}


def _flag(fn: Fn, name: str, value: object) -> bool:
    """R's logical flag: a Python or NumPy bool, or the integer 0 or 1; anything else (a
    string, None, 2, 0.0) is a TypeError, not truth-tested."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(value)
    raise TypeError(
        f"{fn.name}: {name} must be True or False (or 0 or 1), not {value!r}"
    )


class NmathFunction(ElementwiseKernel):
    """A function of :mod:`daskcl.nmath`: the elementwise kernel of one table row, called with
    Rmath.h's arguments in Rmath.h's order (R's defaults) and R's flags as keywords.

    It pickles by its name (``daskcl.nmath.<name>``), so dask tasks carry only that.
    """

    #: C declarations of kernel parameters after the flags (count tables: :mod:`._counts`)
    extra_params: str = ""

    def __init__(self, fn: Fn) -> None:
        Kernel.__init__(self, fn.name)
        self.fn = fn
        inputs = tuple(f"a{j}" for j in range(len(fn.args)))
        self._setup(ElementwiseDef(
            name=fn.name, inputs=inputs, outputs=("r",), operation=f"r = {fn.c_call()};",
            ints=tuple(c for _, c in fn.flags), depends=fn.depends,
            classify=fn.c_classify() if fn.classify else "",
            nonint=tuple(inputs[fn.arg_names.index(a)] for a in fn.nonint),
            extra_params=self.extra_params))
        self.input_names = fn.arg_names
        params = [
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=fn.defaults.get(n, inspect.Parameter.empty))
            for n in fn.arg_names
        ]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
                   for k, v in fn.flag_defaults.items()]
        self.__signature__ = inspect.Signature(params)
        self.__name__ = self.__qualname__ = fn.name
        self.__module__ = PUBLIC_MODULE
        self.__doc__ = _docstring(fn)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_by_name, (self.fn.name,))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.fn
        bound = self.__signature__.bind(*args, **kwargs)
        bound.apply_defaults()
        vals = [bound.arguments[n] for n in fn.arg_names]
        flags = [int(_flag(fn, k, bound.arguments[k])) for k in fn.flag_defaults]
        return self.apply(vals, flags)

    def _nonint_names(self) -> list[str]:
        return list(self.fn.nonint)


def _docstring(fn: Fn) -> str:
    defaults = fn.defaults
    arg_doc = "\n".join(
        f"{n} : array_like{', default ' + repr(defaults[n]) if n in defaults else ''}"
        for n in fn.arg_names
    )
    flag_doc = "\n".join(_FLAG_DOC[k] for k in fn.flag_defaults)
    return (
        f"{fn.summary}\n\nR's ``{fn.name}`` (Rmath.h ``{fn.csym}``), evaluated on the OpenCL "
        f"device.\n\nParameters\n----------\n{arg_doc}\n{flag_doc}\n\nReturns\n-------\n"
        "ndarray or float64 or dask array or pyopencl array\n    float64 values of the "
        "broadcast shape (on the device when an argument is a ``pyopencl.array.Array``).\n\n"
        "Raises\n------\nTypeError\n    A non-numeric argument; a flag that is not a bool "
        "(Python or NumPy) or the integer 0 or 1.\nValueError\n    Shapes that do "
        "not broadcast.\n"
    )


def _by_name(name: str) -> Any:
    from ._functions import FUNCTIONS

    return FUNCTIONS[name]


