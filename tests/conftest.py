# SPDX-License-Identifier: GPL-2.0-or-later
"""Test configuration: one disk cache for the whole session, so kernels build once per run.

Tests run on whatever device daskcl binds (``DASKCL_DEVICE`` selects, e.g. ``NVIDIA`` on a GPU
machine); CI has no GPU and runs on PoCL.
"""

from __future__ import annotations

import os
import tempfile

if "DASKCL_CACHE_DIR" not in os.environ:
    os.environ["DASKCL_CACHE_DIR"] = tempfile.mkdtemp(prefix="daskcl-test-cache-")
os.environ.pop("DASKCL_NO_CACHE", None)
