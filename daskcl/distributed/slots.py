# SPDX-License-Identifier: GPL-2.0-or-later
"""The workers to start on this host, a device slot each, and what is checked before any starts.

NVIDIA GPUs are given to workers by rotating ``CUDA_VISIBLE_DEVICES`` (as dask-cuda does),
other devices by a per-worker ``DASKCL_DEVICE``; ``DASKCL_DEVICE``, when set, restricts the
devices that :func:`device_slots` gives workers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import config
from ..errors import ClusterError, NoMatchingDeviceError
from ..runtime import device as _device
from .plugin import check_config

__all__ = ["DeviceSlot", "check_worker_config", "device_slots", "first_cause"]

@dataclass(frozen=True)
class DeviceSlot:
    """One worker's device: its name and the environment that binds it."""

    label: str
    env: dict[str, str]


def device_slots(devices: str | int | Sequence[str] | None = None) -> list[DeviceSlot]:
    """The workers to start on this host, one per device.

    ``devices``: ``None`` or ``"all"`` -- every fp64-capable GPU, else the CPU device (one
    worker); an int ``n`` -- the first ``n`` GPUs (or ``n`` workers sharing the CPU device when
    there is no GPU); a sequence of ``"P:D"`` specs or name substrings -- those devices.

    A device is fp64-capable as a worker will find it: it advertises ``cl_khr_fp64`` *and*
    passes daskcl's fp64 probe (:func:`daskcl.runtime.device.probe_fp64`), which is run here,
    before any worker process starts: a device whose probe fails (a PoCL whose compiler does
    not know the CPU) is an error in one line now, not a worker that dies at start-up.

    ``DASKCL_DEVICE`` (this process's environment), when set, restricts every choice to the
    devices it matches (``"P:D"`` or a name substring, as :func:`daskcl.runtime.device.choose` reads it):
    a device it does not match is an error, as is a ``DASKCL_DEVICE`` that matches no fp64
    device; the message lists the devices found.

    NVIDIA GPUs are selected by rotating ``CUDA_VISIBLE_DEVICES`` (worker ``i`` sees GPU ``i``
    first), as dask-cuda does; any other device by ``DASKCL_DEVICE``.

    Raises
    ------
    NoMatchingDeviceError
        ``DASKCL_DEVICE`` or a requested device matches no fp64 device here.
    NoFp64DeviceError
        No device here (or none that ``DASKCL_DEVICE`` matches) passes the fp64 probe; the
        message says why each one fails.
    ClusterError
        A bad count.
    """
    listed = _device.list_devices()
    allowed = config.get("device")
    matching = [(i, d) for i, d in listed if allowed is None or _device.matches(i, allowed)]
    if allowed is not None and not matching:
        raise NoMatchingDeviceError(
            f"DASKCL_DEVICE={allowed!r} matches no fp64 OpenCL device of this host (use 'P:D' "
            "indices or a name substring; unset it to use any). Devices found: "
            + _device.listing(listed))
    if isinstance(devices, str) and devices != "all":
        devices = [d for d in devices.split(",") if d]
    if isinstance(devices, Sequence) and not isinstance(devices, str):
        if not devices:
            raise ClusterError("at least one worker is needed: name its device ('P:D' or a "
                               "name substring)")
        slots = []
        for spec in devices:
            info, _ = _device.choose(spec)      # probed: an unusable device is its error
            if allowed is not None and not _device.matches(info, allowed):
                raise NoMatchingDeviceError(
                    f"device {spec!r} ({info.describe()}) is not one DASKCL_DEVICE={allowed!r} "
                    "allows; it allows: " + _device.listing(matching))
            slots.append(DeviceSlot(info.describe(), {"DASKCL_DEVICE": info.spec}))
        return slots

    def usable(info: _device.DeviceInfo, dev: Any) -> bool:
        return info.fp64 and _device.probe_fp64(dev) is None

    # GPUs first (each probed); the CPU device only where no GPU is usable
    gpus = [i for i, d in matching if i.type == "GPU" and usable(i, d)]
    if not gpus:
        cpu = next((i for i, d in matching if i.type != "GPU" and usable(i, d)), None)
        if cpu is None:
            # no usable device: choose says why each one is not, as a worker would
            cpu, _ = _device.choose(allowed)
        n = 1 if devices in (None, "all") else int(devices)
        if n < 1:
            raise ClusterError(f"at least one worker is needed, got {devices!r}")
        return [DeviceSlot(cpu.describe(), {"DASKCL_DEVICE": cpu.spec}) for _ in range(n)]
    if devices not in (None, "all"):
        n = int(devices)
        if not 1 <= n <= len(gpus):
            raise ClusterError(f"asked for {n} GPU workers; this host has {len(gpus)} fp64 GPUs: "
                              + "; ".join(g.describe() for g in gpus))
        gpus = gpus[:n]
    # CUDA numbers every NVIDIA GPU of the host, allowed or not: index them among all of them.
    nvidia = [g for g, _ in listed if g.type == "GPU" and "NVIDIA" in g.platform.upper()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v for v in visible.split(",") if v] if visible else [str(i) for i in range(len(nvidia))]
    slots = []
    for g in gpus:
        if g in nvidia and len(ids) >= len(nvidia):
            j = nvidia.index(g)
            # Worker j sees its own GPU first (ids rotated by j) and binds the first NVIDIA GPU.
            env = {"CUDA_VISIBLE_DEVICES": ",".join(ids[j:] + ids[:j]),
                   "DASKCL_DEVICE": f"{g.platform_index}:0"}
            slots.append(DeviceSlot(g.describe(), env))
        else:
            slots.append(DeviceSlot(g.describe(), {"DASKCL_DEVICE": g.spec}))
    return slots


def check_worker_config(warm_names: Sequence[str]) -> None:
    """What the workers' preload would stop on, checked here first: a ``worker.warm`` name
    that is no function, a value of any config key that the config refuses (each worker would
    fail to start, said at length in distributed's log)."""
    from .. import nmath

    for name in [*(config.get("worker.warm") or ()), *warm_names]:
        if isinstance(name, str) and not name.startswith("glm:") and \
                name not in nmath.FUNCTIONS:
            raise ClusterError(f"cannot warm {name!r} (DASKCL_WARM, the config key "
                               "worker.warm): no such daskcl.nmath function")
    check_config()


#: How much of the root cause's message :func:`first_cause` keeps: lines and characters.
_CAUSE_LINES, _CAUSE_CHARS = 15, 1500


def first_cause(exc: BaseException) -> str:
    """The innermost exception under ``exc`` (distributed wraps a worker's own error in
    "Nanny failed to start" and "Cluster failed to start"), as ``Type: message``: its whole
    message (Python's own hints run over several lines, multiprocessing's "if __name__ ==
    '__main__'" one among them), not a traceback, dedented, without blank lines, and at most
    :data:`_CAUSE_LINES` lines of :data:`_CAUSE_CHARS` characters in all ("[...]" marks a cut)."""
    import textwrap

    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        exc = nxt
    text = str(exc)
    first, _, rest = text.strip().partition("\n")     # the first line's indent is no guide
    lines = [first.strip(), *textwrap.dedent(rest).splitlines()]
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    if not lines:
        return type(exc).__name__
    kept = "\n".join(lines[:_CAUSE_LINES])
    cut = len(lines) > _CAUSE_LINES or len(kept) > _CAUSE_CHARS
    if len(kept) > _CAUSE_CHARS:
        kept = kept[:_CAUSE_CHARS].rstrip()
    return f"{type(exc).__name__}: {kept}" + (" [...]" if cut else "")
