# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the comparison table of docs/accuracy.rst from ``best_references*.csv``: per function
and region, the worst relative error and the share of rows within the function's tolerance
(``tests/nmath/test_accuracy_best.py``) for daskcl's ``best``, daskcl's default ``r``, R's
libRmath (``tests/support/rmath_oracle.py``) and scipy.stats, on the same rows.

Run from the repository root, on the device daskcl binds (PoCL in CI)::

    python3 tests/data/make_accuracy_table.py      # rewrites the table between its markers

A row is one call (a tail, on the log scale or not); a result that is not finite where the
reference is counts as an infinite error.
"""

from __future__ import annotations

import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.special
import scipy.stats

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "nmath")]

import test_accuracy_best as t  # noqa: E402
from support.rmath_oracle import r_eval  # noqa: E402

import daskcl.config  # noqa: E402

PAGE = ROOT / "docs" / "accuracy.rst"
BEGIN, END = ".. BEGIN accuracy table", ".. END accuracy table"


#: R's symbol where it differs from the function's name
R_NAME = {"dnorm": "dnorm4", "pnorm": "pnorm5", "qnorm": "qnorm5"}

#: the central and discrete families: scipy.stats' distribution from R's parameters
CENTRAL = {
    "norm": lambda m, s: scipy.stats.norm(m, s),
    "lnorm": lambda m, s: scipy.stats.lognorm(s, scale=np.exp(m)),
    "gamma": lambda a, s: scipy.stats.gamma(a, scale=s),
    "chisq": lambda n: scipy.stats.chi2(n),
    "exp": lambda s: scipy.stats.expon(scale=s),
    "beta": lambda a, b: scipy.stats.beta(a, b),
    "t": lambda n: scipy.stats.t(n),
    "f": lambda a, b: scipy.stats.f(a, b),
    "cauchy": lambda m, s: scipy.stats.cauchy(m, s),
    "logis": lambda m, s: scipy.stats.logistic(m, s),
    "weibull": lambda k, s: scipy.stats.weibull_min(k, scale=s),
    "unif": lambda a, b: scipy.stats.uniform(a, b - a),
    "binom": lambda n, p: scipy.stats.binom(n, p),
    "pois": lambda lam: scipy.stats.poisson(lam),
    "nbinom": lambda n, p: scipy.stats.nbinom(n, p),
    "nbinom_mu": lambda n, mu: scipy.stats.nbinom(n, n / (n + mu)),
    "geom": lambda p: scipy.stats.geom(p, loc=-1),
    "hyper": lambda m, n, k: scipy.stats.hypergeom(m + n, m, k),
}

#: special functions in scipy.special
SPECIAL = {
    "gammafn": scipy.special.gamma, "lgammafn": scipy.special.gammaln,
    "digamma": scipy.special.psi, "trigamma": lambda x: scipy.special.polygamma(1, x),
    "tetragamma": lambda x: scipy.special.polygamma(2, x),
    "pentagamma": lambda x: scipy.special.polygamma(3, x),
    "psigamma": lambda x, d: scipy.special.polygamma(d.astype(int), x),
    "beta": scipy.special.beta, "lbeta": scipy.special.betaln,
    "bessel_i": lambda x, nu, e: np.where(e == 2, scipy.special.ive(nu, x), scipy.special.iv(nu, x)),
    "bessel_k": lambda x, nu, e: np.where(e == 2, scipy.special.kve(nu, x), scipy.special.kv(nu, x)),
    "bessel_j": lambda x, nu: scipy.special.jv(nu, x),
    "bessel_y": lambda x, nu: scipy.special.yv(nu, x),
    "lgamma1p": lambda x: scipy.special.gammaln(1 + x),
    "log1pmx": lambda x: np.log1p(x) - x,
}


def _scipy_central(fn: str, lower: str, log: str, args: np.ndarray) -> np.ndarray | None:
    if fn in SPECIAL:
        return SPECIAL[fn](*args)
    family = CENTRAL.get(fn[1:])
    if family is None:          # signrank, wilcox: not in scipy.stats
        return None
    d = family(*args[1:])
    x = args[0]
    discrete = hasattr(d.dist, "pmf")
    if fn[0] == "d":
        name = ("logpmf" if log == "1" else "pmf") if discrete else (
            "logpdf" if log == "1" else "pdf")
        return getattr(d, name)(x)
    if fn[0] == "p":
        name = ("log" if log == "1" else "") + ("cdf" if lower == "1" else "sf")
        return getattr(d, name)(x)
    p = np.exp(x) if log == "1" else x
    return d.ppf(p) if lower == "1" else d.isf(p)


def _scipy(fn: str, lower: str, log: str, args: np.ndarray) -> np.ndarray | None:
    with np.errstate(all="ignore"):
        if fn not in ("choose", "lchoose", "dnt", "dnf", "pnt", "pnchisq", "pnbeta", "pnf"):
            return _scipy_central(fn, lower, log, args)
        if fn == "choose":
            return scipy.special.binom(*args)
        if fn == "lchoose":
            return np.log(np.abs(scipy.special.binom(*args)))
        if fn in ("dnt", "dnf", "dnchisq"):
            d = {"dnt": scipy.stats.nct, "dnf": scipy.stats.ncf,
                 "dnchisq": scipy.stats.ncx2}[fn](*args[1:])
            return d.logpdf(args[0]) if log == "1" else d.pdf(args[0])
        if fn == "dnbeta":      # through ncf: f(x) = ncf.pdf(F) dF/dx, F = b x / (a (1 - x))
            x, a, b, ncp = args
            f = b * x / (a * (1 - x))
            ld = scipy.stats.ncf(2 * a, 2 * b, ncp).logpdf(f) + np.log(b / a) - 2 * np.log1p(-x)
            return ld if log == "1" else np.exp(ld)
        if fn[0] == "q":        # scipy has no quantile of a log probability: exp(log p)
            p = np.exp(args[0]) if log == "1" else args[0]
            dist = {"qnchisq": scipy.stats.ncx2, "qnf": scipy.stats.ncf, "qnt": scipy.stats.nct,
                    "qbeta": scipy.stats.beta, "qnbeta": scipy.stats.ncf}[fn]
            par = args[1:]
            if fn == "qnbeta":  # x = a F / (a F + b), F the ncf quantile
                par = np.array([2 * args[1], 2 * args[2], args[3]])
            d = dist(*par)
            q = d.ppf(p) if lower == "1" else d.isf(p)
            if fn == "qnbeta":
                q = args[1] * q / (args[1] * q + args[2])
            return q
        dist = {"pnt": scipy.stats.nct, "pnchisq": scipy.stats.ncx2, "pnbeta": None,
                "pnf": scipy.stats.ncf}[fn]
        if dist is None:        # scipy.stats has no noncentral beta: through ncf
            x, a, b, ncp = args
            args = np.array([b * x / (a * (1 - x)), 2 * a, 2 * b, ncp])
            dist = scipy.stats.ncf
        d = dist(*args[1:])
        name = ("log" if log == "1" else "") + ("cdf" if lower == "1" else "sf")
        return getattr(d, name)(args[0])


def _cell(err: np.ndarray | None, tol: float) -> str:
    if err is None:
        return "n/a"
    share = 100.0 * float(np.mean(err <= tol))
    worst = float(np.max(err))
    w = "inf" if not np.isfinite(worst) else f"{worst:.1e}"
    return f"{share:.1f}% ({w})"


def table() -> str:
    errs: dict[tuple[str, str], dict[str, list[np.ndarray | None]]] = defaultdict(
        lambda: defaultdict(list))
    for (fn, lower, log), g in sorted(t.TABLE.items()):
        for mode in ("best", "r"):
            with daskcl.config.set(accuracy=mode), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)     # R's NaNs where it fails
                got = t._call(fn, lower, log, g["args"])
            for region in np.unique(g["region"]):
                m = g["region"] == region
                errs[(fn, region)][mode].append(t._rel(got[m], g["ref"][m]))
        flags = ([] if log == "" else [int(log)] if fn[0] == "d"
                 else [int(lower), int(log)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sp = _scipy(fn, lower, log, g["args"])
        for name, got in (("R", np.array([float(r_eval(R_NAME.get(fn, fn), list(a), flags))
                                           for a in g["args"].T])),
                          ("scipy", sp)):
            for region in np.unique(g["region"]):
                m = g["region"] == region
                errs[(fn, region)][name].append(
                    None if got is None else t._rel(np.asarray(got, float)[m], g["ref"][m]))
    head = ("function", "region", "rows", "tolerance", "daskcl best", "daskcl r",
            "R (libRmath)", "scipy.stats")
    body = []
    for (fn, region), by in errs.items():
        tol = t.LOOSER.get(fn, (t.TOLERANCE[fn], ""))[0]
        e = {k: None if any(x is None for x in v) else np.concatenate(v) for k, v in by.items()}
        body.append((f"``{fn}``", region, str(len(e["best"])), f"{tol:g}",
                     _cell(e["best"], tol), _cell(e["r"], tol), _cell(e["R"], tol),
                     _cell(e["scipy"], tol)))
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(head, widths)), rule]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in body]
    lines.append(rule)
    from daskcl.runtime import device

    said = (f"Written on {device.current().info.describe()} with scipy {scipy.__version__}; "
            "each cell: share within tolerance (worst relative error).")
    return said + "\n\n" + "\n".join(lines)


def main() -> None:
    text = PAGE.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    PAGE.write_text(text[:start] + "\n\n" + table() + "\n\n" + text[end:])
    print(f"wrote the table of {PAGE}")


if __name__ == "__main__":
    main()
