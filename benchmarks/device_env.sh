#!/usr/bin/env bash
# Set-up shared by the device_*.sh scripts on a lent NVIDIA machine (the device tool), sourced
# from the repository root.  It installs the carried wheels (.whl/: pyopencl, dask, distributed,
# zarr and their needs, for the machine's Python) into /tmp/site; unpacks PoCL where the call
# carries it (.pocl/pocl.tar.xz: the unzipped pocl-binary-distribution wheel, xz-packed to fit
# the carry limit), so that the cross-device tests compare the GPU with PoCL; registers the
# NVIDIA OpenCL ICD; and unpacks Debian's r-mathlib (.deb/) for the libRmath oracle.
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl >/dev/null 2>&1 || { echo "wheel install failed"; exit 1; }
if [ -f .pocl/pocl.tar.xz ] && [ ! -d /tmp/site/pocl_binary_distribution ]; then
    tar xJf .pocl/pocl.tar.xz -C /tmp/site
fi
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
if ls .deb/r-mathlib_*.deb >/dev/null 2>&1; then
    mkdir -p /tmp/rmath && dpkg -x .deb/r-mathlib_*.deb /tmp/rmath
    export DASKCL_RMATH=/tmp/rmath/usr/lib/libRmath.so.1
fi
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
export DASKCL_CACHE_DIR=/tmp/daskcl-cache
