# SPDX-License-Identifier: GPL-2.0-or-later
"""The GLM families and links, and the OpenCL program of each: the family's kernel file with
the library units it needs, then the shared driver (``cl/kernels/f2_f3_driver.cl``)."""

from __future__ import annotations

import functools
import os
import re

from ..errors import LibraryError
from ..runtime.library import ProgramSource, get_library

__all__ = ["FAMILIES", "kernel_stem", "program_source"]

#: (family, link) -> kernel file stem in cl/kernels
FAMILIES: dict[tuple[str, str], str] = {
    ("binomial", "logit"): "f2_f3_binomial_logit",
    ("binomial", "probit"): "f2_f3_binomial_probit",
    ("binomial", "cloglog"): "f2_f3_binomial_cloglog",
    ("poisson", "log"): "f2_f3_poisson_log",
    ("Gamma", "log"): "f2_f3_Gamma_log",
    ("gaussian", "identity"): "f2_f3_gaussian_identity",
}
#: family names that use another family's kernels
_ALIASES = {"quasibinomial": "binomial", "quasipoisson": "poisson", "gamma": "Gamma"}
_DRIVER = "f2_f3_driver"


def _supported() -> str:
    names = [f"{f}/{lk}" for f, lk in FAMILIES]
    names += [f"{a}/{lk}" for a, f in _ALIASES.items() if a != "gamma" for g, lk in FAMILIES if g == f]
    return ", ".join(names)


def kernel_stem(family: str, link: str) -> str:
    """The stem of the kernel file (``cl/kernels/<stem>.cl``) of a family and link.

    Raises
    ------
    TypeError
        ``family`` or ``link`` is not a string.
    ValueError
        The pair is not supported (the message lists the supported pairs).
    """
    if not isinstance(family, str) or not isinstance(link, str):
        raise TypeError(
            f"f2_f3: family and link must be strings, got {type(family).__name__} and "
            f"{type(link).__name__}; supported: {_supported()}"
        )
    fam = _ALIASES.get(family, family)
    stem = FAMILIES.get((fam, link))
    if stem is None:
        raise ValueError(
            f"f2_f3: family {family!r} with link {link!r} is not supported; supported "
            f"family/link pairs: {_supported()}"
        )
    return stem


@functools.cache
def _family_program(stem: str, root: str) -> tuple[ProgramSource, int]:
    """The program of one family file of the library at ``root`` with the driver appended,
    and the file's F2F3_NOBS."""
    lib = get_library(root)
    src = lib.kernel_program_source(stem)
    m = re.search(r"^#define\s+F2F3_NOBS\s+(\d+)", lib.read(f"kernels/{stem}.cl"), re.M)
    if m is None:
        raise LibraryError(f"cl/kernels/{stem}.cl does not define F2F3_NOBS; the kernel "
                           "library is inconsistent: reinstall daskcl or fix DASKCL_LIBRARY")
    driver = lib.read(f"kernels/{_DRIVER}.cl")
    name = f"kernels/{_DRIVER}.cl"
    start = src.text.count("\n") + 2          # after the "// ==== name ====" line
    text = src.text + f"// ==== {name} ====\n" + driver
    return ProgramSource(text, (*src.files, name), (*src.line_map, (start, name))), int(m.group(1))


def program_source(family: str, link: str, root: str | os.PathLike[str] | None = None
                   ) -> ProgramSource:
    """The OpenCL program the kernels of a family and link are built from: the family's file
    (``kernels/<stem>.cl``) with the library units it needs, then the driver
    (``kernels/f2_f3_driver.cl``, the last of ``files``), from the kernel library at ``root``
    (the shipped one by default)."""
    return _family_program(kernel_stem(family, link), str(get_library(root).root))[0]
