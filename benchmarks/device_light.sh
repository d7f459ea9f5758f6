#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The host-cost and accuracy-mode records on a lent NVIDIA machine (the device tool), by phase:
#   bash benchmarks/device_light.sh cold|calls|speed|sweep|accuracy [...]
# cold: the cold-start census (bench_cold.py; NAMES= to choose, default its list);
# calls: bench_small and profile_calls (pgamma, pbeta) for a call's own cost;
# speed: best against r, kernels alone (bench_accuracy.py);
# accuracy: the reference table's test (K= a pytest -k expression, to split it over calls;
#   about 8 minutes whole on an H100, more than one call's limit with the other phases);
# sweep: a sweep chunk's own cost and dask arrays against dask's floor.
# Records land in $OUT with the GPU's name in gpu.txt.
set -uo pipefail
source benchmarks/device_env.sh
export DASKCL_DEVICE="${DASKCL_DEVICE:-NVIDIA}" PYTHONPATH="$PWD/tests:$PYTHONPATH"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for phase in "$@"; do
    case "$phase" in
    cold)
        timeout 420 python3 benchmarks/bench_cold.py --names "${NAMES:-qbeta,qnf,pf,pbinom,pnbeta,pt,qgamma,pnorm}" \
            --warm-repeat "${WARM:-5}" --timeout 90 --out "$OUT/cold-gpu.json" 2>&1 | tail -n 14 ;;
    calls)
        timeout 240 python3 benchmarks/bench_small.py --out "$OUT/small-gpu.json" 2>&1 | tail -n 24
        for f in pgamma pbeta; do
            timeout 120 python3 benchmarks/profile_calls.py $f --top 12 > "$OUT/calls-$f.txt" 2>&1
            grep "==" "$OUT/calls-$f.txt"
        done ;;
    speed)
        rows=$(python3 -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_accuracy as b; \
print(','.join(k for k in b.INPUTS if 'tukey' not in k))")
        timeout 420 python3 benchmarks/bench_accuracy.py --only "$rows" --out "$OUT/accuracy-gpu.json" \
            2>&1 | tail -n 24
        # the studentized range's quadratures cost milliseconds an element: fewer of them
        timeout 150 python3 benchmarks/bench_accuracy.py --only ptukey,qtukey --n 16384 \
            --out "$OUT/accuracy-tukey-gpu.json" 2>&1 | tail -n 4 ;;
    accuracy)
        timeout "${LIMIT:-540}" python3 -m pytest -q -p no:cacheprovider -rfE \
            tests/nmath/test_accuracy_best.py ${K:+-k "$K"} > "$OUT/accuracy-test.txt" 2>&1
        tail -n 30 "$OUT/accuracy-test.txt" ;;
    sweep)
        timeout 240 python3 benchmarks/bench_chunk_cost.py --points 4194304 --many 512 \
            --out "$OUT/chunk-cost-gpu.json" 2>&1 | tail -n 8
        timeout 240 python3 benchmarks/bench_dask_floor.py --out "$OUT/dask-floor-gpu.json" 2>&1 | tail -n 8 ;;
    esac
done
