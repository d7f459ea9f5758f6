# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared helpers of the benchmark scripts: timing, device description, result files."""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def median_time(fn: Callable[[], Any], repeat: int = 7, warmup: int = 2) -> float:
    """Median wall-clock seconds of ``fn()`` (which must block until its work is done)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def machine() -> dict[str, Any]:
    from daskcl import __version__
    from daskcl.runtime import device

    info = device.current().info
    return {
        "date": time.strftime("%Y-%m-%d"),
        "daskcl": __version__,
        "device": f"{info.platform} / {info.name}",
        "device_type": info.type,
        "driver": info.driver_version,
        "compute_units": info.compute_units,
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
    }


def write(name: str, payload: dict[str, Any], out: str | None) -> Path:
    path = Path(out) if out else RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    widths = {c: max(len(c), *(len(fmt(r.get(c, ""))) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols)]
    lines += ["  ".join(fmt(r.get(c, "")).ljust(widths[c]) for c in cols) for r in rows]
    return "\n".join(lines)


def report(tag: str, rows: list[dict[str, Any]], cols: list[str], out: str | None,
           key: str = "results", info: dict[str, Any] | None = None, by_device: bool = True,
           **extra: Any) -> Path:
    """Print ``rows`` as a table and write them, with the machine (``info``, default
    :func:`machine`) and ``extra``, to ``out`` (default ``results/<tag>-<device type>.json``,
    or ``results/<tag>.json`` without ``by_device``); returns the path written."""
    print(table(rows, cols))
    info = machine() if info is None else info
    name = f"{tag}-{info['device_type'].lower()}" if by_device else tag
    path = write(name, {"machine": info, **extra, key: rows}, out)
    print(f"wrote {path}")
    return path
