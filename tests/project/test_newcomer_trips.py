# SPDX-License-Identifier: GPL-2.0-or-later
"""What a newcomer tripped on: R's names where daskcl's differ, the module's namespace, and a
dry run's word about the disk."""

from __future__ import annotations

import pytest

from daskcl import nmath
from daskcl.sweep import Sweep


@pytest.mark.parametrize(("r", "ours"), [("gamma", "gammafn"), ("lgamma", "lgammafn"),
                                         ("besselK", "bessel_k")])
def test_r_function_names_point_to_rmath_names(r, ours):
    with pytest.raises(AttributeError, match=rf"no attribute '{r}'; R's {r}\(\) is {ours} here"):
        getattr(nmath, r)


def test_unknown_name_offers_the_closest():
    with pytest.raises(AttributeError, match=r"'pnormal' \(did you mean pnorm"):
        nmath.pnormal  # noqa: B018


def test_r_lambda_is_lam():
    for func in (nmath.dpois, nmath.rpois):
        with pytest.raises(TypeError, match="R's lambda is lam here: lambda is a reserved word"):
            func(2, **{"lambda": 3})
    with pytest.raises(TypeError, match=r"R's lower\.tail is lower_tail here"):
        nmath.pnorm(1.0, **{"lower.tail": False})
    assert float(nmath.dpois(2, lam=3)) == pytest.approx(0.22404180765538775, rel=1e-15)


def test_dir_shows_the_public_names_only():
    names = dir(nmath)
    assert "annotations" not in names and "NmathFunction" not in names
    assert names == sorted(nmath.__all__) and "pnorm" in names


def _sweep(n_q: int, n_mean: int) -> Sweep:
    return Sweep.from_dict({"sweep": {"function": "pnorm"},
                            "axes": {"q": {"linspace": [-5, 5, n_q]},
                                     "mean": {"linspace": [0, 1, n_mean]}}})


def test_plan_warns_of_a_huge_output():
    plan = _sweep(2**26, 2**20).plan()
    assert plan.splitlines()[-1] == ("warning   512.0 TiB of output (before compression): "
                                     "check that the store's filesystem holds it")
    assert "warning" not in _sweep(1000, 10).plan()


def test_plan_compares_the_output_with_the_free_space(tmp_path, monkeypatch):
    import shutil

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=2**30))
    plan = _sweep(2**15, 2**15).plan(store=tmp_path / "not" / "yet" / "out.zarr")  # 8 GiB
    assert plan.splitlines()[-1] == (f"warning   the output (8.0 GiB, before compression) "
                                     f"exceeds the 1.0 GiB free on {tmp_path}'s filesystem")
    assert "warning" not in _sweep(1000, 10).plan(store=tmp_path / "small.zarr")
    assert "warning" not in _sweep(2**15, 2**15).plan(store="s3://bucket/out.zarr")
