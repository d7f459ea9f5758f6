# SPDX-License-Identifier: GPL-2.0-or-later
"""Throughput of daskcl.nmath functions against their peers, side by side in one run.

For each function: the daskcl kernel alone (inputs already on the device, OpenCL event
timing), daskcl end to end (NumPy in, NumPy out), scipy on the CPU (one thread: scipy.stats,
and for some functions also the scipy.special ufunc underneath it), and, where CuPy is
installed (the GPU machine), CuPy's nearest equivalent, kernel alone (CUDA events) and end to
end.  Identical inputs for all.  The device's copy bandwidth is measured too, and the fraction
of it that each memory-bound kernel reaches (bytes: array inputs read + output written).

Cases (``--cases``, comma-separated):

- ``default``: the functions named by ``--functions`` (pnorm, qnorm, dbinom unless told).
- ``issue3``: pgamma qgamma pbeta qbeta pchisq pf pt qt; every shape, degree of freedom and x
  uniform on (0.1, 50), probabilities uniform on (0, 1); peers scipy.stats and scipy.special
  (gammainc, gammaincinv, betainc, betaincinv, chdtr, fdtr, stdtr, stdtrit), and CuPy.
- ``issue4``: binom, pois, geom, hyper, nbinom (d/p/q); the noncentral nbeta, nchisq, nf, nt
  (d/p/q); ptukey, qtukey; wilcox, signrank (d/p/q); bessel_i/j/k/y.  Peers scipy.stats (and
  scipy.special where it has the function), CuPy's bdtr, pdtr, nbdtr for pbinom, ppois, pnbinom.
  scipy has no public Wilcoxon rank-sum or signed-rank d/p/q: those rows time daskcl alone.
- ``all``: the three.

``--call-s S`` sizes each function's calls to about S seconds (n a power of two, at most ``--n``;
scipy's at most ``--scipy-n`` and at least 16): slow functions (ptukey, qtukey) get fewer
elements; every rate is per element.  Without it every function runs at ``--n`` and
``--scipy-n``, as before.

Agreement: on the elements of the scipy timing (``scipy_n``; the first 2048 where scipy has no
peer), daskcl and each peer must agree to |a - b| <= 1e-6 max(|a|, |b|) (plus an absolute
floor for the oscillating Bessel J and Y).  The count of elements that do not is reported per
peer, with the worst in the JSON's "mismatches"; where libRmath loads (tests/support/rmath_oracle.py),
``mismatches_<peer>_daskcl_is_R`` counts those where daskcl gives R's own value.

Run:  python benchmarks/bench_nmath.py [--cases default|issue3|issue4|all] [--n 4194304]
          [--functions pnorm,qnorm,dbinom] [--call-s 0.25] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time, table, write

RTOL = 1e-6          # agreement of daskcl and a peer (loose: both compute the same quantity)
TINY = 1e-300        # values both below this (underflow) agree
CHECK_N = 2048       # elements compared with CuPy where there is no scipy peer
DEFAULT_FUNCTIONS = "pnorm,qnorm,dbinom"


@dataclass
class Spec:
    """A benchmarked function: inputs, the daskcl call, and its peers.

    ``scipy`` is the CPU peer of the ``scipy_*`` columns (scipy.stats, or the scipy.special
    ufunc where scipy.stats has none; None where scipy has no public equivalent, ``note`` says
    so); ``special`` is a second CPU peer, the scipy.special ufunc under scipy.stats.
    ``peer_args`` maps daskcl's inputs to the peers' (e.g. integer dtypes where scipy's ufunc
    wants C longs), once, outside the timing.
    """

    inputs: Callable[[np.random.Generator, int], tuple[Any, ...]]
    scipy: Callable[..., np.ndarray] | None
    cupy: Callable[..., Any] | None = None   # called with CuPy arrays
    cupy_name: str = ""
    jax: Callable[..., Any] | None = None    # called with JAX arrays
    jax_name: str = ""
    scipy_name: str = ""
    special: Callable[..., np.ndarray] | None = None
    special_name: str = ""
    peer_args: Callable[..., tuple[Any, ...]] | None = None
    atol: float = 0.0
    note: str = ""


def _binom_inputs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    size = rng.integers(1, 1000, n).astype(np.float64)
    return np.floor(rng.uniform(0, 1, n) * (size + 1)), size, rng.uniform(0, 1, n)


def _peer_modules() -> tuple[Any, Any, Any]:
    """cupyx.scipy.special, jax.scipy.special and jax.scipy.stats, or None where missing."""
    try:
        import cupyx.scipy.special as cs
    except ImportError:
        cs = None
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.scipy.special as js
        import jax.scipy.stats as jst
    except ImportError:
        js = jst = None
    return cs, js, jst


def _u(r: np.random.Generator, n: int) -> np.ndarray:   # shapes, degrees of freedom (issue 3)
    return r.uniform(0.1, 50, n)


def _specs() -> dict[str, Spec]:
    import scipy.stats as st

    cs, js, jst = _peer_modules()
    u = _u
    return {
        "pnorm": Spec(lambda r, n: (r.normal(0, 3, n),), st.norm.cdf,
                      cs.ndtr if cs else None, "cupyx ndtr",
                      jst.norm.cdf if jst else None, "jax norm.cdf"),
        "qnorm": Spec(lambda r, n: (r.uniform(0, 1, n),), st.norm.ppf,
                      cs.ndtri if cs else None, "cupyx ndtri",
                      js.ndtri if js else None, "jax ndtri"),
        "dnorm": Spec(lambda r, n: (r.normal(0, 3, n),), st.norm.pdf),
        # issue 3: parameters uniform on (0.1, 50), probabilities uniform on (0, 1)
        "pgamma": Spec(lambda r, n: (u(r, n), u(r, n)), lambda x, a: st.gamma.cdf(x, a),
                       (lambda x, a: cs.gammainc(a, x)) if cs else None, "cupyx gammainc",
                       (lambda x, a: js.gammainc(a, x)) if js else None, "jax gammainc"),
        "qgamma": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n)), lambda p, a: st.gamma.ppf(p, a),
                       (lambda p, a: cs.gammaincinv(a, p)) if cs else None, "cupyx gammaincinv"),
        "pbeta": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n), u(r, n)),
                      lambda x, a, b: st.beta.cdf(x, a, b),
                      (lambda x, a, b: cs.betainc(a, b, x)) if cs else None, "cupyx betainc",
                      (lambda x, a, b: js.betainc(a, b, x)) if js else None, "jax betainc"),
        "qbeta": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n), u(r, n)),
                      lambda p, a, b: st.beta.ppf(p, a, b),
                      (lambda p, a, b: cs.betaincinv(a, b, p)) if cs else None, "cupyx betaincinv"),
        "pchisq": Spec(lambda r, n: (u(r, n), u(r, n)), lambda x, k: st.chi2.cdf(x, k),
                       (lambda x, k: cs.chdtr(k, x)) if cs else None, "cupyx chdtr",
                       (lambda x, k: jst.chi2.cdf(x, k)) if jst else None, "jax chi2.cdf"),
        "pf": Spec(lambda r, n: (u(r, n), u(r, n), u(r, n)), lambda x, a, b: st.f.cdf(x, a, b),
                   (lambda x, a, b: cs.fdtr(a, b, x)) if cs else None, "cupyx fdtr"),
        # a light kernel (one exp, one log1p): how close the elementwise template gets to the
        # memory bandwidth; NumPy's logaddexp is the CPU peer
        "log1pexp": Spec(lambda r, n: (r.normal(0, 10, n),), lambda x: np.logaddexp(0.0, x)),
        "dbinom": Spec(_binom_inputs, st.binom.pmf),
        "dpois": Spec(lambda r, n: (np.floor(r.uniform(0, 100, n)), r.uniform(0.1, 100, n)),
                      st.poisson.pmf),
        "dgamma": Spec(lambda r, n: (r.uniform(0, 50, n), r.uniform(0.1, 50, n)),
                       lambda x, a: st.gamma.pdf(x, a)),
    }


def _issue3_specs() -> dict[str, Spec]:
    """Issue 3: the gamma/beta family at the issue's draws, against scipy.stats and scipy.special."""
    import scipy.special as sp
    import scipy.stats as st

    cs, _, _ = _peer_modules()
    base = _specs()
    u = _u

    def with_special(name: str, stats_name: str, special: Callable[..., Any],
                     special_name: str) -> Spec:
        return replace(base[name], scipy_name=f"scipy.stats.{stats_name}",
                       special=special, special_name=f"scipy.special.{special_name}")

    cs_stdtr = getattr(cs, "stdtr", None) if cs else None
    cs_stdtrit = getattr(cs, "stdtrit", None) if cs else None
    return {
        "pgamma": with_special("pgamma", "gamma.cdf", lambda x, a: sp.gammainc(a, x), "gammainc"),
        "qgamma": with_special("qgamma", "gamma.ppf", lambda p, a: sp.gammaincinv(a, p),
                               "gammaincinv"),
        "pbeta": with_special("pbeta", "beta.cdf", lambda x, a, b: sp.betainc(a, b, x), "betainc"),
        "qbeta": with_special("qbeta", "beta.ppf", lambda p, a, b: sp.betaincinv(a, b, p),
                              "betaincinv"),
        "pchisq": with_special("pchisq", "chi2.cdf", lambda x, k: sp.chdtr(k, x), "chdtr"),
        "pf": with_special("pf", "f.cdf", lambda x, a, b: sp.fdtr(a, b, x), "fdtr"),
        "pt": Spec(lambda r, n: (u(r, n), u(r, n)), lambda q, k: st.t.cdf(q, k),
                   (lambda q, k: cs_stdtr(k, q)) if cs_stdtr else None, "cupyx stdtr",
                   scipy_name="scipy.stats.t.cdf", special=lambda q, k: sp.stdtr(k, q),
                   special_name="scipy.special.stdtr"),
        "qt": Spec(lambda r, n: (r.uniform(0, 1, n), u(r, n)), lambda p, k: st.t.ppf(p, k),
                   (lambda p, k: cs_stdtrit(k, p)) if cs_stdtrit else None, "cupyx stdtrit",
                   scipy_name="scipy.stats.t.ppf", special=lambda p, k: sp.stdtrit(k, p),
                   special_name="scipy.special.stdtrit"),
    }


def _ints(r: np.random.Generator, lo: int, hi: int, n: int) -> np.ndarray:
    """Integers uniform on lo..hi (both included), as float64."""
    return r.integers(lo, hi + 1, n).astype(np.float64)


def _as_long(*idx: int) -> Callable[..., tuple[Any, ...]]:
    """peer_args: the arguments at ``idx`` as int64 (scipy's and CuPy's bdtr/nbdtr loops)."""
    def conv(*args: Any) -> tuple[Any, ...]:
        return tuple(a.astype(np.int64) if j in idx else a for j, a in enumerate(args))
    return conv


def _issue4_specs() -> dict[str, Spec]:
    """Issue 4: discrete families, noncentral, Tukey, Wilcoxon, signed rank, Bessel."""
    import scipy.special as sp
    import scipy.stats as st

    cs, _, _ = _peer_modules()

    # --- draws: the x of d/p functions is drawn from the distribution itself
    def binom(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        size, prob = _ints(r, 1, 1000, n), r.uniform(0, 1, n)
        return r.binomial(size.astype(np.int64), prob).astype(np.float64), size, prob

    def pois(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        lam = r.uniform(0.1, 1000, n)
        return r.poisson(lam).astype(np.float64), lam

    def geom(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        prob = r.uniform(0, 1, n)
        return (r.geometric(prob) - 1).astype(np.float64), prob

    def hyper(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        m, nb = _ints(r, 1, 1000, n), _ints(r, 1, 1000, n)
        k = np.floor(r.uniform(0, 1, n) * (m + nb)) + 1
        x = r.hypergeometric(m.astype(np.int64), nb.astype(np.int64), k.astype(np.int64))
        return x.astype(np.float64), m, nb, k

    def nbinom(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        size, prob = _ints(r, 1, 1000, n), r.uniform(0, 1, n)
        return r.negative_binomial(size, prob).astype(np.float64), size, prob

    def nchisq(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        df, ncp = r.uniform(1, 100, n), r.uniform(0, 20, n)
        return r.noncentral_chisquare(df, ncp), df, ncp

    def nbeta(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        a, b, ncp = r.uniform(0.5, 50, n), r.uniform(0.5, 50, n), r.uniform(0, 20, n)
        f = r.noncentral_f(2 * a, 2 * b, ncp)          # B = a F / (b + a F)
        return a * f / (b + a * f), a, b, ncp

    def nf(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        d1, d2, ncp = r.uniform(1, 100, n), r.uniform(1, 100, n), r.uniform(0, 20, n)
        return r.noncentral_f(d1, d2, ncp), d1, d2, ncp

    def nt(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        df, ncp = r.uniform(1, 100, n), r.uniform(0, 20, n)
        return (r.normal(0, 1, n) + ncp) / np.sqrt(r.chisquare(df) / df), df, ncp

    def tukey(r: np.random.Generator, n: int) -> tuple[Any, ...]:
        return r.uniform(0.5, 8, n), 1.0, _ints(r, 2, 20, n), r.uniform(5, 120, n)

    def wilcox(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        m, nn = _ints(r, 1, 50, n), _ints(r, 1, 50, n)
        return np.floor(r.uniform(0, 1, n) * (m * nn + 1)), m, nn

    def signrank(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        nn = _ints(r, 1, 100, n)
        return np.floor(r.uniform(0, 1, n) * (nn * (nn + 1) / 2 + 1)), nn

    def bessel(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        return r.uniform(0.1, 100, n), r.uniform(0, 50, n)

    def prob(draw: Callable[[np.random.Generator, int], tuple[Any, ...]]
             ) -> Callable[[np.random.Generator, int], tuple[Any, ...]]:
        """The quantile function's inputs: the first argument uniform on (0, 1)."""
        return lambda r, n: (r.uniform(0, 1, n), *draw(r, n)[1:])

    # --- noncentral beta through the noncentral F: B = a F / (b + a F), F ~ F'(2a, 2b, ncp)
    def nbeta_pdf(x: Any, a: Any, b: Any, ncp: Any) -> Any:
        f = b * x / (a * (1 - x))
        return st.ncf.pdf(f, 2 * a, 2 * b, ncp) * b / (a * (1 - x) ** 2)

    def nbeta_cdf(x: Any, a: Any, b: Any, ncp: Any) -> Any:
        return st.ncf.cdf(b * x / (a * (1 - x)), 2 * a, 2 * b, ncp)

    def nbeta_ppf(p: Any, a: Any, b: Any, ncp: Any) -> Any:
        f = st.ncf.ppf(p, 2 * a, 2 * b, ncp)
        return a * f / (b + a * f)

    # scipy.stats' exact Wilcoxon tables are private; the count tables are built on the first
    # call and cached, so the timed calls exclude their build
    no_peer = "no public scipy {}: daskcl alone (tables cached)"
    tukey_note = "R's qtukey stops at |dq| < 1e-4 (AS 190)"
    nc_note = "scipy has no noncentral beta: ncf, change of variable"
    bessel_atol = 1e-12   # J and Y oscillate: relative agreement fails next to their zeros

    def stats(name: str, method: str, shift: int = 0, nargs: int = 0) -> Callable[..., Any]:
        dist = getattr(st, name)
        fn = getattr(dist, method)
        if nargs:    # studentized_range: (q, nranges, nmeans, df) -> (q, nmeans, df)
            return lambda q, _r, k, df: fn(q, k, df)
        if shift:    # R's geometric counts failures, scipy's trials
            if method == "ppf":
                return lambda p, pr: fn(p, pr) - 1
            return lambda x, pr: fn(x + 1, pr)
        return fn

    def hyper_peer(method: str) -> Callable[..., Any]:
        fn = getattr(st.hypergeom, method)   # R (x, m white, n black, k drawn); scipy (x, M, n, N)
        return lambda x, m, nb, k: fn(x, m + nb, m, k)

    S = Spec
    return {
        "dbinom": S(binom, st.binom.pmf, scipy_name="scipy.stats.binom.pmf"),
        "pbinom": S(binom, st.binom.cdf, (lambda q, s, p: cs.bdtr(q, s, p)) if cs else None,
                    "cupyx bdtr", scipy_name="scipy.stats.binom.cdf",
                    special=lambda q, s, p: sp.bdtr(q, s, p), special_name="scipy.special.bdtr",
                    peer_args=_as_long(1)),
        "qbinom": S(prob(binom), st.binom.ppf, scipy_name="scipy.stats.binom.ppf"),
        "dpois": S(pois, st.poisson.pmf, scipy_name="scipy.stats.poisson.pmf"),
        "ppois": S(pois, st.poisson.cdf, (lambda q, lam: cs.pdtr(q, lam)) if cs else None,
                   "cupyx pdtr", scipy_name="scipy.stats.poisson.cdf",
                   special=lambda q, lam: sp.pdtr(q, lam), special_name="scipy.special.pdtr"),
        "qpois": S(prob(pois), st.poisson.ppf, scipy_name="scipy.stats.poisson.ppf"),
        "dgeom": S(geom, stats("geom", "pmf", shift=1), scipy_name="scipy.stats.geom.pmf(x + 1)"),
        "pgeom": S(geom, stats("geom", "cdf", shift=1), scipy_name="scipy.stats.geom.cdf(x + 1)"),
        "qgeom": S(prob(geom), stats("geom", "ppf", shift=1),
                   scipy_name="scipy.stats.geom.ppf - 1"),
        "dhyper": S(hyper, hyper_peer("pmf"), scipy_name="scipy.stats.hypergeom.pmf"),
        "phyper": S(hyper, hyper_peer("cdf"), scipy_name="scipy.stats.hypergeom.cdf"),
        "qhyper": S(prob(hyper), hyper_peer("ppf"), scipy_name="scipy.stats.hypergeom.ppf"),
        "dnbinom": S(nbinom, st.nbinom.pmf, scipy_name="scipy.stats.nbinom.pmf"),
        "pnbinom": S(nbinom, st.nbinom.cdf, (lambda q, s, p: cs.nbdtr(q, s, p)) if cs else None,
                     "cupyx nbdtr", scipy_name="scipy.stats.nbinom.cdf",
                     special=lambda q, s, p: sp.nbdtr(q, s, p),
                     special_name="scipy.special.nbdtr", peer_args=_as_long(0, 1)),
        "qnbinom": S(prob(nbinom), st.nbinom.ppf, scipy_name="scipy.stats.nbinom.ppf"),
        "dnbeta": S(nbeta, nbeta_pdf, scipy_name="scipy.stats.ncf.pdf (B = aF/(b + aF))",
                    note=nc_note),
        "pnbeta": S(nbeta, nbeta_cdf, scipy_name="scipy.stats.ncf.cdf (B = aF/(b + aF))",
                    note=nc_note),
        "qnbeta": S(prob(nbeta), nbeta_ppf, scipy_name="scipy.stats.ncf.ppf (B = aF/(b + aF))",
                    note=nc_note),
        "dnchisq": S(nchisq, st.ncx2.pdf, scipy_name="scipy.stats.ncx2.pdf"),
        "pnchisq": S(nchisq, st.ncx2.cdf, scipy_name="scipy.stats.ncx2.cdf",
                     special=sp.chndtr, special_name="scipy.special.chndtr"),
        "qnchisq": S(prob(nchisq), st.ncx2.ppf, scipy_name="scipy.stats.ncx2.ppf",
                     special=sp.chndtrix, special_name="scipy.special.chndtrix"),
        "dnf": S(nf, st.ncf.pdf, scipy_name="scipy.stats.ncf.pdf"),
        "pnf": S(nf, st.ncf.cdf, scipy_name="scipy.stats.ncf.cdf",
                 special=lambda x, a, b, c: sp.ncfdtr(a, b, c, x),
                 special_name="scipy.special.ncfdtr"),
        "qnf": S(prob(nf), st.ncf.ppf, scipy_name="scipy.stats.ncf.ppf",
                 special=lambda p, a, b, c: sp.ncfdtri(a, b, c, p),
                 special_name="scipy.special.ncfdtri"),
        "dnt": S(nt, st.nct.pdf, scipy_name="scipy.stats.nct.pdf"),
        "pnt": S(nt, st.nct.cdf, scipy_name="scipy.stats.nct.cdf",
                 special=lambda x, df, c: sp.nctdtr(df, c, x), special_name="scipy.special.nctdtr"),
        "qnt": S(prob(nt), st.nct.ppf, scipy_name="scipy.stats.nct.ppf",
                 special=lambda p, df, c: sp.nctdtrit(df, c, p),
                 special_name="scipy.special.nctdtrit"),
        "ptukey": S(tukey, stats("studentized_range", "cdf", nargs=4),
                    scipy_name="scipy.stats.studentized_range.cdf"),
        "qtukey": S(prob(tukey), stats("studentized_range", "ppf", nargs=4),
                    scipy_name="scipy.stats.studentized_range.ppf", note=tukey_note),
        **{f"{k}wilcox": S(prob(wilcox) if k == "q" else wilcox, None,
                           note=no_peer.format("rank-sum d/p/q")) for k in "dpq"},
        **{f"{k}signrank": S(prob(signrank) if k == "q" else signrank, None,
                             note=no_peer.format("signed-rank d/p/q")) for k in "dpq"},
        "bessel_i": S(bessel, lambda x, nu: sp.iv(nu, x), scipy_name="scipy.special.iv"),
        "bessel_j": S(bessel, lambda x, nu: sp.jv(nu, x), scipy_name="scipy.special.jv",
                      atol=bessel_atol),
        "bessel_k": S(bessel, lambda x, nu: sp.kv(nu, x), scipy_name="scipy.special.kv"),
        "bessel_y": S(bessel, lambda x, nu: sp.yv(nu, x), scipy_name="scipy.special.yv",
                      atol=bessel_atol),
    }


CASES: dict[str, Callable[[], dict[str, Spec]]] = {
    "default": _specs,
    "issue3": _issue3_specs,
    "issue4": _issue4_specs,
}


def copy_bandwidth(nbytes: int = 1 << 28) -> float:
    """Device-to-device copy bandwidth in bytes/s, counting bytes read plus written."""
    import pyopencl as cl

    from daskcl.runtime import device

    bound = device.current()
    a = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, nbytes)
    b = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(bound.queue, a, np.float64(1.0), 0, nbytes)
    times = []
    for _ in range(10):
        ev = cl.enqueue_copy(bound.queue, b, a)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return 2 * nbytes / float(np.median(times[2:]))


def kernel_run(kernel: Any, args: tuple[Any, ...], repeat: int = 10, warm: int = 2
               ) -> tuple[float, np.ndarray]:
    """Median seconds of ``kernel``'s launches on ``args`` (copied to the device first, as
    ``pyopencl`` arrays; a sorted launch counts from its first kernel's start to its last's end)
    after ``warm`` unmeasured runs, and the output.  Through the public kernel layer:
    ``prepare``, ``extend`` (the count-table rows add their tables, built or cached) and
    ``enqueue``."""
    import pyopencl as cl
    import pyopencl.array as cla

    from daskcl.runtime import device

    bound = device.current()
    q = bound.queue
    full = tuple(args) + tuple(kernel.fn.defaults.get(a, 0.0)
                               for a in kernel.fn.arg_names[len(args):])
    dev = [cla.to_device(q, np.ascontiguousarray(a, dtype=np.float64)) if np.ndim(a) else a
           for a in full]
    flags = [int(v) for v in kernel.fn.flag_defaults.values()]
    call = kernel.prepare(dev, flags)
    kernel.extend(call)
    out = cla.empty(q, call.shape, np.float64)
    status = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 8)
    cl.enqueue_fill_buffer(q, status, np.int32(0), 0, 8)
    times = []
    for _ in range(repeat + warm):
        evs = kernel.enqueue(call, [out], status)
        evs[-1].wait()
        times.append((evs[-1].profile.end - evs[0].profile.start) * 1e-9)
    res = out.get().reshape(-1)
    q.finish()
    return float(np.median(times[warm:])), res


def daskcl_kernel_time(name: str, args: tuple[np.ndarray, ...], repeat: int = 10) -> float:
    from daskcl import nmath

    return kernel_run(getattr(nmath, name), args, repeat)[0]


def cupy_times(fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> tuple[float, float]:
    import cupy as cp

    dargs = [cp.asarray(a) for a in args]
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(12):
        start.record()
        fn(*dargs)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    kernel = float(np.median(times[2:]))

    def e2e() -> None:
        cp.asnumpy(fn(*[cp.asarray(a) for a in args]))

    return kernel, median_time(e2e, repeat=5)


def jax_time(fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> float:
    """Kernel-only seconds of a jitted JAX function on device-resident inputs."""
    import jax

    f = jax.jit(fn)
    dargs = [jax.device_put(a) for a in args]
    f(*dargs).block_until_ready()
    return median_time(lambda: f(*dargs).block_until_ready(), repeat=10)


def _head(args: tuple[Any, ...], m: int) -> tuple[Any, ...]:
    """The first ``m`` elements of every array argument (scalars as they are)."""
    return tuple(a[:m] if isinstance(a, np.ndarray) else a for a in args)


def fit_n(call: Callable[[int], Any], n_max: int, budget: float, start: int) -> int:
    """The power of two (``start`` .. ``n_max``) for which ``call(n)`` takes about ``budget``
    seconds, from timed calls of growing size; ``n_max`` when ``budget`` is 0."""
    if budget <= 0 or n_max <= start:
        return n_max
    m = start
    while True:
        t = math.inf
        for _ in range(2):   # the first call of a size may include a driver's specialisation
            t0 = time.perf_counter()
            call(m)
            t = min(t, time.perf_counter() - t0)
        if t >= budget / 8 or m >= n_max:
            break
        m = min(8 * m, n_max)
    est = budget / max(t, 1e-9) * m
    return max(start, min(n_max, 1 << int(math.log2(max(est, 1.0)))))


def agreement(got: np.ndarray, ref: np.ndarray, atol: float) -> tuple[float, np.ndarray]:
    """(max relative difference where ``ref`` is finite and not tiny, indices that disagree:
    |got - ref| > RTOL max(|got|, |ref|) + atol, or one NaN/infinite and not the other)."""
    got, ref = np.broadcast_arrays(np.asarray(got, dtype=np.float64),
                                   np.asarray(ref, dtype=np.float64))
    ok = np.isfinite(ref) & (np.abs(ref) > TINY)
    rel = float(np.max(np.abs(got[ok] - ref[ok]) / np.abs(ref[ok]))) if ok.any() else float("nan")
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - ref)
        scale = np.maximum(np.abs(got), np.abs(ref))
        close = (diff <= RTOL * scale + atol) | (scale < TINY)
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    return rel, np.flatnonzero(~(close | same))


def r_values(name: str, args: tuple[Any, ...]) -> np.ndarray | None:
    """R's own values (libRmath through tests/support/rmath_oracle.py), or None where it is missing."""
    from daskcl import nmath

    fn = getattr(nmath, name).fn
    full = args + tuple(fn.defaults.get(a, 0.0) for a in fn.arg_names[len(args):])
    flags = {"d": [0], "p": [1, 0], "q": [1, 0]}.get(fn.kind, [])
    sym = {"dnorm": "dnorm4", "pnorm": "pnorm5", "qnorm": "qnorm5"}.get(name, name)
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from support.rmath_oracle import r_eval

        return r_eval(sym, full, flags)
    except Exception:   # no libRmath here, or no signature for the symbol
        return None
    finally:
        sys.path.pop(0)


def measure(case: str, name: str, spec: Spec, inp: tuple[Any, ...], opts: argparse.Namespace,
            bw: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One row: daskcl kernel and end to end, its peers, their agreement."""
    from daskcl import nmath

    fn = getattr(nmath, name)
    fn(*_head(inp, 16))  # build (cached) and warm
    n = fit_n(lambda m: fn(*_head(inp, m)), opts.n, opts.call_s, 256)
    x = _head(inp, n)
    fn(*x)               # warm at this size (the count tables of these parameters)
    k = daskcl_kernel_time(name, x)
    e2e = median_time(lambda: fn(*x), repeat=5)
    row: dict[str, Any] = {} if case == "default" else {"case": case}
    row.update({"function": name, "n": n,
                "daskcl_kernel_Gel_s": n / k / 1e9, "daskcl_e2e_Gel_s": n / e2e / 1e9})
    peer = spec.peer_args(*x) if spec.peer_args else x
    examples: list[dict[str, Any]] = []
    check_n = min(CHECK_N, n)

    def check(label: str, got: np.ndarray, ref: np.ndarray) -> None:
        ref = np.asarray(ref, dtype=np.float64)
        rel, bad = agreement(got, ref, spec.atol)
        row[f"max_rel_diff_{label}"] = rel
        row[f"mismatches_{label}"] = int(bad.size)
        if not bad.size:
            return
        # the worst first; which side is R's?  daskcl's against libRmath's, where it loads
        with np.errstate(invalid="ignore", divide="ignore"):
            worst = np.abs(got[bad] - ref[bad]) / np.abs(ref[bad])
        bad = bad[np.argsort(-np.nan_to_num(worst, nan=np.inf))][:500]
        r = r_values(name, tuple(a[bad] if isinstance(a, np.ndarray) else a for a in x))
        if r is not None:
            _, off = agreement(got[bad], r, 0.0)
            row[f"mismatches_{label}_daskcl_is_R"] = int(bad.size - off.size)
        for j, i in enumerate(bad[:3]):
            examples.append({
                "function": name, "peer": label,
                "inputs": [float(a[i]) if isinstance(a, np.ndarray) else a for a in x],
                "daskcl": float(got[i]), "peer_value": float(ref[i]),
                **({"R": float(r[j])} if r is not None else {}),
            })

    sn = 0
    if spec.scipy is not None:
        scipy_fn = spec.scipy
        sn = fit_n(lambda m: scipy_fn(*_head(peer, m)), min(opts.scipy_n, n), opts.call_s, 16)
        small = _head(peer, sn)
        sp = median_time(lambda: scipy_fn(*small), repeat=3, warmup=1) / sn   # s per element
        check_n = sn
        row.update({"scipy_Gel_s": 1 / sp / 1e9, "kernel_vs_scipy": sp * n / k,
                    "e2e_vs_scipy": sp * n / e2e})
    nbytes = 8 * (sum(isinstance(a, np.ndarray) for a in x) + 1) * n
    row["bandwidth_fraction"] = nbytes / k / bw
    got = np.asarray(fn(*_head(x, check_n)))
    if spec.scipy is not None:
        check("scipy", got, spec.scipy(*_head(peer, check_n)))
        if spec.scipy_name:
            row["scipy_peer"] = spec.scipy_name
        row["scipy_n"] = sn
    if spec.special is not None:
        special_fn = spec.special
        small = _head(peer, sn)
        ss = median_time(lambda: special_fn(*small), repeat=3, warmup=1) / sn
        row.update({"special_peer": spec.special_name, "special_Gel_s": 1 / ss / 1e9,
                    "kernel_vs_special": ss * n / k, "e2e_vs_special": ss * n / e2e})
        check("special", got, special_fn(*_head(peer, check_n)))
    if spec.cupy is not None:
        import cupy as cp

        ck, ce = cupy_times(spec.cupy, peer)
        row.update({"peer": spec.cupy_name, "cupy_kernel_Gel_s": n / ck / 1e9,
                    "cupy_e2e_Gel_s": n / ce / 1e9, "kernel_vs_cupy": ck / k,
                    "e2e_vs_cupy": ce / e2e})
        ref = cp.asnumpy(spec.cupy(*[cp.asarray(a) if isinstance(a, np.ndarray) else a
                                     for a in _head(peer, check_n)]))
        check("cupy", got, ref)
        if spec.jax is not None:
            try:
                jk = jax_time(spec.jax, peer)
            except Exception as exc:  # a JAX without GPU support, say
                print(f"{name}: jax failed: {exc}", flush=True)
            else:
                row.update({"jax_peer": spec.jax_name, "jax_kernel_Gel_s": n / jk / 1e9,
                            "kernel_vs_jax": jk / k})
    elif spec.cupy_name and "cupy" in sys.modules:
        row["peer"] = f"{spec.cupy_name}: not in this CuPy"
    if spec.note:
        row["note"] = spec.note
    return row, examples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="default",
                    help="comma-separated: default, issue3, issue4, or all")
    ap.add_argument("--n", type=int, default=1 << 22,
                    help="elements per daskcl/CuPy call (the most, with --call-s)")
    ap.add_argument("--scipy-n", type=int, default=1 << 20,
                    help="elements for the (slower) scipy timing; rates are per element")
    ap.add_argument("--functions",
                    help=f"only these (default: {DEFAULT_FUNCTIONS} in the default case, every "
                         "function of the other cases)")
    ap.add_argument("--call-s", type=float, default=0.0,
                    help="size each function's calls to about this many seconds (0: --n, --scipy-n)")
    ap.add_argument("--out")
    ap.add_argument("--contract", action="store_true",
                    help="build with DASKCL_FP_CONTRACT=1 (fma contraction allowed)")
    args = ap.parse_args()
    if args.contract:
        os.environ["DASKCL_FP_CONTRACT"] = "1"
    cases = list(CASES) if args.cases == "all" else args.cases.split(",")
    if set(cases) - set(CASES):
        ap.error(f"--cases: unknown {sorted(set(cases) - set(CASES))}; known: {list(CASES)}, all")
    wanted = args.functions.split(",") if args.functions else None
    plan: list[tuple[str, str, Spec]] = []
    for case in cases:
        specs = CASES[case]()
        names = (wanted if wanted is not None
                 else DEFAULT_FUNCTIONS.split(",") if case == "default" else list(specs))
        plan += [(case, name, specs[name]) for name in names if name in specs]
    missing = set(wanted or ()) - {name for _, name, _ in plan}
    if missing:
        ap.error(f"--functions: {sorted(missing)} not in the cases {cases}")

    import scipy

    try:
        import cupy

        cupy_info = f"cupy {cupy.__version__}"
    except ImportError as exc:
        cupy_info = f"not importable ({exc}): CuPy peers skipped"
        print(f"cupy {cupy_info}", flush=True)

    load = round(os.getloadavg()[0], 2)   # other work on the machine, if any
    bw = copy_bandwidth()
    rows = []
    examples: list[dict[str, Any]] = []
    for case, name, spec in plan:
        # the same seed for every function: reruns and subsets draw the same inputs
        inp = spec.inputs(np.random.default_rng(20261121), args.n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # R's NaN warnings and scipy's, at every timing call
            row, ex = measure(case, name, spec, inp, args, bw)
        rows.append(row)
        examples += ex
        bad = ", ".join(
            f"{peer} {row[f'mismatches_{peer}']}"
            + (f" (daskcl = R in {row[f'mismatches_{peer}_daskcl_is_R']})"
               if f"mismatches_{peer}_daskcl_is_R" in row else "")
            for peer in ("scipy", "special", "cupy") if row.get(f"mismatches_{peer}"))
        label = name if case == "default" else f"{case} {name}"
        print(f"{label}: n {row['n']}, kernel {row['daskcl_kernel_Gel_s']:.4g} Gel/s, "
              f"e2e {row['daskcl_e2e_Gel_s']:.4g} Gel/s"
              + (f", scipy {row['scipy_Gel_s']:.4g} Gel/s" if "scipy_Gel_s" in row else "")
              + (f"; DISAGREE: {bad} of {row.get('scipy_n', CHECK_N)}" if bad else ""), flush=True)
    info = machine()
    info["copy_bandwidth_GB_s"] = bw / 1e9
    info["fp_contract"] = bool(args.contract)
    if cases != ["default"]:
        info.update({"numpy": np.__version__, "scipy": scipy.__version__, "scipy_threads": 1,
                     "cupy": cupy_info, "call_s": args.call_s, "agreement_rtol": RTOL,
                     "load_avg_at_start": load})
    cols = [c for c in ["case", "function", "n", "daskcl_kernel_Gel_s", "daskcl_e2e_Gel_s",
                        "scipy_Gel_s", "kernel_vs_scipy", "e2e_vs_scipy", "bandwidth_fraction",
                        "special_Gel_s", "kernel_vs_special", "cupy_kernel_Gel_s",
                        "cupy_e2e_Gel_s", "kernel_vs_cupy", "e2e_vs_cupy", "kernel_vs_jax",
                        "mismatches_scipy", "mismatches_special", "mismatches_cupy"]
            if any(c in r for r in rows)]
    print(f"device: {info['device']}  copy bandwidth {bw / 1e9:.1f} GB/s")
    print(table(rows, cols))
    for e in examples:
        print(f"mismatch {e['function']} vs {e['peer']}: inputs {e['inputs']}: daskcl "
              f"{e['daskcl']!r}, peer {e['peer_value']!r}")
    stem = "nmath" if cases == ["default"] else "nmath-" + "-".join(cases)
    payload: dict[str, Any] = {"machine": info, "results": rows}
    if examples:
        payload["mismatches"] = examples
    path = write(f"{stem}-{info['device_type'].lower()}", payload, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
