#!/usr/bin/env bash
# gpu_bench.sh: a benchmark beside PyTorch, to run on the GPU machine (which has no LLVM):
# unpacks the static binaries made by scripts/build_carry.sh (.carry/bin.tar.xz) and runs
# bench/tensor_cores.py (tensor cores beside cuBLAS and SDPA) or, with `attention` first,
# bench/attention.py (the stdlib attention kernels beside SDPA) with the carried tilec, or with
# `python` first, bench/pybench.py (the same kernels through the Python package, one process). When
# $OUT is set (the device tool's output folder), the table, CSV, tilec logs, tuning cache (and
# plot) go there. Starts no row after 480 s (--max-seconds; the device tool stops a command at
# 600 s).
#   usage (from the source root): scripts/gpu_bench.sh [attention] [the bench's options, e.g. --quick]
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f .carry/bin.tar.xz ] || { echo "gpu_bench: no .carry/bin.tar.xz: run scripts/build_carry.sh first" >&2; exit 2; }
bench=tensor_cores
if [ "${1:-}" = attention ] || [ "${1:-}" = python ]; then
    bench=$1
    shift
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tar -C "$dir" -xJf .carry/bin.tar.xz
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
if [ "$bench" = python ]; then # the Python package over the carried libtile.so
    TILE_LIBRARY="$dir/lib/libtile.so.0" TILE_PATH="$PWD/stdlib" \
        python3 bench/pybench.py ${OUT:+--out "$OUT"} "$@"
    exit
fi
args=(--max-seconds 480)
[ -n "${OUT:-}" ] && args+=(--out "$OUT")
python3 "bench/$bench.py" "$dir/bin/tilec" "${args[@]}" "$@"
