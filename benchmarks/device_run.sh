#!/usr/bin/env bash
# Run the test suite and the benchmarks on a lent NVIDIA GPU machine (the device tool), from the
# repository root, with the carried folders .whl (pyopencl, dask, zarr wheels for the machine's
# Python) and .deb (Debian's r-mathlib, the oracle).  Usage:
#   bash benchmarks/device_run.sh [tests|bench|all] [extra pytest args...]
# Logs and JSON results go to $OUT (or ./device-out).  DASKCL_TESTS_LIMIT: seconds for the whole
# pytest run (480); DASKCL_TEST_TIMEOUT: for one test (300; qbeta's agreement cases take 200-500 s
# on an H200, where R's bpser runs its 10^7 terms on one GPU thread).
set -uo pipefail
what="${1:-all}"; shift || true
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m daskcl devices | tee -a "$OUT/gpu.txt"
rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
    # DASKCL_DEVICE stays unset for the tests (some test that variable; NVIDIA's is the only
    # platform here); the CLI tests run `daskcl`, which the carried wheels do not install
    mkdir -p /tmp/site/bin
    printf '#!/bin/sh\nexec python3 -m daskcl "$@"\n' > /tmp/site/bin/daskcl
    chmod +x /tmp/site/bin/daskcl
    export PATH="/tmp/site/bin:$PATH"
    jobs=$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))
    # every program built first, in parallel (NVIDIA builds one program of a process at a time;
    # DASKCL_TESTS_WARM=0 leaves them to the tests; not DASKCL_WARM, the config key worker.warm
    # that the tests' workers read); DASKCL_WARM_CPU=1 also warms a CPU device's
    # (PoCL's, which the cross-device tests compare the GPU with) at the same time
    cpu=$(python3 -m daskcl devices | awk '$2 == "CPU" {print $1; exit}')
    if [ -n "$cpu" ] && [ "${DASKCL_WARM_CPU:-0}" = 1 ]; then
        DASKCL_DEVICE="$cpu" python3 -m daskcl cache warm --all --glm --jobs "$jobs" \
            > "$OUT/warm-cpu.log" 2>&1 &
    fi
    if [ "${DASKCL_TESTS_WARM:-1}" = 1 ]; then
        python3 -m daskcl cache warm --all --glm --jobs "$jobs" > "$OUT/warm.log" 2>&1
        tail -n 1 "$OUT/warm.log"
    fi
    wait
    [ -f "$OUT/warm-cpu.log" ] && tail -n 1 "$OUT/warm-cpu.log"
    [ $# -gt 0 ] || set -- tests
    # what needs a package the device image lacks (test extras) or the network (a wheel build
    # fetches hatchling) is left out, so that failures.log holds the run's own failures
    skip=()
    python3 -c "import numpydoc" 2>/dev/null || skip+=(--ignore=tests/nmath/test_docs.py)
    python3 -c "import dask_kubernetes" 2>/dev/null || skip+=(--ignore=tests/deploy/test_deploy_kubernetes.py)
    python3 -c "import dask_jobqueue" 2>/dev/null || skip+=(--ignore=tests/deploy/test_deploy_slurm.py
        --deselect=tests/sweep/test_cli.py::test_slurm_is_a_subcommand)
    python3 -c "import urllib.request as u; u.urlopen('https://pypi.org/simple/hatchling/', timeout=5)" \
        2>/dev/null || skip+=(
        --deselect=tests/project/test_packaging.py::test_wheel_contains_the_kernel_library
        --deselect=tests/deploy/test_deploy_container.py::test_dockerfile_steps_install_daskcl_and_register_the_nvidia_icd)
    [ ${#skip[@]} -eq 0 ] || echo "left out (missing here): ${skip[*]}"
    # failures are written as they happen, and every finished test's id (tests/support/failure_log.py):
    # a run cut by the call's time limit still names them, and a second run given the first's
    # done.log as DASKCL_SKIP_DONE runs what it left
    : > "$OUT/failures.log"; : > "$OUT/done.log"
    DASKCL_FAILURE_LOG="$OUT/failures.log" DASKCL_DONE_LOG="$OUT/done.log" \
        PYTHONPATH="$PWD/tests:$PYTHONPATH" \
        timeout "${DASKCL_TESTS_LIMIT:-480}" python3 -m pytest -q -p no:cacheprovider -p support.failure_log \
        -p xdist -n "$jobs" -p timeout --timeout "${DASKCL_TEST_TIMEOUT:-300}" -rfE --tb=short "${skip[@]}" "$@" \
        > "$OUT/pytest.log" 2>&1
    rc=$?
    tail -n 3 "$OUT/pytest.log"
    echo "failures (rc $rc), $(wc -l < "$OUT/done.log") tests finished:"
    grep "^==== " "$OUT/failures.log" | sort | head -80
    echo "slowest:"; sort -t "$(printf '\t')" -k2 -g -r "$OUT/done.log" | head -12
fi
export DASKCL_DEVICE="${DASKCL_DEVICE:-NVIDIA}"
if [ "$what" = bench ] || [ "$what" = all ]; then
    python3 benchmarks/bench_build.py --out "$OUT/build-gpu.json" 2>&1 | tail -8
    python3 benchmarks/bench_nmath.py --n 67108864 --scipy-n 1048576 --functions pnorm,qnorm,dbinom,log1pexp --out "$OUT/nmath-gpu.json" 2>&1 | tail -8
    python3 benchmarks/bench_nmath.py --n 67108864 --scipy-n 262144 --functions pnorm,qnorm,dbinom --contract --out "$OUT/nmath-gpu-contract.json" 2>&1 | tail -5
fi
exit $rc
