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
# the binaries' built-in standard library path is the build machine's: use this checkout's
export TILE_PATH="$PWD/stdlib${TILE_PATH:+:$TILE_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
"$bin/tilec" --version
rc=0
echo "== execution tests on CUDA"
TILE_TUNE=off "$bin/test_exec" --backend=cuda --root="$PWD" "$@" || rc=1   # correctness: default consts
echo "== examples, checked against the CPU backend"
run_example() { # FILE:KERNEL then its sizes (tilec run refuses names a kernel does not have)
    "$bin/tilec" run "examples/$1" --backend=cuda --check --reps=20 "${@:2}" || rc=1
}
run_example add.tile:add n=1000003
run_example softmax.tile:softmax
run_example layernorm.tile:layernorm
run_example matmul.tile:matmul M=512 N=512 K=512
run_example matmul.tile:matmul_f16 M=512 N=512 K=512
run_example flash_attention.tile:flash_attention batch=2 heads=8 seq=512
run_example dropout.tile:dropout n=1000003 p=0.25 seed=7
run_example int4_gemv.tile:int4_gemv M=1000 K=4096 w=1000*2048 scale=1000 x=4096 y=1000
run_example quant_matmul.tile:matmul_w8 M=300 N=520 K=1024 a=M*K w=K*N scales=8*N c=M*N
run_example quant_matmul.tile:matmul_w4 M=300 N=520 K=1024 a=M*K w=N*K/2 scales=8*N c=M*N
run_example ../stdlib/attention/flash_fwd.tile:flash_fwd batch=2 heads=8 kv_heads=2 seq_q=300 seq_k=300 \
    q_sb=heads*seq_q*64 q_sh=seq_q*64 q_ss=64 k_sb=kv_heads*seq_k*64 k_sh=seq_k*64 k_ss=64 \
    v_sb=k_sb v_sh=k_sh v_ss=64 o_sb=q_sb o_sh=q_sh o_ss=64 scale=0.125 window=0 softcap=0 \
    q=batch*q_sb k=batch*k_sb v=batch*k_sb o=batch*q_sb lse=1 -D CAUSAL=true
echo "== launches on a caller's stream and in a CUDA graph; borrowed memory"
"$bin/test_stream" cuda || rc=1
"$bin/test_stream" two_contexts || rc=1
r=0; "$bin/test_stream" two_devices || r=$?; [ $r -eq 0 ] || [ $r -eq 77 ] || rc=1   # 77: one GPU
"$bin/test_stream" borrow || rc=1
echo "== tuning in worker processes: a faulting configuration, the inputs shared or copied"
for t in gpu_fault gpu_inputs gpu_inputs_copied; do
    TILE_TUNE_WORKER="$bin/tilec" "$bin/test_isolate" $t || rc=1
done
echo "== the Python package on PyTorch tensors (streams, CUDA graphs; then torch's allocator"
echo "   mapping its memory in expandable segments, which tile_borrow's checks must take)"
for conf in "" expandable_segments:True; do
    PYTORCH_CUDA_ALLOC_CONF=$conf TILE_LIBRARY="$dir/lib/libtile.so.0" \
        python3 tests/python/test_torch.py "$PWD"
    prc=$?
    [ $prc -eq 0 ] || [ $prc -eq 77 ] || rc=1
done
echo "== embed and paged_attention"
"$bin/embed" --backend=cuda examples/softmax.tile || rc=1
"$bin/paged_attention" --backend=cuda || rc=1
exit $rc
