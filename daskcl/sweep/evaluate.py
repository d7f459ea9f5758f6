# SPDX-License-Identifier: GPL-2.0-or-later
"""One chunk of a sweep computed: the function called over the chunk's axes (the spec, a
:class:`~daskcl.sweep.spec.Sweep`, is data; this is what the runner's tasks run)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SweepError

if TYPE_CHECKING:
    from .spec import Sweep

__all__ = ["evaluate_chunk"]


def evaluate_chunk(sweep: Sweep, index: tuple[int, ...]) -> dict[str, np.ndarray]:
    """The result arrays of chunk ``index``, computed on this process's device (under the
    configuration the spec sets)."""
    if sweep.overrides:
        from .. import config

        with config.set(sweep.overrides):
            return _evaluate(sweep, index)
    return _evaluate(sweep, index)


def _evaluate(sweep: Sweep, index: tuple[int, ...]) -> dict[str, np.ndarray]:
    """The function (or the GLM's posterior) over the chunk's axes, each broadcast along its own
    dimension (a Python function gets them at the chunk's full shape)."""
    sl = sweep.chunk_slices(index)
    vals = [a.values[s] for a, s in zip(sweep.axes, sl)]
    shape = tuple(v.size for v in vals)
    if sweep.glm is not None:
        from ..glm import FactorialGrid

        qf, grad = _posterior(sweep).f2_f3(FactorialGrid(vals))
        return {"qf": np.asarray(qf).reshape(shape),
                "grad": np.asarray(grad).reshape((*shape, len(vals)))}
    assert sweep.func is not None
    n = len(vals)
    kwargs: dict[str, Any] = {
        a.name: v.reshape((1,) * i + (v.size,) + (1,) * (n - i - 1))
        for i, (a, v) in enumerate(zip(sweep.axes, vals))
    }
    if sweep.func.kind == "python":
        kwargs = {k: np.broadcast_to(v, shape) for k, v in kwargs.items()}
    out = sweep.func.callable()(**kwargs, **sweep.args)
    results = out if sweep.func.kind == "kernel" else (out,)
    arrays = {}
    for name, res in zip(sweep.output_names, results):
        arr = np.asarray(res, dtype=np.float64)
        if arr.shape != shape:
            try:
                arr = np.broadcast_to(arr, shape)
            except ValueError:
                raise SweepError(f"{sweep.function} returned shape {arr.shape} for a chunk "
                                 f"of shape {shape}") from None
        arrays[name] = np.ascontiguousarray(arr)
    return arrays


_POSTERIORS: dict[str, Any] = {}


def _posterior(sweep: Sweep) -> Any:
    """The sweep's Posterior, built once per process (its device data stays uploaded)."""
    key = sweep.identity()
    post = _POSTERIORS.get(key)
    if post is None:
        assert sweep.glm is not None
        post = _POSTERIORS[key] = sweep.glm.posterior()
    return post
