#!/usr/bin/env bash
# run_example.sh: the main job. Installs the dependencies, builds, then runs the example
# kernels on the best device (CUDA when a GPU is found, else the CPU backend) through
# `tilec run`, and the C embedding example: what each computed and how long it took.
#   usage: scripts/run_example.sh [--backend=auto|cpu|cuda] [--no-setup]
set -euo pipefail
cd "$(dirname "$0")/.."
backend=auto setup=1
for a in "$@"; do
    case $a in
    --backend=*) backend=${a#--backend=} ;;
    --no-setup) setup=0 ;;
    *) echo "usage: scripts/run_example.sh [--backend=auto|cpu|cuda] [--no-setup]" >&2; exit 2 ;;
    esac
done
[ $setup -eq 1 ] && scripts/setup.sh
BUILD_DIR=build scripts/build.sh >/dev/null
tilec=build/tilec

echo "== the kernels of examples/add.tile:"
"$tilec" list examples/add.tile
echo
# sizes come from the `// run:` lines of each example; --check compares with the CPU backend
"$tilec" run examples/add.tile:add --backend="$backend" n=10000000 --check
echo
"$tilec" run examples/softmax.tile:softmax --backend="$backend" --check
echo
"$tilec" run examples/layernorm.tile:layernorm --backend="$backend" --check
echo
"$tilec" run examples/matmul.tile:matmul --backend="$backend" M=512 N=512 K=512 --reps=5 --check
echo
"$tilec" run examples/flash_attention.tile:flash_attention --backend="$backend" \
    batch=1 heads=4 seq=512 --reps=5 --check
echo
echo "== examples/embed.c: a C program embedding libtile"
build/examples/embed --backend="$backend"
