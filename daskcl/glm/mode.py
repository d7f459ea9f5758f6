# SPDX-License-Identifier: GPL-2.0-or-later
"""The mode of a GLM posterior and the Hessian of its negative log there (:func:`posterior_mode`)."""

from __future__ import annotations

import numpy as np

from ..errors import PosteriorModeError
from .posterior import Posterior

__all__ = ["posterior_mode"]


def posterior_mode(post: Posterior, start: np.ndarray | None = None, *, tol: float = 1e-10,
                   max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The posterior mode and the Hessian of ``qf`` there, by damped Newton steps.

    Each iteration evaluates, in one :func:`daskcl.glm.f2_f3` call, the gradient at the point
    and at ``+-h`` along every coefficient; the Hessian is their central difference,
    symmetrised.  Steps are halved until ``qf`` does not increase beyond its rounding (a
    relative 1e-13: near the mode a Newton step changes ``qf`` by less than its rounding, and
    halving such a step would stop the iteration short of the mode).

    Parameters
    ----------
    post : Posterior
        The data set and prior.
    start : (l2,) array, optional
        Where the iteration starts (default: the prior mean).
    tol : float
        Stop once every coefficient's step is at most ``tol * (1 + |b_k|)``.
    max_iter : int
        Newton steps at most.

    Returns
    -------
    mode : (l2,) array
    hessian : (l2, l2) array
        The Hessian of ``qf`` at the mode (its inverse: the Laplace approximation's covariance).

    Raises
    ------
    PosteriorModeError
        ``qf`` or its gradient is not finite at an iterate (NaN in the data, data outside the
        family's support, an infinite precision), the Hessian is singular on the way (the
        data do not identify a coefficient and its prior is flat), or the iteration did not
        converge in ``max_iter`` steps.

    Examples
    --------
    >>> import numpy as np
    >>> from daskcl.glm import Posterior, posterior_mode
    >>> x = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    >>> post = Posterior("binomial", "logit", [0.0, 0.5, 0.5, 1.0], x, np.zeros(2), np.eye(2),
    ...                  0.0, 2.0)
    >>> mode, hessian = posterior_mode(post)          # doctest: +SKIP
    """
    import numbers

    if not isinstance(post, Posterior):
        raise TypeError(f"posterior_mode: post must be a daskcl.glm.Posterior, not "
                        f"{type(post).__name__}")
    l2 = post.x.shape[1]
    try:
        b = np.array(post.mu if start is None else start, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"posterior_mode: start must be {l2} real numbers, not {start!r}") from None
    if b.shape != (l2,):
        raise ValueError(f"posterior_mode: start has shape {b.shape}; it must have shape "
                         f"(l2,) = ({l2},), one value per column of x")
    if not np.isfinite(b).all():
        raise ValueError(f"posterior_mode: start must be finite, got {b}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol > 0:
        raise ValueError(f"posterior_mode: tol must be a positive number, not {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"posterior_mode: max_iter must be a positive int, not {max_iter!r}")
    for _ in range(max_iter):
        h = 1e-5 * (1.0 + np.abs(b))
        pts = np.vstack([b, b + np.diag(h), b - np.diag(h)])
        qf, grad = post.f2_f3(pts)
        # a non-finite qf or gradient has no Newton step: unchecked, a +Inf qf (data outside
        # the family's support, e.g. a poisson y < 0) rejected every candidate of the line
        # search, the iterate moved by a vanishing step and that passed for convergence,
        # returning a "mode" where qf = +Inf; NaN ran to "did not converge"
        if not (np.isfinite(qf[0]) and np.isfinite(grad[0]).all()):
            raise PosteriorModeError(
                f"posterior_mode: qf = {float(qf[0])!r} and gradient {grad[0]} at b = {b}: "
                "the posterior must be finite to have a mode (check the data for NaN and for "
                "values outside the family's support, zero weights (gaussian, Gamma), and the "
                "prior precision for Inf or NaN; or pass a start where qf is finite)")
        H = (grad[1:l2 + 1] - grad[l2 + 1:]) / (2 * h)[:, None]
        H = 0.5 * (H + H.T)
        try:
            step = np.linalg.solve(H, grad[0])
        except np.linalg.LinAlgError as exc:
            raise PosteriorModeError(f"posterior_mode: the Hessian at {b} is singular; add "
                                     "a prior precision") from exc
        t = 1.0
        while t > 1e-8:
            cand = b - t * step
            qc, _ = post.f2_f3(cand[None, :])
            if np.isfinite(qc[0]) and qc[0] <= qf[0] + 1e-13 * abs(qf[0]):
                break
            t /= 2
        b = b - t * step
        if np.all(np.abs(t * step) <= tol * (1.0 + np.abs(b))):
            break
    else:
        raise PosteriorModeError(f"posterior_mode: Newton's method did not converge in "
                                 f"{max_iter} steps")
    h = 1e-5 * (1.0 + np.abs(b))
    _, grad = post.f2_f3(np.vstack([b + np.diag(h), b - np.diag(h)]))
    H = (grad[:l2] - grad[l2:]) / (2 * h)[:, None]
    return b, 0.5 * (H + H.T)
