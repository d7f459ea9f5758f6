#!/usr/bin/env bash
# Issue 7 on a lent GPU machine (the device tool): the sweep/cluster tests and the sweep
# benchmark (overhead against the bare kernel; scaling over the host's GPUs).
#   bash benchmarks/device_sweep.sh "1,2"        # worker counts for the scaling runs
set -uo pipefail
gpus="${1:-1}"
source benchmarks/device_env.sh
export DASKCL_DEVICE="${DASKCL_DEVICE:-NVIDIA}"
nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m daskcl devices | tee -a "$OUT/gpu.txt"
timeout 300 python3 benchmarks/bench_sweep.py --size gpu --gpus "$gpus" --tmp /tmp/bench-sweep \
    --out "$OUT/sweep-gpu.json" 2>&1 | tail -12
timeout 240 python3 -m pytest -p no:cacheprovider -p xdist -n 6 -p timeout --timeout 200 -v --tb=short -rf \
    tests/sweep/test_sweep.py tests/distributed/test_distributed.py tests/sweep/test_workflows.py \
    tests/kernels/test_dask_arrays.py \
    > "$OUT/pytest-sweep.log" 2>&1; grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest-sweep.log" | tail -15
