#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets with ASan + UBSan (clang-22) and runs both at once, each
# for SECONDS (default 60), from the seeds in tests/fuzz_corpus and the examples:
#   fuzz_frontend (tests/fuzz_frontend.c): lexer, parser, sema, dumps;
#   fuzz_compile (tests/fuzz_compile.c): also const resolution, specialization to tile IR,
#   verification and every pass after it for sm_90, sim and the host.
# Each one's output is build-fuzz/fuzz_NAME.log (its last lines are printed); crashes are left
# in build-fuzz/crash-*. Needs a configured build/ for the generated lexer
# and parser. With --runs N (CI) each target runs N inputs from a fixed seed instead, starting
# from an empty working corpus: the same inputs every time, so CI never fails on a crash
# that a random run happened to reach; exploring (timed, random) is for development.
#   usage: scripts/fuzz.sh [SECONDS] | scripts/fuzz.sh --runs N
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time="${1:-60}")
if [ "${1:-}" = --runs ]; then
    limit=(-runs="$2" -seed=1)
    rm -rf build-fuzz/corpus-frontend build-fuzz/corpus-compile
fi
[ -f build/gen/parser.c ] || BUILD_DIR=build scripts/build.sh
mkdir -p build-fuzz/corpus-frontend build-fuzz/corpus-compile
flags=(-std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -fno-sanitize=function -Ilang -Icompiler -Ibuild/gen)
gen=(build/gen/parser.c build/gen/lexer.c)
# the two targets build, then run, side by side (CI has 2 cores)
clang-22 "${flags[@]}" tests/fuzz_frontend.c lang/*.c "${gen[@]}" -o build-fuzz/fuzz_frontend &
frontend=$!
llvm_inc=$(llvm-config-22 --includedir)
llvm_lib=$(llvm-config-22 --libdir)
compiler=$(ls compiler/*.c)
clang-22 "${flags[@]}" -I"$llvm_inc" tests/fuzz_compile.c lang/*.c $compiler "${gen[@]}" \
    -L"$llvm_lib" -Wl,-rpath,"$llvm_lib" -lLLVM-22 -lm -o build-fuzz/fuzz_compile
wait $frontend
cd build-fuzz
run() {
    ./fuzz_$1 "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        corpus-$1 ../tests/fuzz_corpus ../tests/parse ../tests/diag ../examples > fuzz_$1.log 2>&1
}
run frontend &
frontend=$!
run compile &
compile=$!
status=0
wait $frontend || status=1
echo "== fuzz_frontend ${limit[*]}"
tail -6 fuzz_frontend.log
wait $compile || status=1
echo "== fuzz_compile ${limit[*]}"
tail -6 fuzz_compile.log
exit $status
