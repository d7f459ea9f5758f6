#!/usr/bin/env bash
# Run the test suite and the benchmarks on a lent NVIDIA GPU machine (the device tool), from the
# repository root, with the carried folders .whl (pyopencl, dask, zarr wheels for the machine's
# Python) and .deb (Debian's r-mathlib, the oracle).  Usage:
#   bash benchmarks/device_run.sh [tests|bench|all] [extra pytest args...]
# Logs and JSON results go to $OUT (or ./device-out).
set -uo pipefail
what="${1:-all}"; shift || true
source benchmarks/device_env.sh
export DASKCL_DEVICE="${DASKCL_DEVICE:-NVIDIA}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m daskcl devices | tee -a "$OUT/gpu.txt"
rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
    [ $# -gt 0 ] || set -- tests
    python3 -m pytest -q -p no:cacheprovider --durations=15 "$@" 2>&1 | tee "$OUT/pytest.log" | tail -40
    rc=${PIPESTATUS[0]}
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    python3 benchmarks/bench_build.py --out "$OUT/build-gpu.json" 2>&1 | tail -8
    python3 benchmarks/bench_nmath.py --n 67108864 --scipy-n 1048576 --functions pnorm,qnorm,dbinom,log1pexp --out "$OUT/nmath-gpu.json" 2>&1 | tail -8
    python3 benchmarks/bench_nmath.py --n 67108864 --scipy-n 262144 --functions pnorm,qnorm,dbinom --contract --out "$OUT/nmath-gpu-contract.json" 2>&1 | tail -5
fi
exit $rc
