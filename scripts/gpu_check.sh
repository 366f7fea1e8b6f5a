#!/usr/bin/env bash
# gpu_check.sh: the check to run on the GPU machine (which has no LLVM): unpacks the static
# binaries made by scripts/build_carry.sh (.carry/bin.tar.xz), then runs the execution tests
# on the CUDA backend, the examples with --check against the CPU backend, and embed.
#   usage (from the source root): scripts/gpu_check.sh [test_exec options, e.g. --seed=N]
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f .carry/bin.tar.xz ] || { echo "gpu_check: no .carry/bin.tar.xz: run scripts/build_carry.sh first" >&2; exit 2; }
dir=$(mktemp -d)
tar -C "$dir" -xJf .carry/bin.tar.xz
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$dir/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
"$bin/tilec" --version
rc=0
echo "== execution tests on CUDA"
TILE_TUNE=off "$bin/test_exec" --backend=cuda --root="$PWD" "$@" || rc=1   # correctness: default consts
echo "== examples, checked against the CPU backend"
for k in add.tile:add softmax.tile:softmax layernorm.tile:layernorm matmul.tile:matmul \
         matmul.tile:matmul_f16 flash_attention.tile:flash_attention; do
    "$bin/tilec" run "examples/$k" --backend=cuda --check --reps=20 batch=2 heads=8 seq=512 \
        M=512 N=512 K=512 || rc=1
done
echo "== embed"
"$bin/embed" --backend=cuda examples/softmax.tile || rc=1
exit $rc
