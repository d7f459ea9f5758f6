#!/usr/bin/env bash
# The GPU benchmarks of issues 2, 3, 4, 5 and 6 in one call of the device tool (after
# benchmarks/device_run.sh's set-up has run on the machine, or standalone: it repeats it).
set -uo pipefail
source benchmarks/device_env.sh
export DASKCL_DEVICE="${DASKCL_DEVICE:-NVIDIA}"
N=$((1 << 25))
timeout 150 python3 benchmarks/bench_glm.py --cases main --no-sweep --out "$OUT/glm-gpu.json" 2>&1 | tail -4
timeout 200 python3 benchmarks/bench_nmath.py --n $N --scipy-n 262144 \
    --functions pnorm,qnorm,dbinom,log1pexp,pgamma,qgamma,pbeta,qbeta,pchisq,pf --out "$OUT/nmath-gpu.json" 2>&1 | tail -12
# issue 4 against CuPy, where CuPy has the function: pbinom/bdtr, ppois/pdtr, pnbinom/nbdtr
timeout 150 python3 benchmarks/bench_nmath.py --cases issue4 --functions pbinom,ppois,pnbinom --n $N \
    --scipy-n 262144 --out "$OUT/nmath-issue4-gpu.json" 2>&1 | tail -12
timeout 120 python3 benchmarks/bench_random.py --n $N --out "$OUT/random-gpu.json" 2>&1 | tail -12
