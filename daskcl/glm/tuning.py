# SPDX-License-Identifier: GPL-2.0-or-later
"""Launch shapes of the f2_f3 kernels: :class:`Tuning` and how it fits a device.

The three kernels (item, tile, group) and their work decomposition are described in
``cl/kernels/f2_f3_driver.cl``; :meth:`Tuning.resolve` picks the kernel and fits its shape to
the device's local memory.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

__all__ = ["ITEM_MAX_L2", "TILE_MIN_L2", "Tuning", "mma_capable"]

#: the item kernel keeps 2 * l2 doubles per grid point in registers; above this l2 the group
#: kernel (any l2) is used
ITEM_MAX_L2 = 48
#: on GPUs the tile kernel is used from this l2 on, where it fits the device's local memory
TILE_MIN_L2 = 8


def _even(n: int) -> int:
    return n + (n & 1)


@dataclass(frozen=True)
class Tuning:
    """How a launch is organised (see ``cl/kernels/f2_f3_driver.cl``).

    ``path`` is ``"item"`` (a work-item per ``ppw`` grid points, l2 <= :data:`ITEM_MAX_L2`),
    ``"tile"`` (``pb`` grid points per work-group, the two products per tile of observations as
    small matrix products, on fp64 tensor cores where ``mma`` allows; l2 up to about a hundred),
    ``"group"`` (a work-group per grid point, any l2) or ``"auto"``: on GPUs the tile path from
    l2 = :data:`TILE_MIN_L2` on where it fits, else the item path up to :data:`ITEM_MAX_L2`, else
    the group path.  ``tile`` (observations staged in local memory per step; 0: the path's
    default) is reduced to fit the device's local memory, and with ``mma`` and ``wg = 0`` then
    the work-group.
    """

    path: str = "auto"
    wg: int = 0          # 0: the device's default
    tile: int = 0        # 0: 64 (item), 16 (tile with mma), 32 (tile)
    ppw: int = 1         # grid points per work-item (1 measured best on an H200)
    ru: int = 2
    pb: int = 64         # grid points per work-group (tile path; wg / 2 with mma)
    mma: int = -1        # tile path on fp64 tensor cores: 1 yes, 0 no, -1 where the device has them

    def resolve(self, l2: int, nobsp: int, dev: Any, gpu: bool) -> Tuning:
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
                least = Tuning("tile", wg, 0, 1, 1, pb, mma)
                least = replace(least, tile=least.tile_step())
                raise ValueError(
                    f"f2_f3: l2 = {l2} is too large for the tile kernel on this device with "
                    f"wg = {wg}, pb = {pb} (even {least.local_bytes(l2, nobsp)} bytes of local "
                    f"memory are needed, it has {local}); use Tuning(path='group'), or a smaller "
                    "wg or pb"
                )
            wg, pb, tile, mma = fit
            return Tuning("tile", wg, tile, 1, 1, pb, mma)
        wg = self.wg or (128 if gpu else 64)
        wg = min(wg, dev.max_work_group_size)
        if wg & (wg - 1):
            raise ValueError(f"Tuning.wg must be a power of two, not {wg}")
        ppw = max(1, self.ppw)
        ru = max(1, self.ru)
        if path == "item":
            row = (_even(l2) + nobsp) * 8
            tile = min(self.tile or 64, max(ru, min(local, 32768) // row))
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
        return Tuning(path, wg, tile, ppw, ru, self.pb, 0)

    def _tile_shape(self, l2: int, dev: Any, gpu: bool) -> tuple[int, int, int, int]:
        """(wg, pb, tile, mma) of the tile path as asked, checked; tile not yet fitted."""
        mma = int(self.mma != 0 and mma_capable(dev))
        # measured on an H200 (benchmarks/results/glm-gpu-h200.json): with mma, 256 work-items
        # (128 points) per work-group at l2 = 32, 128 at l2 = 16
        wg = self.wg or ((256 if mma and l2 > 16 else 128) if gpu else 64)
        wg = min(wg, dev.max_work_group_size)
        if self.mma == 1 and not mma:
            raise ValueError(
                "Tuning(mma=1): this device has no fp64 tensor cores that daskcl can use "
                "(NVIDIA compute capability 8.0 or later)"
            )
        if mma:
            if wg & (wg - 1) or wg < 32:
                raise ValueError(f"Tuning: the tile path with mma needs a power of two wg >= 32, "
                                 f"not {wg}")
            return wg, wg // 2, max(8, (self.tile or 16) // 8 * 8), 1
        pb = self.pb
        if wg & (wg - 1) or pb < 4 or pb & (pb - 1) or pb > wg:
            raise ValueError(
                f"Tuning: the tile path needs powers of two wg and pb with 4 <= pb <= wg, not "
                f"wg = {wg}, pb = {pb}"
            )
        cw = Tuning("tile", wg, 0, 1, 1, pb, 0).tile_step()
        return wg, pb, max(cw, (self.tile or 32) // cw * cw), 0

    def _tile_fit(self, l2: int, nobsp: int, dev: Any, gpu: bool
                  ) -> tuple[int, int, int, int] | None:
        """(wg, pb, tile, mma) with tile halved (staying a multiple of its step) until the
        kernel fits the device's local memory, and with mma and the default wg, wg halved down
        to 64 after that; None if it never fits."""
        wg, pb, tile, mma = self._tile_shape(l2, dev, gpu)
        while True:
            t = Tuning("tile", wg, tile, 1, 1, pb, mma)
            step = t.tile_step()
            while t.local_bytes(l2, nobsp) > int(dev.local_mem_size) and t.tile > step:
                t = replace(t, tile=max(step, t.tile // 2 // step * step))
            if t.local_bytes(l2, nobsp) <= int(dev.local_mem_size):
                return wg, pb, t.tile, mma
            if not (mma and self.wg == 0 and wg > 64):
                return None
            wg, pb = wg // 2, pb // 2

    def options(self, l2: int, nobsp: int, fact: bool) -> tuple[str, ...]:
        opts: tuple[str, ...] = (
            f"-DF2F3_L2={l2}", f"-DF2F3_L2P={_even(l2)}", f"-DF2F3_NOBSP={nobsp}",
            f"-DF2F3_WG={self.wg}", f"-DF2F3_TILE={max(self.tile, 1)}",
            f"-DF2F3_PPW={self.ppw}", f"-DF2F3_RU={self.ru}", f"-DF2F3_FACT={int(fact)}",
        )
        if self.path == "tile":
            opts += (f"-DF2F3_PB={self.pb}", f"-DF2F3_L2Q={self.l2q(l2)}",
                     f"-DF2F3_MMA={int(self.mma == 1)}")
        return opts

    def tile_step(self) -> int:
        """What the tile path's tile must be a multiple of: 8 observations (an mma block), or
        the wg / (pb / 4) work-items that share a point quad."""
        return 8 if self.mma == 1 else self.wg // (self.pb // 4)

    def l2q(self, l2: int) -> int:
        """l2 padded for the tile path: a multiple of 8 (mma) or of 2 wg / (pb / 4)."""
        step = 8 if self.mma == 1 else 2 * self.tile_step()
        return -(-l2 // step) * step

    def local_bytes(self, l2: int, nobsp: int) -> int:
        """Bytes of local memory of the tile kernel (``f2_f3_tile`` in f2_f3_driver.cl)."""
        pad = 4 if self.mma == 1 else 2          # row strides: conflict-free loads
        sb = self.l2q(l2) + pad
        return 8 * (self.pb * sb + self.tile * sb + self.tile * (self.pb + pad)
                    + nobsp * self.tile)


def mma_capable(dev: Any) -> bool:
    """Whether the tile kernel can use ``dev``'s fp64 tensor cores (PTX mma.m8n8k4.f64 through
    inline assembly: NVIDIA devices of compute capability 8.0 or later)."""
    if "cl_nv_device_attribute_query" not in getattr(dev, "extensions", ""):
        return False
    try:
        return int(dev.compute_capability_major_nv) >= 8
    except Exception:  # an OpenCL layer that does not answer the query
        return False
