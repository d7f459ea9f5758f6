#!/usr/bin/env bash
# Issue 7 on a lent GPU machine (the device tool): the sweep/cluster tests and the sweep
# benchmark (overhead against the bare kernel; scaling over the host's GPUs).
#   bash benchmarks/device_sweep.sh "1,2"        # worker counts for the scaling runs
set -uo pipefail
gpus="${1:-1}"
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 DASKCL_CACHE_DIR=/tmp/daskcl-cache PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m daskcl devices | tee -a "$OUT/gpu.txt"
timeout 400 python3 benchmarks/bench_sweep.py --size gpu --gpus "$gpus" --tmp /tmp/bench-sweep \
    --out "$OUT/sweep-gpu.json" 2>&1 | tail -12
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rf tests/test_sweep.py tests/test_distributed.py tests/test_workflows.py > "$OUT/pytest-sweep.log" 2>&1; tail -5 "$OUT/pytest-sweep.log"
