#!/usr/bin/env bash
# gpu_bench.sh: the tensor-core benchmark, to run on the GPU machine (which has no LLVM):
# unpacks the static binaries made by scripts/build_carry.sh (.carry/bin.tar.xz) and runs
# bench/tensor_cores.py with the carried tilec beside cuBLAS and PyTorch SDPA. When $OUT is set
# (the device tool's output folder), the table, CSV, tilec logs, tuning cache and plot go there.
# Starts no row after 480 s (--max-seconds; the device tool stops a command at 600 s).
#   usage (from the source root): scripts/gpu_bench.sh [tensor_cores.py options, e.g. --quick]
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f .carry/bin.tar.xz ] || { echo "gpu_bench: no .carry/bin.tar.xz: run scripts/build_carry.sh first" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tar -C "$dir" -xJf .carry/bin.tar.xz
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
args=(--max-seconds 480)
[ -n "${OUT:-}" ] && args+=(--out "$OUT")
python3 bench/tensor_cores.py "$dir/bin/tilec" "${args[@]}" "$@"
