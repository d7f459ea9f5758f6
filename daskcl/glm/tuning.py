# SPDX-License-Identifier: GPL-2.0-or-later
"""Launch shapes of the f2_f3 kernels: :class:`Tuning` and how it fits a device.

The three kernels (item, tile, group) and their work decomposition are described in
``cl/kernels/f2_f3_driver.cl``; :meth:`Tuning.resolve` picks the kernel and fits its shape to
the device's local memory.
"""

from __future__ import annotations

import logging
import numbers
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["ITEM_MAX_L2", "TILE_MIN_L2", "Tuning", "mma_capable"]

_log = logging.getLogger("daskcl.glm")

#: the item kernel keeps 2 * l2 doubles per grid point in registers; above this l2 the group
#: kernel (any l2) is used
ITEM_MAX_L2 = 48
#: on GPUs the tile kernel is used from this l2 on, where it fits the device's local memory
TILE_MIN_L2 = 8


def _even(n: int) -> int:
    return n + (n & 1)


@dataclass(frozen=True, kw_only=True)
class Tuning:
    """How a launch of the f2_f3 kernels is organised (``cl/kernels/f2_f3_driver.cl``).

    Every field is a keyword; the defaults (``Tuning()``) let :meth:`resolve` choose for the
    device.  :meth:`Posterior.resolve_tuning` shows what a tuning resolves to.

    Parameters
    ----------
    path : {"auto", "item", "tile", "group"}
        ``"item"``: a work-item per ``points_per_item`` grid points (l2 up to
        :data:`ITEM_MAX_L2`); ``"tile"``: ``points_per_group`` grid points per work-group, the
        two products per tile of observations as small matrix products, on fp64 tensor cores
        where ``mma`` allows (l2 up to about a hundred); ``"group"``: a work-group per grid
        point (any l2); ``"auto"``: on GPUs the tile path from l2 = :data:`TILE_MIN_L2` on where
        it fits the device's local memory, else the item path up to :data:`ITEM_MAX_L2`, else
        the group path.
    work_group : int
        Work-items per work-group, a power of two (``F2F3_WG``); 0: the device's default (64 on
        CPUs; 128 on GPUs, 256 on the tile path with mma from l2 = 17 on).  With mma and 0 it is
        halved, down to 64, until the tile kernel fits the local memory.
    tile_rows : int
        Observations staged in local memory per step (``F2F3_TILE``; item and tile paths); 0:
        64 (item), 16 (tile with mma), 32 (tile).  Reduced until the kernel fits the device's
        local memory, kept a multiple of :meth:`tile_step` (tile) or ``rows_unrolled`` (item).
    points_per_item : int
        Grid points per work-item (``F2F3_PPW``; item path; 1 measured best,
        ``benchmarks/results/glm-gpu-h200.json``).
    rows_unrolled : int
        Observations per step of the item kernel's inner loop (``F2F3_RU``; item path).
    points_per_group : int
        Grid points per work-group (``F2F3_PB``; tile path): a power of two, 4 <=
        points_per_group <= work_group; with mma it is ``work_group // 2`` whatever is given.
    mma : {-1, 0, 1}
        The tile path on fp64 tensor cores (``F2F3_MMA``, PTX mma.m8n8k4.f64): 1 yes (an error
        where the device has none), 0 no, -1 where the device has them (:func:`mma_capable`).
    """

    path: str = "auto"
    work_group: int = 0
    tile_rows: int = 0
    points_per_item: int = 1
    rows_unrolled: int = 2
    points_per_group: int = 64
    mma: int = -1

    def __post_init__(self) -> None:
        # checked when made: resolve() clamps some fields (max(1, rows_unrolled)) and compares
        # others, so Tuning(tile_rows=-4) ran the item kernel with 2 rows per tile and
        # Tuning(work_group="64") failed inside resolve() with a bare "'<' not supported"
        if not isinstance(self.path, str):
            raise TypeError(f"Tuning.path must be a string, not {self.path!r}")
        for name in ("work_group", "tile_rows", "points_per_item", "rows_unrolled",
                     "points_per_group", "mma"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Tuning.{name} must be an int, not {v!r}")
            if name != "mma" and v < 0:
                raise ValueError(f"Tuning.{name} must be >= 0 (0: the default), not {v}")
        if self.mma not in (-1, 0, 1):
            raise ValueError(f"Tuning.mma must be -1, 0 or 1, not {self.mma}")

    def resolve(self, l2: int, nobsp: int, dev: Any, gpu: bool) -> Tuning:
        """The tuning a launch uses for ``l2`` coefficients and ``nobsp`` values per
        observation on ``dev`` (a ``pyopencl.Device``): the path chosen, every 0 replaced by
        the default and the shape fitted to the device's local memory; ValueError where it
        cannot fit."""
        path = self.path
        local = int(dev.local_mem_size)
        if path not in ("auto", "item", "group", "tile"):
            raise ValueError(f"Tuning.path must be 'auto', 'item', 'tile' or 'group', not {path!r}")
        fit = None
        if path == "tile" or (path == "auto" and gpu and TILE_MIN_L2 <= l2):
            fit = self._tile_fit(l2, nobsp, dev, gpu)
        if path == "auto":
            path = "tile" if fit else "item" if l2 <= ITEM_MAX_L2 else "group"
        if path == "tile":
            if fit is None:
                wg, pb, _, mma = self._tile_shape(l2, dev, gpu)
                least = Tuning(path="tile", work_group=wg, points_per_group=pb, mma=mma)
                least = replace(least, tile_rows=least.tile_step())
                raise ValueError(
                    f"f2_f3: l2 = {l2} is too large for the tile kernel on this device with "
                    f"work_group = {wg}, points_per_group = {pb} (even "
                    f"{least.local_bytes(l2, nobsp)} bytes of local memory are needed, it has "
                    f"{local}); use Tuning(path='group'), or a smaller work_group or "
                    "points_per_group"
                )
            wg, pb, tile, mma = fit
            return Tuning(path="tile", work_group=wg, tile_rows=tile, points_per_group=pb, mma=mma)
        wg = self.work_group or (128 if gpu else 64)
        wg = min(wg, dev.max_work_group_size)
        if wg & (wg - 1):
            raise ValueError(f"Tuning.work_group must be a power of two, not {wg}")
        ppw = max(1, self.points_per_item)
        ru = max(1, self.rows_unrolled)
        if path == "item":
            row = (_even(l2) + nobsp) * 8
            tile = min(self.tile_rows or 64, max(ru, min(local, 32768) // row))
            tile = max(ru, tile - tile % ru)
            if tile * row > local:
                raise ValueError(
                    f"f2_f3: l2 = {l2} is too large for the item kernel on this device (one "
                    f"observation needs {row} bytes of local memory, it has {local}); use "
                    "Tuning(path='group')"
                )
        else:
            tile = 0
            limit = local // 8 - wg
            if l2 > limit:
                raise ValueError(
                    f"f2_f3: l2 = {l2} coefficients exceed the largest this device supports, "
                    f"{limit}: the group kernel keeps one coefficient vector and {wg} partial "
                    f"sums in local memory ({local} bytes on this device)"
                )
        return Tuning(path=path, work_group=wg, tile_rows=tile, points_per_item=ppw,
                      rows_unrolled=ru, points_per_group=self.points_per_group, mma=0)

    def _tile_shape(self, l2: int, dev: Any, gpu: bool) -> tuple[int, int, int, int]:
        """(work_group, points_per_group, tile_rows, mma) of the tile path as asked, checked;
        tile_rows not yet fitted."""
        mma = int(self.mma != 0 and mma_capable(dev))
        # measured best with mma: 256 work-items (128 points) per work-group at l2 = 32, 128 at
        # l2 = 16 (benchmarks/results/glm-gpu-h200.json)
        wg = self.work_group or ((256 if mma and l2 > 16 else 128) if gpu else 64)
        wg = min(wg, dev.max_work_group_size)
        if self.mma == 1 and not mma:
            raise ValueError(
                "Tuning(mma=1): this device has no fp64 tensor cores that daskcl can use "
                "(NVIDIA compute capability 8.0 or later)"
            )
        if mma:
            if wg & (wg - 1) or wg < 32:
                raise ValueError(f"Tuning: the tile path with mma needs a power of two "
                                 f"work_group >= 32, not {wg}")
            return wg, wg // 2, max(8, (self.tile_rows or 16) // 8 * 8), 1
        pb = self.points_per_group
        if wg & (wg - 1) or pb < 4 or pb & (pb - 1) or pb > wg:
            raise ValueError(
                f"Tuning: the tile path needs powers of two work_group and points_per_group "
                f"with 4 <= points_per_group <= work_group, not work_group = {wg}, "
                f"points_per_group = {pb}"
            )
        cw = Tuning(path="tile", work_group=wg, points_per_group=pb, mma=0).tile_step()
        return wg, pb, max(cw, (self.tile_rows or 32) // cw * cw), 0

    def _tile_fit(self, l2: int, nobsp: int, dev: Any, gpu: bool
                  ) -> tuple[int, int, int, int] | None:
        """(work_group, points_per_group, tile_rows, mma) with tile_rows halved (staying a
        multiple of :meth:`tile_step`) until the kernel fits the device's local memory, and
        with mma and the default work_group, work_group halved down to 64 after that; None if
        it never fits."""
        wg, pb, tile, mma = self._tile_shape(l2, dev, gpu)
        while True:
            t = Tuning(path="tile", work_group=wg, tile_rows=tile, points_per_group=pb, mma=mma)
            step = t.tile_step()
            while t.local_bytes(l2, nobsp) > int(dev.local_mem_size) and t.tile_rows > step:
                t = replace(t, tile_rows=max(step, t.tile_rows // 2 // step * step))
            if t.local_bytes(l2, nobsp) <= int(dev.local_mem_size):
                return wg, pb, t.tile_rows, mma
            if not (mma and self.work_group == 0 and wg > 64):
                return None
            wg, pb = wg // 2, pb // 2

    def options(self, l2: int, nobsp: int, fact: bool) -> tuple[str, ...]:
        """The kernel's build options (``-DF2F3_*``) of a resolved tuning."""
        opts: tuple[str, ...] = (
            f"-DF2F3_L2={l2}", f"-DF2F3_L2P={_even(l2)}", f"-DF2F3_NOBSP={nobsp}",
            f"-DF2F3_WG={self.work_group}", f"-DF2F3_TILE={max(self.tile_rows, 1)}",
            f"-DF2F3_PPW={self.points_per_item}", f"-DF2F3_RU={self.rows_unrolled}",
            f"-DF2F3_FACT={int(fact)}",
        )
        if self.path == "tile":
            opts += (f"-DF2F3_PB={self.points_per_group}", f"-DF2F3_L2Q={self.l2q(l2)}",
                     f"-DF2F3_MMA={int(self.mma == 1)}")
        return opts

    def tile_step(self) -> int:
        """What the tile path's ``tile_rows`` must be a multiple of: 8 observations (an mma
        block), or the ``work_group / (points_per_group / 4)`` work-items that share a point
        quad."""
        return 8 if self.mma == 1 else self.work_group // (self.points_per_group // 4)

    def l2q(self, l2: int) -> int:
        """l2 padded for the tile path: a multiple of 8 (mma) or of twice :meth:`tile_step`."""
        step = 8 if self.mma == 1 else 2 * self.tile_step()
        return -(-l2 // step) * step

    def local_bytes(self, l2: int, nobsp: int) -> int:
        """Bytes of local memory of the tile kernel (``f2_f3_tile`` in f2_f3_driver.cl)."""
        pad = 4 if self.mma == 1 else 2          # row strides: conflict-free loads
        sb = self.l2q(l2) + pad
        pb, tile = self.points_per_group, self.tile_rows
        return 8 * (pb * sb + tile * sb + tile * (pb + pad) + nobsp * tile)


def mma_capable(dev: Any) -> bool:
    """Whether the tile kernel can use ``dev``'s fp64 tensor cores (PTX mma.m8n8k4.f64 through
    inline assembly: NVIDIA devices of compute capability 8.0 or later)."""
    import pyopencl as cl

    if "cl_nv_device_attribute_query" not in getattr(dev, "extensions", ""):
        return False
    try:
        return int(dev.compute_capability_major_nv) >= 8
    except (AttributeError, cl.Error) as exc:  # an OpenCL layer that does not answer
        _log.debug("daskcl: the device does not tell its compute capability: %s", exc)
        return False
