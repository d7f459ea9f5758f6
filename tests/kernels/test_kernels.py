# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernels of your own (daskcl.ElementwiseKernel, daskcl.RawKernel): the library functions they
call are found and assembled, the results are those of daskcl.nmath's own functions bit for bit
and R's, broadcasting, several outputs, dask, count tables, user library trees, errors that
point into the user's code, pickling to distributed workers."""

from __future__ import annotations

import pickle
import re
import textwrap
import warnings
from pathlib import Path

import dask.array as da
import numpy as np
import pyopencl.array as cla
import pytest
from distributed import Client, LocalCluster
from support.rmath_oracle import r_eval

from daskcl import ElementwiseKernel, RawKernel, nmath
from daskcl.cluster import warm
from daskcl.errors import BuildError, MissingDependencyError
from daskcl.kernels._kernel import _program_macros, kernel_params
from daskcl.runtime import device
from daskcl.runtime.library import get_library

POWER_OP = """double c = qt(alpha / 2, df, 0, 0);
power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);"""


def power_kernel() -> ElementwiseKernel:
    return ElementwiseKernel("double alpha, double df, double ncp", "double power", POWER_OP,
                             name="ttest_power")


def composed(alpha, df, ncp):
    c = nmath.qt(np.asarray(alpha) / 2, df, lower_tail=False)
    return nmath.pnt(c, df, ncp, lower_tail=False) + nmath.pnt(-c, df, ncp)


@pytest.mark.r
def test_power_kernel_equals_the_composition_bit_for_bit_and_r():
    k = power_kernel()
    df = np.array([1.0, 2.0, 5.0, 18.0, 60.0, 400.0])[:, None]
    ncp = np.array([0.0, 0.5, 1.5, 3.0, 6.0, 12.0, 38.0])
    got = k(0.05, df, ncp)
    assert got.shape == (6, 7) and got.dtype == np.float64
    assert np.array_equal(got, composed(0.05, df, ncp))
    # R: qt(0.025, df, lower = FALSE); pt(c, df, ncp, lower = FALSE) + pt(-c, df, ncp)
    dfb, ncpb = np.broadcast_arrays(df, ncp)
    c = r_eval("qt", [np.full(dfb.size, 0.025), dfb.ravel()], [0, 0])
    want = (r_eval("pnt", [c, dfb.ravel(), ncpb.ravel()], [0, 0])
            + r_eval("pnt", [-c, dfb.ravel(), ncpb.ravel()], [1, 0]))
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-12, atol=1e-15)
    # only the closure of qt and pnt is assembled
    src = k.source()
    assert "nmath/qt.cl" in src.files and "nmath/pnt.cl" in src.files
    assert "nmath/qbeta.cl" not in src.files and "nmath/ptukey.cl" not in src.files
    assert set(k.depends) == {"qt", "pnt"}


def test_scalars_give_a_numpy_scalar_and_inputs_are_checked():
    k = power_kernel()
    v = k(0.05, 18, 3.0)
    assert isinstance(v, np.float64)
    assert v == composed(0.05, 18.0, 3.0)
    with pytest.raises(TypeError, match=r"ttest_power: takes 3 arguments \(alpha, df, ncp\)"):
        k(0.05, 18)
    with pytest.raises(ValueError, match=r"ttest_power: the shapes .* df \(3,\), ncp \(4,\)"):
        k(0.05, np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="ttest_power: argument 'df' must be real numbers"):
        k(0.05, "18", 3.0)
    # by name, in any order, beside positional ones
    assert k(0.05, ncp=3.0, df=18) == k(alpha=0.05, df=18, ncp=3.0) == v
    with pytest.raises(TypeError, match=r"ttest_power: no argument named 'nc'; its arguments "
                                        r"are \(alpha, df, ncp\)"):
        k(0.05, 18, nc=3.0)
    with pytest.raises(TypeError, match="argument 'df' given by position and by name"):
        k(0.05, 18, df=18)
    with pytest.raises(TypeError, match=r"missing argument\(s\) ncp"):
        k(0.05, df=18)


def test_several_outputs_and_int_arguments():
    k = ElementwiseKernel(
        "double x, double a, double b, int lower", "double p, double d, double lp",
        """p = pbeta(x, a, b, lower, 0);
           d = dbeta(x, a, b, 0);
           lp = pbeta(x, a, b, lower, 1);""", name="beta3")
    x = np.linspace(0, 1, 41)
    a = np.array([[0.5], [2.0], [30.0]])
    p, d, lp = k(x, a, 2.5, 0)
    assert p.shape == d.shape == lp.shape == (3, 41)
    assert np.array_equal(p, nmath.pbeta(x, a, 2.5, lower_tail=False))
    assert np.array_equal(d, nmath.dbeta(x, a, 2.5))
    assert np.array_equal(lp, nmath.pbeta(x, a, 2.5, lower_tail=False, log_p=True))
    with pytest.raises(TypeError, match="beta3: lower is an int argument"):
        k(x, a, 2.5, 0.5)
    with pytest.raises(ValueError, match=r"beta3: lower is an int argument \(32 bits\); "
                                         r"2147483648 is outside"):
        k(x, a, 2.5, 2**31)


def test_rmath_names_of_the_normal_functions():
    """Rmath.h calls them pnorm, qnorm and dnorm (macros for pnorm5, qnorm5 and dnorm4): a
    kernel may too (before, "implicit declaration of function 'pnorm'")."""
    k = ElementwiseKernel("double x", "double p, double q, double d",
                          "p = pnorm(x, 1.0, 2.0, 0, 1); q = qnorm(0.25, x, 2.0, 1, 0); "
                          "d = dnorm(x, 1.0, 2.0, 1);", name="rmath_names")
    x = np.linspace(-40.0, 40.0, 33)
    p, q, d = k(x)
    assert np.array_equal(p, nmath.pnorm(x, 1.0, 2.0, lower_tail=False, log_p=True))
    assert np.array_equal(q, nmath.qnorm(0.25, x, 2.0))
    assert np.array_equal(d, nmath.dnorm(x, 1.0, 2.0, log=True))
    # only calls are renamed: an input may be called pnorm
    assert np.array_equal(ElementwiseKernel("double pnorm", "double y", "y = 2 * pnorm;",
                                            name="named_pnorm")(x), 2 * x)


@pytest.mark.parametrize(("operation", "match"), [
    # a return skipped the writes of the outputs: uninitialised memory came back, silently
    ("if (x > 0) return; y = x;", "the operation may not return"),
    ("y = x; /* a comment left open", "the operation has a /\\* comment that is not closed"),
    ("if (x > 0) { y = x;", r"the operation has unbalanced \{\} \(an \{ not closed\)"),
    ("y = x; }", r"the operation has unbalanced \{\} \(a \} too many\)"),
    ("y = fabs(x;", r"the operation has unbalanced \(\) \(an \( not closed\)"),
])
def test_operation_mistakes_are_named_before_the_build(operation, match):
    """Each of these was a build error located in the template (or no error at all)."""
    with pytest.raises(ValueError, match=f"ElementwiseKernel bad: {match}"):
        ElementwiseKernel("double x", "double y", operation, name="bad")


def test_operation_checks_skip_comments_and_literals():
    k = ElementwiseKernel("double x", "double y",
                          "y = x; // return }\n/* return { */ char c = '}'; (void)c;",
                          name="commented", preamble="double id(double v) { return v; }")
    assert np.array_equal(k(np.arange(3.0)), np.arange(3.0))


def test_preamble_and_element_index():
    k = ElementwiseKernel(
        "double x", "double y",
        "y = logit_tail(x) + 1e-3 * (double)i;", name="with_preamble",
        preamble="double logit_tail(double v) { return plogis(v, 0.0, 1.0, 0, 1); }")
    x = np.linspace(-5, 5, 11)
    assert np.array_equal(k(x), nmath.plogis(x, lower_tail=False, log_p=True) + 1e-3 * np.arange(11))
    assert "plogis" in k.depends


def test_nan_warning_counts_like_nmath():
    k = ElementwiseKernel("double p", "double q, double z", "q = qnorm5(p, 0, 1, 1, 0); z = 0;",
                          name="nq")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        q, _ = k(np.array([0.5, 2.0, np.nan, -1.0]))
    assert [str(x.message) for x in w] == ["nq: 2 NaN(s) produced"]
    assert np.isnan(q).tolist() == [False, True, True, True]


def test_dask_inputs_give_dask_outputs_equal_to_numpy():
    k = ElementwiseKernel("double q, double df", "double lo, double hi",
                          "lo = pt(q, df, 1, 0); hi = pt(q, df, 0, 0);", name="tails")
    q = np.linspace(-4, 4, 103)
    df = np.array([1.0, 3.0, 30.0])[:, None]
    lo, hi = k(da.from_array(q, chunks=25), df)
    assert isinstance(lo, da.Array) and lo.chunks == ((3,), (25, 25, 25, 25, 3))
    want_lo, want_hi = k(q, df)
    got_lo, got_hi = da.compute(lo, hi, scheduler="threads")
    assert np.array_equal(got_lo, want_lo) and np.array_equal(got_hi, want_hi)
    np.testing.assert_allclose(got_lo + got_hi, 1.0, rtol=1e-15)


def test_a_classified_function_in_a_user_kernel():
    """pbeta is sorted by method on GPUs in nmath's own kernel; a user kernel calling it gives
    the same bits (the plain kernel) on every device."""
    k = ElementwiseKernel("double x, double a, double b", "double y",
                          "y = pbeta(x, a, b, 1, 0) - pbeta(x, b, a, 0, 0);", name="psym")
    rng = np.random.default_rng(5)
    x, a, b = rng.uniform(0, 1, 500), np.exp(rng.uniform(-3, 6, 500)), np.exp(rng.uniform(-3, 6, 500))
    assert np.array_equal(k(x, a, b), nmath.pbeta(x, a, b) - nmath.pbeta(x, b, a, lower_tail=False))


@pytest.mark.r
def test_count_table_functions_in_a_user_kernel():
    k = ElementwiseKernel("double q, double m, double n", "double p, double d",
                          "p = pwilcox(q, m, n, 1, 0); d = dwilcox(q, m, n, 0);", name="wil")
    q = np.arange(0.0, 31.0)
    m = np.array([[3.0], [6.0]])
    p, d = k(q, m, 5.0)
    assert np.array_equal(p, nmath.pwilcox(q, m, 5.0))
    assert np.array_equal(d, nmath.dwilcox(q, m, 5.0))
    want = r_eval("pwilcox", [np.broadcast_to(q, (2, 31)).ravel(),
                              np.broadcast_to(m, (2, 31)).ravel(), np.full(62, 5.0)], [1, 0])
    np.testing.assert_allclose(p.ravel(), want, rtol=1e-14)
    s = ElementwiseKernel("double x, double n", "double y", "y = psignrank(x, n, 0, 0);",
                          name="sr")
    assert np.array_equal(s(np.arange(20.0), 7), nmath.psignrank(np.arange(20.0), 7,
                                                                 lower_tail=False))
    with pytest.raises(ValueError, match="pwilcox's parameter"):
        ElementwiseKernel("double q", "double p", "p = pwilcox(q, 3.0, 4.0, 1, 0);", name="w2")
    with pytest.raises(ValueError, match="operation only, not in the preamble"):
        ElementwiseKernel("double q, double m", "double p", "p = f(q, m);", name="w3",
                          preamble="double f(double q, double m) { return pwilcox(q, m, m, 1, 0); }")


def test_definition_errors():
    with pytest.raises(ValueError, match="'TYPE NAME' items"):
        ElementwiseKernel("float x", "double y", "y = x;", name="k1")
    with pytest.raises(ValueError, match="cannot name an argument"):
        ElementwiseKernel("double i", "double y", "y = i;", name="k2")
    # OpenCL C's keywords and types, and what the kernel calls after declaring the arguments
    # (its NaN count: isnan), were taken and failed to build inside the generated code
    for bad in ("local", "constant", "private", "kernel", "read_only", "true", "_Bool",
                "image2d_t", "vec_step", "isnan", "isfinite", "atomic_inc", "double2", "int16"):
        with pytest.raises(ValueError, match=rf"'{bad}' cannot name an argument \(a C "
                           "identifier not starting with dk_, not a keyword or type of OpenCL C"):
            ElementwiseKernel(f"double {bad}", "double y", f"y = 2 * {bad};", name="k2b")
    ok = ElementwiseKernel("double step, double min", "double y", "y = step + min;", name="k2c")
    assert ok(1.0, 2.0) == 3.0
    with pytest.raises(ValueError, match="x named twice"):
        ElementwiseKernel("double x", "double x", "x = 1;", name="k3")
    with pytest.raises(ValueError, match="a C identifier"):
        ElementwiseKernel("double x", "double y", "y = x;", name="not a name")
    with pytest.raises(ValueError, match="at least one output"):
        ElementwiseKernel("double x", "", "x;", name="k4")
    # macros would replace the name (the build failed inside the template, not at your line)
    for name in ("M_PI", "DBL_MAX", "INFINITY", "ML_NAN", "R_D__0", "give_log"):
        with pytest.raises(ValueError, match=f"'{name}' is a macro of OpenCL C or of the library"):
            ElementwiseKernel(f"double {name}", "double y", f"y = {name};", name="k5")


def test_a_compile_error_quotes_the_users_line():
    k = ElementwiseKernel("double x", "double y", "double t = x * 2;\ny = t +* 3;", name="oops")
    with pytest.raises(BuildError) as err:
        k(1.0)
    msg = str(err.value)
    assert "In your code:" in msg
    assert "<oops operation>, line 2: y = t +* 3;" in msg
    p = ElementwiseKernel("double x", "double y", "y = helper(x);", name="oops2",
                          preamble="double helper(double v) {\n  return v +* 2;\n}")
    with pytest.raises(BuildError, match=r"<oops2 preamble>, line 2: return v \+\* 2;"):
        p(1.0)


def test_kernels_pickle_by_definition_and_run_on_a_worker():
    k = power_kernel()
    blob = pickle.dumps(k)
    assert b"pnt(c, df, ncp" in blob and len(blob) < 2000         # the definition, no program
    k2 = pickle.loads(blob)
    assert k2(0.05, 18.0, 3.0) == k(0.05, 18.0, 3.0)
    assert pickle.loads(pickle.dumps(nmath.pnorm)) is nmath.pnorm  # by name
    assert pickle.loads(pickle.dumps(nmath.rgamma)) is nmath.rgamma
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                      host="127.0.0.1") as cluster, Client(cluster) as client:
        fut = client.submit(lambda kern, a, b: kern(0.05, a, b), k, np.array([5.0, 18.0]),
                            np.array([1.0, 3.0]))
        got = fut.result(timeout=240)
        warmed = client.run(lambda: warm([power_kernel()]))
    assert np.array_equal(got, k(0.05, np.array([5.0, 18.0]), np.array([1.0, 3.0])))
    assert list(warmed.values()) == [["ttest_power"]]


UNITS = {
    "odds.cl": """\
        // SPDX-License-Identifier: GPL-2.0-or-later
        // @provides: logit_odds
        // @depends: plogis
        // The odds p / (1 - p) of the logistic distribution at x, from plogis's two tails.
        double logit_odds(double x)
        {
            return plogis(x, 0.0, 1.0, 1, 0) / plogis(x, 0.0, 1.0, 0, 0);
        }
        """,
    "log_odds.cl": """\
        // SPDX-License-Identifier: GPL-2.0-or-later
        // @provides: log_odds
        // @depends: odds
        double log_odds(double x) { return log(logit_odds(x)); }
        """,
}


def _tree(path: Path) -> Path:
    path.mkdir()
    for name, text in UNITS.items():
        (path / name).write_text(textwrap.dedent(text))
    get_library([str(path)]).write_index(root=path)
    return path


def test_a_user_library_tree_beside_the_mathlib(tmp_path):
    tree = _tree(tmp_path / "mylib")
    k = ElementwiseKernel("double x", "double y", "y = log_odds(x);", name="lo",
                          library=tree)
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(k(x), x, rtol=1e-14, atol=1e-15)     # log(e^x) = x
    assert k.depends == ("log_odds",)
    files = k.source().files
    assert str(tree / "odds.cl") in files and str(tree / "log_odds.cl") in files
    assert "nmath/plogis.cl" in files and "nmath/pnorm.cl" not in files
    raw = RawKernel("// @depends: log_odds\n__kernel void f(__global double *y) "
                    "{ y[get_global_id(0)] = log_odds((double)get_global_id(0)); }", "f",
                    library=[tree])
    y = np.zeros(4)
    raw((4,), None, y)
    np.testing.assert_allclose(y, np.arange(4.0), rtol=1e-14, atol=1e-15)
    k2 = pickle.loads(pickle.dumps(k))
    assert np.array_equal(k2(x), k(x))


def test_unknown_identifiers_name_the_users_code(tmp_path):
    k = ElementwiseKernel("double x", "double y", "y = no_such_function(x);", name="unk")
    with pytest.raises(BuildError, match=r"<unk operation>, line 1: y = no_such_function\(x\);"):
        k(1.0)
    raw = RawKernel("// @depends_nmath: no_such_unit\n__kernel void f(__global double *y) {}",
                    "f")
    with pytest.raises(MissingDependencyError, match="no_such_unit"):
        raw((1,), None, np.zeros(1))


def test_raw_kernel_arguments():
    k = RawKernel("""// @depends_nmath: qnorm
        __kernel void q(__global const double *p, __global double *out, const int n,
                        const double mu)
        {
            const int i = get_global_id(0);
            if (i < n) out[i] = qnorm5(p[i], mu, 1.0, 1, 0);
        }""", "q")
    p = np.linspace(0.05, 0.95, 7)
    out = np.zeros(7)
    k((8,), None, p, out, 7, 2.0)
    assert np.array_equal(out, nmath.qnorm(p, 2.0))
    frozen = np.zeros(7)
    frozen.flags.writeable = False
    k((8,), None, p, frozen, 7, 2.0)                       # read-only: nothing written back
    assert not frozen.any()
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k((8,), None, p, out, 7)
    # a pointer's array must hold what it points to: reinterpreted bits were a silent error
    for bad in (p.astype(np.float32), p.astype(np.int64)):
        with pytest.raises(TypeError, match=f"argument 0 \\(p\\) points to double: the NumPy "
                                            f"array has dtype {bad.dtype}"):
            k((8,), None, bad, out, 7, 2.0)
    with pytest.raises(TypeError, match=r"argument 1 \(out\) points to double: the pyopencl array"):
        k((8,), None, p, cla.zeros(device.current().queue, 7, np.float32), 7, 2.0)
    # byte-swapped doubles are converted, in and back out
    swapped = np.zeros(7, ">f8")
    k((8,), None, p.astype(">f8"), swapped, 7, 2.0)
    assert swapped.dtype == np.dtype(">f8") and np.array_equal(swapped, nmath.qnorm(p, 2.0))
    # a strided device array would be read as if contiguous
    wide = cla.to_device(device.current().queue, np.repeat(p, 2))
    with pytest.raises(ValueError, match=r"argument 0 \(p\): the pyopencl array is not "
                                         r"C-contiguous .* pass a C-contiguous array"):
        k((8,), None, wide[::2], out, 7, 2.0)
    # scalars: a number of the parameter's kind and range, not text or a fraction cut short
    with pytest.raises(TypeError, match=r"argument 2 \(n\) is an int: pass a number, not '7'"):
        k((8,), None, p, out, "7", 2.0)
    with pytest.raises(TypeError,
                       match=r"argument 2 \(n\) is an int: pass a whole number, not 6\.5"):
        k((8,), None, p, out, 6.5, 2.0)
    with pytest.raises(ValueError,
                       match=r"argument 2 \(n\) is an int: 2147483648 is outside its range"):
        k((8,), None, p, out, 2**31, 2.0)
    out[:] = 0
    k((8,), None, p, out, 7.0, 2)                          # 7.0 is whole; 2 is a double
    assert np.array_equal(out, nmath.qnorm(p, 2.0))
    with pytest.raises(ValueError, match="defines no __kernel void nope"):
        RawKernel(k.code, "nope")


def test_raw_kernel_launch_sizes():
    """Sizes are whole numbers of any integer type (``n = np.prod(shape)`` is a NumPy int); a
    work-group size the device refuses says what to do, not only the driver's status."""
    k = RawKernel("""// @depends_nmath: qnorm
        __kernel void q(__global const double *p, __global double *out, const long n)
        {
            const long i = get_global_id(0);
            if (i < n) out[i] = qnorm5(p[i], 0.0, 1.0, 1, 0);
        }""", "q")
    p = np.array([0.025, 0.5, 0.975])
    for size in (np.int64(3), (np.int32(3),), [3]):
        out = np.zeros(3)
        k(size, None, p, out, np.int64(3))
        assert np.array_equal(out, nmath.qnorm(p)) and out[2] == 1.9599639845400536
    for bad in (3.0, (3.0,), "3", (1, 1, 1, 1), True):
        with pytest.raises(TypeError, match="global_size must be a whole number or a tuple"):
            k(bad, None, p, np.zeros(3), 3)
    with pytest.raises(ValueError, match="global_size may not be negative"):
        k(-1, None, p, np.zeros(3), 3)
    with pytest.raises(ValueError, match="as many dimensions"):
        k((3,), (1, 1), p, np.zeros(3), 3)
    # 3 work-items in groups of 2: OpenCL 1.2 C (pyopencl's default) wants a multiple
    with pytest.raises(ValueError, match=r"refused work-groups of \(2,\) over \(3,\) "
                                         r"work-items .* round global_size up"):
        k((3,), (2,), p, np.zeros(3), 3)
    out = np.zeros(3)
    k((4,), (2,), p, out, 3)                               # rounded up, the index tested
    assert np.array_equal(out, nmath.qnorm(p))


def test_raw_kernel_attributes_and_where_annotations_go():
    """``__attribute__((...))`` may stand between ``__kernel`` and ``void``; an annotation
    after the opening comment block (below a ``#pragma``) would be ignored, so it is an error
    that says where it goes."""
    k = RawKernel("""// @depends_nmath: pnorm
__kernel __attribute__((reqd_work_group_size(2, 1, 1)))
void tail(__global const double *x, __global double *y)
{
    y[get_global_id(0)] = pnorm5(x[get_global_id(0)], 0.0, 1.0, 0, 1);
}""", "tail")
    assert k.params == [("global", "double", True), ("global", "double", False)]
    y = np.zeros(2)
    k((2,), (2,), np.array([0.0, 40.0]), y)
    assert y[1] == -804.6084420137538                      # R: pnorm(40, lower=FALSE, log=TRUE)
    code = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n// @depends_nmath: pnorm\n"
            "__kernel void f(__global double *y) { y[0] = pnorm5(y[0], 0.0, 1.0, 1, 0); }")
    with pytest.raises(ValueError, match=r"RawKernel f: '// @depends_nmath: pnorm' is read only "
                                         r"in the comment block that opens the source .* "
                                         r"before any #pragma or code"):
        RawKernel(code, "f")


def test_raw_kernel_const_qualifies_the_data_not_the_pointer():
    """Only a ``const`` before the ``*`` (or ``__constant`` memory) makes a pointer's data
    read-only; ``double *const x`` is a constant pointer to data the kernel writes, and a NumPy
    array passed to it gets the results (it was taken for read-only: never copied back)."""
    decls = {
        "__global double *const x": ("global", "double", False),
        "const __global double * const x": ("global", "double", True),
        "__global double const *x": ("global", "double", True),
        "__global const double *x": ("global", "double", True),
        "double * restrict x": ("global", "double", False),
        "__global double *const restrict x": ("global", "double", False),
        "global double*const x": ("global", "double", False),
        "__constant double *x": ("global", "double", True),
        "__local double *const x": ("local", "double", False),
        "const long n": ("scalar", "long", True),
    }
    for decl, want in decls.items():
        assert kernel_params(f"__kernel void f({decl}) {{}}", "f") == [want], decl
    k = RawKernel("""// @depends_nmath: qnorm
        __kernel void cq(__global const double *const p, __global double *const x,
                         __global double *restrict y, const long n)
        {
            const long i = get_global_id(0);
            if (i < n) { x[i] = qnorm5(p[i], 0.0, 1.0, 1, 0); y[i] = -x[i]; }
        }""", "cq")
    assert [c for _, _, c in k.params] == [True, False, False, True]
    p = np.array([0.025, 0.5, 0.975])
    x, y = np.zeros(3), np.zeros(3)
    k(3, None, p, x, y, 3)
    assert np.array_equal(x, nmath.qnorm(p)) and x[2] == 1.9599639845400536
    assert np.array_equal(y, -x)


def test_build_options_as_a_string():
    """``options`` may be one string, split as a shell (and pyopencl) splits it: it was split
    into characters, each a build option, and the build failed naming none of them."""
    code = """__kernel void scaled(__global double *y)
        {
            y[get_global_id(0)] = SCALE * (double)get_global_id(0) + SHIFT;
        }"""
    k = RawKernel(code, "scaled", options="-DSCALE=2.5  -DSHIFT=1")
    assert k.options == ("-DSCALE=2.5", "-DSHIFT=1")
    y = np.zeros(4)
    k(4, None, y)
    assert np.array_equal(y, [1.0, 3.5, 6.0, 8.5])
    k2 = pickle.loads(pickle.dumps(k))
    assert k2.options == k.options
    y[:] = 0
    k2(4, None, y)
    assert np.array_equal(y, [1.0, 3.5, 6.0, 8.5])
    assert RawKernel(code, "scaled", options=["-DSCALE=2.5", "-DSHIFT=1"]).options == k.options
    e = ElementwiseKernel("double x", "double y", "y = SCALE * x;", name="times_scale",
                          options="-D SCALE=3")
    assert e.options == ("-D", "SCALE=3") and e(2.0) == 6.0
    with pytest.raises(TypeError, match="RawKernel scaled: options must be a string of build "
                                        "options or a sequence of them"):
        RawKernel(code, "scaled", options=3)
    with pytest.raises(TypeError, match="RawKernel scaled: each build option must be a string, "
                                        "not 1"):
        RawKernel(code, "scaled", options=["-DSCALE=2.5", 1])
    with pytest.raises(ValueError, match="cannot be split as a shell splits them"):
        RawKernel(code, "scaled", options='-DSCALE="2.5')


def test_raw_kernel_names_that_are_library_macros_are_refused():
    """A kernel named like a macro the library leaves defined for the kernel's code (Rmath.h's
    ``dnorm``, ``pnorm``, ``qnorm`` of OPENCL_END.cl, function-like) had its name replaced by
    the preprocessor, and the build failed with "too few arguments provided to function-like
    macro invocation": the name is refused when the kernel is made, naming the macro."""
    for name in ("dnorm", "pnorm", "qnorm"):
        code = (f"// @depends_nmath: {name}\n__kernel void {name}(__global const double *x, "
                f"__global double *y) {{ y[0] = {name}(x[0], 0.0, 1.0, 1, 0); }}")
        with pytest.raises(ValueError, match=rf"RawKernel {name}: the library defines {name} "
                                             rf"as a function-like macro \(OPENCL_END\.cl, "
                                             rf"line \d+\), .* name the kernel otherwise"):
            RawKernel(code, name)
    with pytest.raises(ValueError, match=r"defines ML_NAN as a macro \(OPENCL\.cl, line \d+\)"):
        RawKernel("__kernel void ML_NAN(__global double *y) { y[0] = 1.0; }", "ML_NAN")
    # a macro of a unit the kernel names: refused once the program is assembled, before a build
    late = RawKernel("// @depends_nmath: qnorm\n"
                     "__kernel void QNORM_COEF(__global double *y) { y[0] = 1.0; }", "QNORM_COEF")
    with pytest.raises(ValueError, match=r"defines QNORM_COEF as a function-like macro "
                                         r"\(nmath/qnorm\.cl, line \d+\)"):
        late(1, None, np.zeros(1))
    # the name the message suggests builds and runs; the library's own macros are not refused
    # where the library takes them back (OPENCL.cl's log, restored by OPENCL_END.cl)
    k = RawKernel("// @depends_nmath: pnorm\n__kernel void pnorm_kernel(__global const double "
                  "*x, __global double *y) { y[0] = pnorm(x[0], 0.0, 1.0, 0, 1); }",
                  "pnorm_kernel")
    y = np.zeros(1)
    k(1, None, np.array([40.0]), y)
    assert y[0] == -804.6084420137538                  # R: pnorm(40, lower=FALSE, log=TRUE)
    macros = _program_macros(k.source())
    assert macros["pnorm"][:2] == (True, "OPENCL_END.cl") and "log" not in macros


def test_undeclared_names_get_what_to_do():
    """A library function the opening comment does not name, and a misspelt one: the build
    error says which line to add, or which names were meant."""
    raw = RawKernel("__kernel void f(__global double *y) { y[0] = pnorm5(y[0], 0.0, 1.0, 1, 0); }",
                    "f")
    with pytest.raises(BuildError, match=r"What to do:\n  pnorm5 is in the library "
                                         r"\(nmath/pnorm\.cl\) but not in the program: name it "
                                         r"in the comment that opens the source, "
                                         r"// @depends_nmath: pnorm"):
        raw((1,), None, np.zeros(1))
    k = ElementwiseKernel("double x", "double y", "y = pnrom(x, 0, 1, 1, 0);", name="typo")
    with pytest.raises(BuildError, match=r"pnrom is not a name of the library: did you mean "
                                         r"pnorm\b") as err:
        k(1.0)
    # clang's "use of undeclared identifier 'pnrom'", with the line in the user's code; NVIDIA's
    # assembler's "Unresolved extern function 'pnrom'", with none
    found = re.search(r"(undeclared identifier|Unresolved extern function) 'pnrom'",
                      err.value.log)
    assert found is not None, err.value.log
    if found[1] == "undeclared identifier":
        assert "<typo operation>, line 1: y = pnrom(x, 0, 1, 1, 0);" in str(err.value)


#: calls that reach the out-of-line built-ins of ``DASKCL_NOINLINE`` (cl/OPENCL.cl): log, exp,
#: log1p, expm1, pow (the gamma and beta families), sin, cos, tan, atan (Bessel, Cauchy, t),
#: lgamma, erfc; and the discrete quantiles' search (qdiscrete.cl)
_OUT_OF_LINE_CALLS = {
    "qbeta": lambda: nmath.qbeta(np.linspace(0.0, 1.0, 257), 0.7, 4.5, log_p=False),
    "pgamma log": lambda: nmath.pgamma(np.geomspace(1e-3, 1e3, 257), 2.5, log_p=True),
    "pt": lambda: nmath.pt(np.linspace(-40.0, 40.0, 257), 3.5),
    "bessel_j": lambda: nmath.bessel_j(np.linspace(0.0, 60.0, 257), 2.5),
    "bessel_y": lambda: nmath.bessel_y(np.linspace(0.1, 60.0, 257), 0.5),
    "qcauchy": lambda: nmath.qcauchy(np.linspace(0.0, 1.0, 257)),
    "lgammafn": lambda: nmath.lgammafn(np.linspace(-20.5, 200.0, 257)),
    "ptukey": lambda: nmath.ptukey(np.linspace(0.0, 8.0, 33), 1.0, 4.0, 12.0),
    # the discrete quantiles' search and distribution function, out of line (qdiscrete.cl)
    "qnbinom_mu": lambda: nmath.qnbinom_mu(np.linspace(0.0, 1.0, 65), 3.5, 5000.0),
    "qbinom log": lambda: nmath.qbinom(np.linspace(-30.0, 0.0, 65), 9000, 0.3, log_p=True),
    "user kernel": lambda: ElementwiseKernel(
        "double x", "double y",
        # a kernel's own calls of the built-ins on float and vector types (the units' wrappers
        # take double only): OPENCL_END.cl gives the kernel the platform's built-ins back
        "float f = log((float)x); double2 v = exp((double2)(x, 1.0)); "
        "y = (double)f + v.s0 * v.s1 + pgamma(x, 2.0, 1.0, 1, 0);",
        name="float_and_vector_builtins")(np.linspace(0.05, 4.0, 64)),
}


@pytest.mark.parametrize("case", list(_OUT_OF_LINE_CALLS))
def test_out_of_line_builds_give_the_inlined_bits(case, cache):
    """``noinline`` (the GPU default) keeps the heavy routines and the costly built-ins out of
    line; every result is the same bits as the inlined build's."""
    from daskcl import config
    from daskcl.runtime import program

    got = {}
    for mode in (False, True):
        program.clear_memory_cache()
        with config.set({"noinline": mode}), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got[mode] = np.ascontiguousarray(_OUT_OF_LINE_CALLS[case]())
    assert np.isfinite(got[True]).any()
    np.testing.assert_array_equal(got[True].view(np.uint64), got[False].view(np.uint64))
