# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation's figures, computed with daskcl on the bound device when the docs build.

Each function writes one PNG and returns the facts its page states (the numbers a caption
quotes are computed, not typed in).  On a CPU-only machine the device is PoCL; each figure
takes seconds there once its kernels are built (``daskcl``'s program cache keeps them).
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / "workflows"

def ttest_power(out: Path) -> dict[str, Any]:
    """Power of the two-sided two-sample t test against n, one curve per effect size, from the
    ``ttest_power`` workflow's function (noncentral t: ``qt`` and ``pnt``)."""
    sys.path.insert(0, str(WORKFLOWS / "ttest_power"))
    try:
        import power as workflow
    finally:
        sys.path.pop(0)
    n = np.arange(2, 201)
    effects = (0.2, 0.5, 0.8, 1.2)
    pw = workflow.power(n[:, None], np.array(effects)[None, :])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for j, d in enumerate(effects):
        ax.plot(n, pw[:, j], label=f"d = {d}")
    ax.axhline(0.8, color="0.6", lw=0.8, ls="--")
    need = {d: int(n[np.argmax(pw[:, j] >= 0.8)]) for j, d in enumerate(effects) if pw[-1, j] >= 0.8}
    for k in need.values():
        ax.plot([k], [0.8], "o", color="k", ms=3)
        ax.annotate(f"n = {k}", (k, 0.8), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("n per group")
    ax.set_ylabel("power (alpha = 0.05, two-sided)")
    ax.set_title("Two-sample t test: power from the noncentral t (daskcl.nmath.qt, pnt)")
    ax.legend(title="Cohen's d", loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return {"n_for_80": need, "power_64_0.5": float(pw[62, 1])}


def tukey_table(out: Path) -> dict[str, Any]:
    """``qtukey`` against the published table of the ``tukey_critical`` workflow (Harter 1960),
    relative difference per entry, by degrees of freedom."""
    from daskcl import nmath

    rows = []
    with open(WORKFLOWS / "tukey_critical" / "published_table.csv", newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(lines):
        rows.append((float(r["p"]), float(r["nmeans"]), float(r["df"]), float(r["q"])))
    tab = np.array(rows)
    tab = tab[tab[:, 2] >= 2]          # R's algorithm (and daskcl's) needs df >= 2
    p, k, df, q = tab.T
    got = nmath.qtukey(p, 1.0, k, df)
    ok = np.isfinite(got)
    rel = (got - q) / q
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for level, marker in ((0.90, "s"), (0.95, "o"), (0.99, "^")):
        sel = ok & (p == level)
        ax.scatter(np.where(np.isinf(df[sel]), 300.0, df[sel]), 100 * rel[sel], s=14,
                   marker=marker, label=f"p = {level}", alpha=0.8)
    ax.set_xscale("log")
    ax.set_xticks([2, 3, 5, 10, 20, 60, 120, 300])
    ax.set_xticklabels(["2", "3", "5", "10", "20", "60", "120", "inf"])
    ax.set_xlabel("error degrees of freedom")
    ax.set_ylabel("(qtukey - published) / published, %")
    ax.set_title("qtukey(p, 1, nmeans, df) against Harter's (1960) table")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    big = ok & (df >= 4)
    return {"entries": int(ok.sum()), "max_rel_df_ge_4": float(np.max(np.abs(rel[big]))),
            "max_rel_df_2": float(np.max(np.abs(rel[df == 2]))) if np.any(df == 2) else 0.0}


def budworm_posterior(out: Path) -> dict[str, Any]:
    """The budworm posterior (``glm_envelope`` workflow) on the (ldose, male:ldose) plane through
    its mode: contours of ``qf`` above its minimum, the mode marked."""
    from daskcl.glm import f2_f3, posterior_mode
    from daskcl.sweep import Sweep

    spec = Sweep.from_toml(WORKFLOWS / "glm_envelope" / "budworm.toml")
    g = spec.glm
    assert g is not None
    post = g.posterior()
    mode, hess = posterior_mode(post)
    sd = np.sqrt(np.diag(np.linalg.inv(hess)))
    i, j = g.names.index("ldose"), g.names.index("male_ldose")
    a = mode[i] + sd[i] * np.linspace(-3.5, 3.5, 81)
    b = mode[j] + sd[j] * np.linspace(-3.5, 3.5, 81)
    grid = np.tile(mode, (a.size * b.size, 1))
    grid[:, i] = np.repeat(a, b.size)
    grid[:, j] = np.tile(b, a.size)
    qf, _ = f2_f3(g.family, g.link, grid, g.y, g.x, g.mu, g.P, g.alpha, g.wt)
    qf0, _ = f2_f3(g.family, g.link, mode[None, :], g.y, g.x, g.mu, g.P, g.alpha, g.wt)
    excess = (qf - qf0[0]).reshape(a.size, b.size)
    fig, ax = plt.subplots(figsize=(6, 5))
    levels = [0.5 * c for c in (1.0, 4.0, 9.0, 16.0)]          # 1 to 4 sd in one dimension
    cs = ax.contour(a, b, excess.T, levels=levels, colors="C0")
    ax.clabel(cs, fmt={lv: f"{math.sqrt(2 * lv):.0f} sd" for lv in levels}, fontsize=8)
    ax.plot(mode[i], mode[j], "k+", ms=12, mew=1.5, label="posterior mode")
    ax.set_xlabel("ldose")
    ax.set_ylabel("male:ldose")
    ax.set_title("Budworm: qf - qf(mode), other coefficients at the mode")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return {"mode": dict(zip(g.names, (float(v) for v in mode))),
            "sd": dict(zip(g.names, (float(v) for v in sd)))}


FIGURES = {
    "ttest_power.png": ttest_power,
    "tukey_table.png": tukey_table,
    "budworm_posterior.png": budworm_posterior,
}
