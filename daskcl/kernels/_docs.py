# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation of :mod:`daskcl.nmath`'s functions, and R's keywords.

Each row (:class:`~daskcl.kernels._table.Fn` and :class:`~daskcl.kernels._table.RFn`) holds its
own facts: R's call (R's names and defaults, R 4.2), the examples whose printed values are R's
(checked against libRmath and R by ``tests/nmath/test_docs.py``; the documentation's doctest run checks
that daskcl prints them), the meaning of a special function's parameters and where R's call
differs from it alone.  This module holds what families of rows share: the meaning of a
distribution's parameters, where R's positional order or meaning differs from Rmath.h's (which
daskcl follows), and the algorithm and its reference (the ``@source`` text of the unit in
``cl/nmath`` that computes the function).

It also holds R's keywords where R's interface differs from Rmath.h's (:data:`ALIASES`):
``rate=`` of the gamma and exponential families, ``ncp=`` of the chi-squared, beta, t and F
families, ``mu=`` of the negative binomial and ``expon_scaled=`` of the Bessel I and K
functions.  :func:`apply_aliases` turns them into Rmath.h's arguments (or the function R calls
for them) before a call is evaluated.

:func:`docstring` writes a row's numpydoc docstring; :func:`function_table` writes the
reStructuredText table of every function that the documentation builds.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._elementwise import flag_value, is_dask_array, real_array
from ._transfer import is_device_array

if TYPE_CHECKING:
    from ._table import Fn, RFn

__all__ = [
    "ALIASES", "TITLES", "Alias", "apply_aliases", "docstring", "example_lines", "family",
    "group", "optional_params", "order_note", "parameter_meanings", "rmath_call", "source",
]


# -- parameter meanings -------------------------------------------------------------------------

#: the distribution families by the part of a name after its d/p/q/r
_FAMILIES = frozenset({
    "norm", "unif", "gamma", "beta", "lnorm", "chisq", "nchisq", "t", "nt", "f", "nf", "nbeta",
    "exp", "cauchy", "logis", "weibull", "binom", "pois", "geom", "nbinom", "nbinom_mu",
    "hyper", "wilcox", "signrank", "tukey",
})

#: discrete families: their densities are masses and their quantiles integers
_DISCRETE = frozenset({
    "binom", "pois", "geom", "nbinom", "nbinom_mu", "hyper", "wilcox", "signrank",
})

_NCP_CHISQ = "Noncentrality lambda >= 0: the sum of the squared means of the normal terms."
_FAMILY_PARAMETERS: dict[str, dict[str, str]] = {
    "norm": {"mean": "Mean mu.",
             "sd": "Standard deviation sigma >= 0 (0 gives the point mass at ``mean``)."},
    "unif": {"min": "Lower limit a.", "max": "Upper limit b >= a."},
    "gamma": {"shape": "Shape a >= 0.",
              "scale": "Scale s > 0: Rmath.h's parameter, 1/rate (the mean is shape * scale)."},
    "beta": {"shape1": "First shape a >= 0: the density is proportional to "
                       "x^(a-1) (1-x)^(b-1).",
             "shape2": "Second shape b >= 0."},
    "lnorm": {"meanlog": "Mean of log(X).", "sdlog": "Standard deviation of log(X), >= 0."},
    "chisq": {"df": "Degrees of freedom k >= 0 (not necessarily an integer)."},
    "nchisq": {"df": "Degrees of freedom k >= 0 (not necessarily an integer).",
               "ncp": _NCP_CHISQ},
    "t": {"df": "Degrees of freedom nu > 0 (not necessarily an integer; Inf gives the normal)."},
    "nt": {"df": "Degrees of freedom nu > 0 (not necessarily an integer).",
           "ncp": "Noncentrality delta: the mean of the normal numerator."},
    "f": {"df1": "Numerator degrees of freedom > 0.",
          "df2": "Denominator degrees of freedom > 0 (Inf allowed)."},
    "nf": {"df1": "Numerator degrees of freedom > 0.",
           "df2": "Denominator degrees of freedom > 0 (Inf allowed).",
           "ncp": "Noncentrality lambda >= 0 of the numerator's chi-squared."},
    "nbeta": {"shape1": "First shape a >= 0.", "shape2": "Second shape b >= 0.",
              "ncp": "Noncentrality lambda >= 0 (of the chi-squared in the numerator)."},
    "exp": {"scale": "Scale = 1/rate > 0: Rmath.h's parameter, the mean."},
    "cauchy": {"location": "Location (the median).",
               "scale": "Scale > 0 (the half width at half maximum)."},
    "logis": {"location": "Location (the mean).",
              "scale": "Scale > 0 (the variance is pi^2 scale^2 / 3)."},
    "weibull": {"shape": "Shape k > 0.",
                "scale": "Scale lambda > 0: P[X <= x] = 1 - exp(-(x / scale)^shape)."},
    "binom": {"size": "Number of trials n (a non-negative integer).",
              "prob": "Probability of success in each trial, in [0, 1]."},
    "pois": {"lam": "Mean lambda >= 0 (R's ``lambda``, a reserved word in Python)."},
    "geom": {"prob": "Probability of success in each trial, in (0, 1]; X counts the "
                     "failures before the first success."},
    "nbinom": {"size": "Target number of successes n > 0 (not necessarily an integer: the "
                       "dispersion parameter).",
               "prob": "Probability of success in each trial, in (0, 1]; X counts the "
                       "failures before the size-th success."},
    "nbinom_mu": {"size": "Target number of successes n > 0 (the dispersion parameter).",
                  "mu": "Mean mu >= 0 (prob = size / (size + mu))."},
    "hyper": {"m": "Number of white balls in the urn.",
              "n": "Number of black balls in the urn.",
              "k": "Number of balls drawn without replacement; X counts the white ones."},
    "wilcox": {"m": "Number of observations in the first sample.",
               "n": "Number of observations in the second sample."},
    "signrank": {"n": "Number of observations (pairs)."},
    "tukey": {"nranges": "Number of groups whose largest range is taken (1 for Tukey's "
                         "HSD test, R's default).",
              "nmeans": "Number of means compared, k >= 2.",
              "df": "Degrees of freedom of the error variance, >= 2 (Inf allowed)."},
}


_FIRST = {
    "d": "Quantiles: the values at which the density is evaluated.",
    "p": "Quantiles: the values x at which P[X <= x] (P[X > x] with ``lower_tail=False``) "
         "is evaluated.",
    "q": "Probabilities (log-probabilities with ``log_p=True``), of the lower tail unless "
         "``lower_tail=False``.",
}
_FIRST_DISCRETE = {
    "d": "Values at which the probability mass is evaluated (0, with the warning, at "
         "non-integers, as R).",
    "q": "Probabilities (log-probabilities with ``log_p=True``), of the lower tail unless "
         "``lower_tail=False``; the result is the smallest integer x with P[X <= x] >= p.",
}
_FIRST_EXTRA = {
    "wilcox": " X is the Mann-Whitney statistic: the rank sum of the first sample minus "
              "m (m + 1) / 2.",
    "signrank": " X is the sum of the ranks of the positive differences.",
}


def family(name: str) -> str:
    """The distribution family of a function (``"gamma"`` for ``dgamma``), or its own name for
    a special function."""
    if name[:1] in ("d", "p", "q", "r") and name[1:] in _FAMILIES:
        return name[1:]
    return name


def parameter_meanings(row: Fn | RFn) -> dict[str, str]:
    """What each of a row's Rmath.h parameters means, by name, in the row's order."""
    fam = family(row.name)
    if fam == row.name:
        table = getattr(row, "meanings", {})
        return {a: table[a] for a in row.arg_names}
    table = _FAMILY_PARAMETERS[fam]
    kind = row.name[0]
    out: dict[str, str] = {}
    for k, a in enumerate(row.arg_names):
        if k == 0 and kind in _FIRST:
            text = _FIRST_DISCRETE.get(kind, _FIRST[kind]) if fam in _DISCRETE else _FIRST[kind]
            if kind == "d" and fam in _DISCRETE and a not in getattr(row, "nonint", ()):
                text = text.replace(", with the warning,", "")
            out[a] = text + (_FIRST_EXTRA.get(fam, "") if kind in "dp" else "")
        else:
            out[a] = table[a]
    return out


# -- where R's interface differs --------------------------------------------------------------

_RATE_NOTE = (
    "R's {pos} positional argument is ``rate``; Rmath.h's (and daskcl's) is ``scale`` = "
    "1/rate: R's ``{r}`` is ``{py}`` here, and ``{same}`` here is R's ``{rsame}``."
)
_NCP_NOTE = (
    "R's ``ncp`` (the next position in R) selects the noncentral distribution, as R does "
    "whenever ``ncp`` is given (even 0): pass ``ncp=`` by keyword, or call ``{target}``.  A "
    "positional ``ncp`` is a TypeError here, never a silent difference."
)
_MU_NOTE = (
    "R's ``mu`` (the fourth position in R) selects the mean parametrisation: pass ``mu=`` by "
    "keyword (``prob`` may then be left out), or call ``{target}``."
)
_TUKEY_NOTE = (
    "R's order is ``({first}, nmeans, df, nranges = 1)``; Rmath.h's (and daskcl's) is "
    "``({first}, nranges, nmeans, df)``, with no default: R's ``{r}`` is ``{py}`` here, and a "
    "four-argument R call ``{r4}`` (nranges = 2) is ``{py4}`` here.  By keyword "
    "(``nranges=``, ``nmeans=``, ``df=``) the names are R's."
)
_BESSEL_NOTE = (
    "R's third argument is the logical ``expon.scaled``; Rmath.h's (and daskcl's) is ``expo``, "
    "1 or 2: R's ``{r}(x, nu, TRUE)`` is ``{py}(x, nu, 2)`` or ``{py}(x, nu, expon_scaled=True)`` "
    "here."
)
#: where R's call differs from daskcl's, by the rules of families (a function's own difference
#: is its row's ``r_note``)
_ORDER_NOTES: dict[str, str] = {
    **{f"{k}gamma": _RATE_NOTE.format(
        pos="third", r=f"{k}gamma({a}, 2, 3)", py=f"{k}gamma({a}, 2, rate=3)",
        same=f"{k}gamma({a}, 2, 3)", rsame=f"{k}gamma({a}, 2, scale = 3)")
       for k, a in (("d", 1), ("p", 1), ("q", 0.5), ("r", 10))},
    **{f"{k}exp": _RATE_NOTE.format(
        pos="second", r=f"{k}exp({a}, 2)", py=f"{k}exp({a}, rate=2)", same=f"{k}exp({a}, 2)",
        rsame=f"{k}exp({a}, 0.5)")
       for k, a in (("d", 1), ("p", 1), ("q", 0.5), ("r", 10))},
    **{f"{k}{c}": _NCP_NOTE.format(target=f"{k}{n}")
       for k in "dpq" for c, n in (("chisq", "nchisq"), ("beta", "nbeta"), ("t", "nt"),
                                   ("f", "nf"))},
    "rchisq": _NCP_NOTE.format(target="rnchisq"),
    "rbeta": _NCP_NOTE.format(target="rnbeta"),
    **{f"{k}nbinom": _MU_NOTE.format(target=f"{k}nbinom_mu") for k in "dpqr"},
    "ptukey": _TUKEY_NOTE.format(first="q", r="ptukey(3.5, 4, 12)", py="ptukey(3.5, 1, 4, 12)",
                                 r4="ptukey(3.5, 4, 12, 2)", py4="ptukey(3.5, 2, 4, 12)"),
    "qtukey": _TUKEY_NOTE.format(first="p", r="qtukey(0.95, 4, 10)",
                                 py="qtukey(0.95, 1, 4, 10)", r4="qtukey(0.95, 4, 10, 2)",
                                 py4="qtukey(0.95, 2, 4, 10)"),
    "bessel_i": _BESSEL_NOTE.format(r="besselI", py="bessel_i"),
    "bessel_k": _BESSEL_NOTE.format(r="besselK", py="bessel_k"),
    **{f"{k}pois": "R's ``lambda`` is ``lam`` here (``lambda`` is a reserved word in Python); "
                   "the positions agree." for k in "dpqr"},
    **{f"{k}n{c}": f"R has no ``{k}n{c}``: R calls it for ``{k}{c}(..., ncp = )``."
       for k in "dpq" for c in ("chisq", "beta", "t", "f")},
    **{f"{k}nbinom_mu": f"R has no ``{k}nbinom_mu``: R calls it for ``{k}nbinom(..., mu = )``."
       for k in "dpqr"},
}


def order_note(row: Fn | RFn) -> str:
    """Where R's call of a row's function differs from daskcl's (Rmath.h's) in order, names or
    meaning: the row's own note, or its family's rule; empty where they agree (beyond R's
    dotted flags ``lower.tail``, ``log.p``)."""
    return row.r_note or _ORDER_NOTES.get(row.name, "")


@dataclass(frozen=True)
class Alias:
    """A keyword of R's interface that Rmath.h's does not have.

    Parameters
    ----------
    name
        R's keyword, spelt for Python (R's dots as underscores: ``expon_scaled``).
    kind
        ``"reciprocal"``: the value's reciprocal is ``param`` (``rate`` -> ``scale``);
        ``"flag"``: a logical flag, True giving ``param`` = 2 and False 1 (``expon_scaled`` ->
        ``expo``); ``"function"``: the call goes to ``target`` with this keyword among its
        arguments, in place of ``param`` where ``param`` is set (``mu`` -> ``dnbinom_mu``
        without ``prob``; ``ncp`` -> ``dnchisq``).
    param
        The Rmath.h parameter the keyword stands for (empty for ``ncp``, which adds one).
    meaning
        The parameter's documentation.
    target
        The function that ``kind="function"`` calls.
    r_error
        R's error when both the keyword and ``param`` are given (empty where R has no
        ``param``).
    """

    name: str
    kind: str
    param: str
    meaning: str
    target: str = ""
    r_error: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("reciprocal", "flag", "function"):
            raise ValueError(f"alias {self.name}: unknown kind {self.kind!r}")
        if (self.kind == "function") != bool(self.target):
            raise ValueError(f"alias {self.name}: a target goes with kind 'function' only")


def _rate(name: str) -> Alias:
    err = "specify 'rate' or 'scale' but not both" if "gamma" in name else ""
    return Alias("rate", "reciprocal", "scale",
                 "R's rate: ``rate=r`` is ``scale=1/r`` (the reciprocal as R computes it). "
                 "Not together with ``scale``.", r_error=err)


def _ncp(name: str, target: str) -> Alias:
    return Alias("ncp", "function", "",
                 f"R's noncentrality: given (even as 0), the call is ``{target}``'s, as in R.",
                 target=target)


def _mu(name: str) -> Alias:
    return Alias("mu", "function", "prob",
                 f"R's mean parametrisation: given, the call is ``{name}_mu``'s (prob = "
                 "size / (size + mu)), as in R. Not together with ``prob``.",
                 target=f"{name}_mu", r_error="'prob' and 'mu' both specified")


def _expon(name: str) -> Alias:
    scaled = "exp(-x) I_nu(x)" if name == "bessel_i" else "exp(x) K_nu(x)"
    return Alias("expon_scaled", "flag", "expo",
                 f"R's ``expon.scaled``: True is ``expo=2`` ({scaled}), False ``expo=1``. "
                 "Not together with ``expo``.")


#: R's keywords that Rmath.h's interface lacks, by function and keyword
ALIASES: dict[str, dict[str, Alias]] = {
    **{f"{k}{fam}": {"rate": _rate(f"{k}{fam}")} for k in "dpqr" for fam in ("gamma", "exp")},
    **{f"{k}{c}": {"ncp": _ncp(f"{k}{c}", f"{k}n{c}")}
       for k in "dpq" for c in ("chisq", "beta", "t", "f")},
    "rchisq": {"ncp": _ncp("rchisq", "rnchisq")},
    "rbeta": {"ncp": _ncp("rbeta", "rnbeta")},
    **{f"{k}nbinom": {"mu": _mu(f"{k}nbinom")} for k in "dpqr"},
    "bessel_i": {"expon_scaled": _expon("bessel_i")},
    "bessel_k": {"expon_scaled": _expon("bessel_k")},
}


def optional_params(name: str) -> frozenset[str]:
    """Rmath.h parameters without R's default that an alias can stand in for (``prob`` of the
    negative binomial, given ``mu``): None by default in the signature."""
    return frozenset(a.param for a in ALIASES.get(name, {}).values()
                     if a.kind == "function" and a.param)


def _reciprocal_block(block: np.ndarray) -> np.ndarray:
    # 1/0 and 1/1e-320 are +Inf, as R's 1/rate, without NumPy's warnings
    with np.errstate(divide="ignore", over="ignore"):
        out: np.ndarray = np.divide(1.0, block, dtype=np.float64)
    return out


def _reciprocal(name: str, keyword: str, value: Any) -> Any:
    """``1 / value`` in double precision, as R's ``1/rate`` (0 gives Inf)."""
    if is_dask_array(value):
        return value.map_blocks(_reciprocal_block, dtype=np.float64,
                                meta=np.empty((0,) * value.ndim, dtype=np.float64))
    if is_device_array(value):
        from ..runtime import device

        with device.quiet_compiler():   # pyopencl warns whenever a compiler prints anything
            return 1.0 / value.astype(np.float64)
    out = _reciprocal_block(real_array(name, keyword, value))
    return float(out) if out.ndim == 0 else out


def apply_aliases(name: str, arguments: MutableMapping[str, Any]) -> str:
    """Replace R's keywords among a call's arguments by Rmath.h's, in place.

    Parameters
    ----------
    name
        The function called.
    arguments
        Its arguments by name, as given (``inspect.BoundArguments.arguments`` before the
        defaults are applied); an alias or an optional parameter given as None counts as not
        given.

    Returns
    -------
    str
        The function to evaluate: ``name``, or the one R calls for the keyword given
        (``dnchisq`` for ``dchisq(..., ncp=)``, ``dnbinom_mu`` for ``dnbinom(..., mu=)``).

    Raises
    ------
    TypeError
        Both an alias and the parameter it stands for (R's error where R has one); neither
        ``prob`` nor ``mu`` of the negative binomial; a bad value of a flag.
    """
    target = name
    for alias in ALIASES.get(name, {}).values():
        value = arguments.pop(alias.name, None)
        given = bool(alias.param) and arguments.get(alias.param) is not None
        if value is None:
            if alias.kind == "function" and alias.param and not given:
                arguments.pop(alias.param, None)
                raise TypeError(f"{name}() missing a required argument: {alias.param!r} "
                                f"(or R's {alias.name}=)")
            continue
        if given:
            r = f" (R: {alias.r_error})" if alias.r_error else ""
            raise TypeError(f"{name}: give {alias.param} or {alias.name}, not both{r}")
        if alias.kind == "reciprocal":
            arguments[alias.param] = _reciprocal(name, alias.name, value)
        elif alias.kind == "flag":
            arguments[alias.param] = 2.0 if flag_value(name, alias.name, value) else 1.0
        else:
            arguments.pop(alias.param, None)
            arguments[alias.name] = value
            target = alias.target
    return target


# -- examples ------------------------------------------------------------------------------------


def _literal(v: object) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return "np.nan" if math.isnan(v) else ("np.inf" if v > 0 else "-np.inf")
    return repr(v)


def example_lines(row: Fn | RFn) -> list[str]:
    """The doctest lines of a row's examples (prompts, comments and R's printed values)."""
    name = row.name
    random = _is_random(row)
    calls: list[tuple[str, str, str]] = []
    for ex in row.examples:
        parts = [_literal(a) for a in ex.args]
        parts += [f"{k}={_literal(v)}" for k, v in ex.kwargs.items()]
        comment = f"R: {ex.r}" if ex.r else f"libRmath's {name} (no R function)"
        if random:
            call = f"nmath.{name}({', '.join([*parts, 'seed=1'])})"
            assert isinstance(ex.value, tuple)
            out = repr(np.array(ex.value, dtype=np.float64))
        else:
            call = f"float(nmath.{name}({', '.join(parts)}))"
            out = repr(float(ex.value))  # type: ignore[arg-type]
        calls.append((call, comment, out))
    width = max(len(c) for c, _, _ in calls)
    lines = [">>> from daskcl import nmath"]
    if any("np." in c for c, _, _ in calls):
        lines.append(">>> import numpy as np")
    for call, comment, out in calls:
        lines += [f">>> {call.ljust(width)}  # {comment}", out]
    if random:
        params = "".join(f", {v!r}" for v in getattr(row, "stream_args", ()))
        lines += [f">>> x = nmath.{name}(5{params}, seed=42)",
                  f">>> bool((x == nmath.{name}(5{params}, seed=42)).all())  "
                  "# the same seed, the same stream",
                  "True"]
    return lines


# -- the algorithm ------------------------------------------------------------------------------


def source(row: Fn | RFn) -> tuple[str, str]:
    """The file of the unit that computes ``row`` (``cl/nmath/dgamma.cl``) and its ``@source``
    text (the algorithm and its reference, on one line); ``("", "")`` if the kernel library
    cannot be read."""
    from ..errors import DaskclError
    from ..runtime.library import get_library

    try:
        lib = get_library()
    except (DaskclError, OSError):
        return "", ""
    stem = lib.symbols.get(row.csym)
    if stem is None:
        return "", ""
    unit = lib.units[stem]
    text: list[str] = []
    for line in lib.read(unit.name).splitlines():
        s = line.strip()
        if not s.startswith("//"):
            break
        body = s[2:].strip()
        if body.startswith("@source:"):
            text.append(body[len("@source:"):].strip())
        elif text and body and not body.startswith("@"):
            text.append(body)
        elif text:
            break
    return f"cl/{unit.name}", " ".join(text)


# -- docstrings ---------------------------------------------------------------------------------

_FLAG_DOC = {
    "log": "log : bool, default False\n    Return the log of the density.",
    "lower_tail": "lower_tail : bool, default True\n    P[X <= x] if true, else P[X > x] "
                  "(R's ``lower.tail``).",
    "log_p": "log_p : bool, default False\n    Probabilities are given (or returned) as "
             "log(p) (R's ``log.p``).",
}


def _is_random(row: Fn | RFn) -> bool:
    return not hasattr(row, "kind")


def rmath_call(row: Fn | RFn) -> str:
    """Rmath.h's C call of a row, e.g. ``dgamma(x, shape, scale, give_log)``."""
    sym = row.csym
    if sym.endswith("_tab"):
        sym = sym[: -len("_tab")]
    elif sym.startswith("R_"):
        sym = sym[2:]
    flags = [c for _, c in getattr(row, "flags", ())]
    return f"{sym}({', '.join([*row.arg_names, *flags])})"


def _origin(row: Fn | RFn) -> str:
    r = row.r_call
    place = ("from Philox4x32-10 streams on the OpenCL device" if _is_random(row)
             else "evaluated on the OpenCL device")
    if not r:
        head = (f"R has no function for it; Rmath.h's ``{rmath_call(row)}`` (libRmath), "
                f"{place}.")
    else:
        head = f"R: ``{r}``.  Rmath.h: ``{rmath_call(row)}``, {place}."
    note = order_note(row)
    return head + (f"\n\n{note}" if note else "")


def _param_doc(name: str, meaning: str, head: str) -> str:
    body = textwrap.fill(meaning, 92, initial_indent="    ", subsequent_indent="    ",
                         break_on_hyphens=False)
    return f"{name} : {head}\n{body}"


def _parameters(row: Fn | RFn) -> list[str]:
    meanings = parameter_meanings(row)
    optional = optional_params(row.name)
    out = []
    for a in row.arg_names:
        if a in optional:
            alias = next(al.name for al in ALIASES[row.name].values() if al.param == a)
            out.append(_param_doc(a, f"{meanings[a]} Required unless ``{alias}=`` is given.",
                                  "array_like, optional"))
        elif a in row.defaults:
            out.append(_param_doc(a, meanings[a], f"array_like, default {row.defaults[a]!r}"))
        else:
            out.append(_param_doc(a, meanings[a], "array_like"))
    return out


def _alias_params(row: Fn | RFn) -> list[str]:
    out = []
    for alias in ALIASES.get(row.name, {}).values():
        head = "bool, optional" if alias.kind == "flag" else "array_like, optional"
        out.append(_param_doc(alias.name, alias.meaning, head))
    return out


def _notes(row: Fn | RFn) -> str:
    path, text = source(row)
    if not text:
        return ""
    # prose, not a literal block: markup characters escaped (``|z|`` is no substitution)
    text = re.sub(r"([\\*`|]|_(?!\w))", r"\\\1", text)
    body = textwrap.fill(f"The algorithm and its reference (``{path}``): {text}", 92,
                         break_on_hyphens=False)
    return f"Notes\n-----\n{body}\n\n"


def _conflicts(row: Fn | RFn) -> list[str]:
    out = []
    for alias in ALIASES.get(row.name, {}).values():
        if alias.param:
            out.append(f"``{alias.name}=`` together with ``{alias.param}``.")
        if alias.kind == "function" and alias.param:
            out.append(f"Neither ``{alias.param}`` nor ``{alias.name}=``.")
    return out


def _examples(row: Fn | RFn) -> str:
    return "Examples\n--------\n" + "\n".join(example_lines(row)) + "\n"


def docstring(row: Fn | RFn) -> str:
    """The numpydoc docstring of a row's public function: R's call, where R differs, what each
    parameter means, the algorithm and its reference, and examples with R's values."""
    if _is_random(row):
        return _random_docstring(row)  # type: ignore[arg-type]
    fn: Fn = row  # type: ignore[assignment]
    params = [*_parameters(fn), *(_FLAG_DOC[k] for k, _ in fn.flags), *_alias_params(fn)]
    alias_raise = "".join(f"  {c}" for c in _conflicts(fn))
    return (
        f"{fn.summary}\n\n{_origin(fn)}\n\n"
        f"Parameters\n----------\n" + "\n".join(params) + "\n\n"
        "Returns\n-------\nndarray or float64 or dask array or pyopencl array\n    float64 values "
        "of the broadcast shape (a lazy dask array when an argument is one; a "
        "``pyopencl.array.Array`` on the bound device when an argument is one).\n\n"
        "Raises\n------\nTypeError\n    A non-numeric argument; a flag that is not a bool "
        f"(Python or NumPy) or the integer 0 or 1.{alias_raise}\nValueError\n    Shapes that do "
        "not broadcast.\n\n"
        "Warns\n-----\nRuntimeWarning\n    ``<name>: N NaN(s) produced`` where R gives NaN with "
        "a warning"
        + (f"; ``<name>: N {fn.range_warn[1]}`` where R warns so" if fn.range_warn else "")
        + ".\n\n"
        + _notes(fn) + _examples(fn)
    )


def _random_docstring(fn: RFn) -> str:
    conflict = "size" in fn.arg_names
    first_doc = (
        "n : int or tuple of ints, positional only\n    The output shape (NumPy's ``size``; "
        "named ``n`` here, as in R, because ``size`` is a parameter)."
        if conflict else "size : int or tuple of ints\n    The output shape (R's ``n``; NumPy's "
        "``size``)."
    )
    meanings = parameter_meanings(fn)
    optional = optional_params(fn.name)
    params = [first_doc]
    for p in fn.arg_names:
        text = f"{meanings[p]} Broadcast against the output shape."
        if p in optional:
            params.append(_param_doc(p, f"{text} Required unless ``mu=`` is given.",
                                     "array_like, optional"))
        elif p in fn.defaults:
            params.append(_param_doc(p, text, f"array_like, default {fn.defaults[p]!r}"))
        else:
            params.append(_param_doc(p, text, "array_like"))
    params += [
        "seed : int, numpy.random.SeedSequence or numpy.random.Generator, optional\n"
        "    The Philox key: an int in [0, 2**64) is the key; a SeedSequence gives "
        "``generate_state(1, uint64)[0]``; a Generator draws the key with "
        "``integers(0, 2**64, dtype=uint64)`` (it advances by one draw); a fresh random key "
        "if None (drawn once per call, so all chunks of a dask result share it).",
        "offset : int, default 0\n    Counter of the first element: "
        f"``{fn.name}({'n' if conflict else 'size'}, ..., offset=m)`` continues the stream "
        "at element m.",
        "chunks : dask chunks, optional\n    Return a lazy dask array with these chunks "
        "(also when a parameter is a dask array).",
        "device : bool, default False\n    Return a ``pyopencl.array.Array`` on the bound "
        "device (also when a parameter is one).",
        *_alias_params(fn),
    ]
    limit = (f"  Largest parameters: {fn.limit} gives NaN (with the warning); the work of one "
             "variate grows with them." if fn.limit else "")
    return (
        f"{fn.summary}\n\n{_origin(fn)}\n\nMethod: {fn.method}{limit}\n\n"
        "Element k (flat, C order) depends only on (seed, offset + k) and its parameters "
        "(Philox4x32-10 streams), so results do not depend on chunking or device.  R's own "
        "streams (Mersenne-Twister) are not reproduced: the first example shows R's output "
        "where R's is deterministic.\n\n"
        "Parameters\n----------\n" + "\n".join(params) + "\n\n"
        "Returns\n-------\nndarray or dask array or pyopencl array\n    float64 of the output "
        "shape.\n\n"
        "Raises\n------\nTypeError\n    A non-numeric parameter, size or seed."
        + "".join(f"  {c}" for c in _conflicts(fn)) + "\nValueError\n"
        "    A parameter that does not broadcast to size; a bad seed or offset.\n\n"
        "Warns\n-----\nRuntimeWarning\n    ``<name>: N NaN(s) produced`` for invalid or NaN "
        "parameters (R: \"NAs produced\").\n\n"
        + _notes(fn) + _examples(fn)
    )


# -- the function table -------------------------------------------------------------------------

TITLES: dict[str, str] = {
    "norm": "Normal", "unif": "Uniform", "exp": "Exponential", "gamma": "Gamma",
    "beta": "Beta", "lnorm": "Log-normal", "chisq": "Chi-squared", "t": "Student's t",
    "f": "F", "cauchy": "Cauchy", "logis": "Logistic", "weibull": "Weibull",
    "binom": "Binomial", "pois": "Poisson", "geom": "Geometric",
    "nbinom": "Negative binomial", "hyper": "Hypergeometric",
    "nbeta": "Noncentral beta", "nchisq": "Noncentral chi-squared", "nf": "Noncentral F",
    "nt": "Noncentral t", "tukey": "Studentized range (Tukey)",
    "wilcox": "Wilcoxon rank sum", "signrank": "Wilcoxon signed rank",
    "special": "Gamma, beta and related special functions", "bessel": "Bessel functions",
}


def group(name: str) -> str:
    fam = family(name)
    if fam == name:
        return "bessel" if name.startswith("bessel") else "special"
    return "nbinom" if fam == "nbinom_mu" else fam


