#!/usr/bin/env bash
# fuzz.sh: builds tests/fuzz_frontend.c with libFuzzer + ASan + UBSan (clang-22) and runs it
# for SECONDS (default 60) from the seeds in tests/fuzz_corpus. Crashes are left in
# build-fuzz/crash-*. Needs a configured build/ for the generated lexer and parser.
#   usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[ -f build/gen/parser.c ] || BUILD_DIR=build scripts/build.sh
mkdir -p build-fuzz/corpus
clang-22 -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Ilang -Ibuild/gen tests/fuzz_frontend.c lang/*.c build/gen/parser.c build/gen/lexer.c \
    -o build-fuzz/fuzz_frontend
cd build-fuzz
./fuzz_frontend -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    corpus ../tests/fuzz_corpus ../tests/parse ../tests/diag ../examples 2>&1 | tail -15
