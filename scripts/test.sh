#!/usr/bin/env bash
# test.sh: installs the dependencies, builds, and runs every test suite with CTest.
# With --full (or CI=true) it also builds with AddressSanitizer + UBSan and runs the suites
# again there (the execution tests in their --quick form, the ptxas and AMDGPU checks on the
# tensor-core examples), and fuzzes the front end and the compiler (25000 inputs each from a
# fixed seed: the same every run).
#   usage: scripts/test.sh [--full] [--no-setup]
set -euo pipefail
cd "$(dirname "$0")/.."
full=0 setup=1
[ "${CI:-}" = "true" ] && full=1
for a in "$@"; do
    case $a in
    --full) full=1 ;;
    --no-setup) setup=0 ;;
    *) echo "usage: scripts/test.sh [--full] [--no-setup]" >&2; exit 2 ;;
    esac
done
jobs=$(nproc 2>/dev/null || echo 2)

[ $setup -eq 1 ] && scripts/setup.sh
echo "== build (build/)"
BUILD_DIR=build scripts/build.sh
echo "== tests"
(cd build && ctest --output-on-failure -j"$jobs")

if [ $full -eq 1 ]; then
    echo "== AddressSanitizer + UBSan build (build-asan/)"
    BUILD_DIR=build-asan scripts/build.sh -DTILE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
    # the whole-tree ptxas and AMDGPU checks and the differential fuzzer ran on build/ above;
    # under the sanitizers the tensor-core examples and one AMD code object cover the same
    # code generation paths
    (cd build-asan && ctest --output-on-failure -j"$jobs" -E '^(exec_.*|ptxas|amdgpu|difffuzz)$')
    tests/ptxas_check.sh build-asan/tilec examples/flash_attention.tile examples/matmul.tile
    build-asan/tilec emit --emit=hsaco --target=gfx942 --kernel=flash_attention \
        examples/flash_attention.tile -o build-asan/flash_attention.hsaco
    # the CPU backend and the emulator (its coroutines) side by side: CI has 2 cores
    build-asan/tests/exec/test_exec --backend=cpu --quick > build-asan/exec_cpu.log 2>&1 &
    exec_cpu=$!
    build-asan/tests/exec/test_exec --backend=sim --quick --seed=1 > build-asan/exec_sim.log 2>&1 &
    exec_sim=$!
    exec_status=0
    wait $exec_cpu || exec_status=1
    cat build-asan/exec_cpu.log
    wait $exec_sim || exec_status=1
    cat build-asan/exec_sim.log
    [ $exec_status -eq 0 ]

    echo "== fuzzing"
    scripts/fuzz.sh --runs 25000 # deterministic: a fixed seed and count (CI has 20 minutes)
fi
