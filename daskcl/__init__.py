# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl: R's Mathlib and GLM kernels on OpenCL devices, for NumPy and Dask arrays.

Each process binds one fp64 OpenCL device (:mod:`daskcl.runtime.device`), assembles the minimal
program a kernel needs from the annotated kernel library (:mod:`daskcl.runtime.library`), builds and
caches it (:mod:`daskcl.runtime.program`), and maps arrays through it (:mod:`daskcl.nmath`).
:class:`ElementwiseKernel` and :class:`RawKernel` are the kernel layer those functions are made
of, for kernels of your own that call the whole Mathlib.
"""

from . import config
from ._version import __version__
from .errors import (
    BuildError,
    DaskclError,
    DeviceError,
    LibraryError,
)
from .kernels._elementwise import ElementwiseKernel
from .kernels._kernel import Kernel, RawKernel
from .kernels._launch import synchronize
from .kernels._transfer import empty_pinned

__all__ = [
    "BuildError",
    "DaskclError",
    "DeviceError",
    "ElementwiseKernel",
    "Kernel",
    "LibraryError",
    "RawKernel",
    "__version__",
    "config",
    "empty_pinned",
    "synchronize",
]
