#!/bin/sh
# ptxas_check.sh: the PTX of every kernel of every example (and of the tensor-core,
# integer-division, float-to-integer cast, atomics, fp8, shape-op, print/device_assert, barrier,
# porting, tuple-reduce, block-pointer, cache-hint, Triton-builtin and Triton-form tests) assembles with ptxas for sm_80 and sm_90, as emitted and as a launch
# with 16-byte aligned arguments specializes it (and for sm_90a, Hopper's wgmma, aligned), and uses
# no local memory: no stack frame, no spills. The 16-bit matmul and attention kernels must use
# the tensor cores: mma.sync, ldmatrix and (aligned) cp.async must appear; for sm_90a,
# wgmma.mma_async and cp.async; the attention kernels' copies must take immediate offsets from a
# shared address register ([%rd+imm]). Without FILE arguments, also the configurations the tuner chose
# on an H100 that must stay free of local memory for sm_90a (aligned, wgmma) and, with sm_80
# code, for sm_80 (aligned, mma.sync; session 34's spill-free picks): tuned_configs below.
# Skips (exit 77) without ptxas.
# usage: tests/ptxas_check.sh TILEC [FILE.tile...]   (from the source root)
tilec=${1:?usage: ptxas_check.sh TILEC [FILE...]}
shift
tuned=0
[ $# -gt 0 ] || tuned=1
[ $# -gt 0 ] || set -- examples/*.tile tests/exec/mma.tile tests/exec/intdiv.tile tests/exec/fcast.tile \
    tests/exec/atomics.tile tests/exec/fp8.tile tests/exec/shapes.tile tests/exec/debug.tile \
    tests/exec/barrier.tile tests/exec/porting.tile tests/exec/tuple_reduce.tile \
    tests/exec/block_ptr.tile tests/exec/hints.tile \
    tests/exec/triton_ops.tile tests/exec/triton_forms.tile
ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null || true)
if [ -z "$ptxas" ]; then
    echo "skipped: ptxas not found (install the CUDA toolkit or put ptxas on PATH)"
    exit 77
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for f in "$@"; do
    for k in $("$tilec" list "$f" | sed 's/(.*//'); do
        for variant in sm_80 sm_90 sm_80:aligned sm_90:aligned sm_90a:aligned; do
            arch=${variant%%:*}
            flags=
            [ "$variant" = "$arch" ] || flags=--assume-aligned
            n=$((n + 1))
            what="$f:$k $variant"
            if ! "$tilec" emit --emit=ptx --target=$arch $flags --kernel="$k" "$f" >"$tmp/k.ptx" 2>"$tmp/err"; then
                echo "FAIL $what: tilec emit failed"
                sed 's/^/    /' "$tmp/err" | head -10
                fail=$((fail + 1))
                continue
            fi
            if ! "$ptxas" -arch=$arch -v "$tmp/k.ptx" -o "$tmp/k.cubin" >"$tmp/log" 2>&1; then
                echo "FAIL $what: ptxas failed"
                sed 's/^/    /' "$tmp/log" | head -10
                fail=$((fail + 1))
                continue
            fi
            usage=$(grep -E "registers|stack frame|spill" "$tmp/log" | tr -s ' \n' ' ')
            missing=
            insns="mma.sync ldmatrix cp.async"
            [ "$arch" = sm_90a ] && insns="wgmma.mma_async cp.async"
            case "$k:$flags" in
            matmul_f16:--assume-aligned|matmul_bf16:--assume-aligned|flash_attention:--assume-aligned|flash_attention_bf16:--assume-aligned)
                for insn in $insns; do
                    grep -q "$insn" "$tmp/k.ptx" || missing="$missing $insn"
                done ;;
            esac
            # the K and V copies of one key block share an address register per operand:
            # constant parts of 32-bit offsets are immediates (lower_elementwise.c)
            case "$k:$flags" in
            flash_attention:--assume-aligned|flash_attention_bf16:--assume-aligned)
                grep -Eq 'cp.async.cg.shared.global \[[^]]*\], \[%rd[0-9]+\+[0-9]+\]' "$tmp/k.ptx" ||
                    missing="$missing cp.async-with-immediate-offsets" ;;
            esac
            if [ -n "$missing" ]; then
                echo "FAIL $what: no$missing (tensor cores expected)"
                fail=$((fail + 1))
                continue
            fi
            # libdevice's tan (porting.tile's libm kernels) reduces huge arguments (Payne-Hanek)
            # over an array in local memory: a stack frame of its own, never spills
            local_mem="[1-9][0-9]* bytes stack frame|[1-9][0-9]* bytes spill"
            case "$f:$k" in
            tests/exec/porting.tile:libm*) local_mem="[1-9][0-9]* bytes spill|[0-9]{3,} bytes stack frame" ;;
            esac
            if grep -Eq "$local_mem" "$tmp/log"; then
                echo "FAIL $what: local memory: $usage"
                fail=$((fail + 1))
            else
                echo "ok   $what: $usage"
            fi
        done
    done
done
# FILE KERNEL CONSTS...: configurations of the kinds the tuner chose on an H100 (docs/performance.md,
# 2026-11-26) that local ptxas also assembles without local memory; 128x256 matmul tiles need
# the register check to leave wgmma's shared-memory operands out.
tuned_configs() {
    cat <<'LIST'
sm_90a examples/matmul.tile matmul_f16 -DBLOCK_M=128 -DBLOCK_N=256 -DBLOCK_K=64 -Dnum_warps=8 -Dnum_stages=3
sm_90a examples/matmul.tile matmul_bf16 -DBLOCK_M=256 -DBLOCK_N=128 -DBLOCK_K=64 -Dnum_warps=8 -Dnum_stages=3
sm_90a examples/flash_attention.tile flash_attention -DHEAD_DIM=128 -DBLOCK_M=128 -DBLOCK_N=128 -DCAUSAL=true -Dnum_warps=8 -Dnum_stages=2
sm_90a examples/flash_attention.tile flash_attention_bf16 -DHEAD_DIM=128 -DBLOCK_M=128 -DBLOCK_N=128 -Dnum_warps=8 -Dnum_stages=2
sm_90a stdlib/attention/flash_fwd.tile flash_fwd -DHEAD_DIM=128 -DBLOCK_M=128 -DBLOCK_N=128 -DCAUSAL=true -Dnum_warps=8 -Dnum_stages=2
sm_80 examples/flash_attention.tile flash_attention -DHEAD_DIM=128 -DBLOCK_M=128 -DBLOCK_N=32 -Dnum_warps=4 -Dnum_stages=3
sm_80 examples/flash_attention.tile flash_attention -DHEAD_DIM=128 -DBLOCK_M=128 -DBLOCK_N=32 -DCAUSAL=true -Dnum_warps=4 -Dnum_stages=3
sm_80 examples/flash_attention.tile flash_attention -DHEAD_DIM=128 -DBLOCK_M=64 -DBLOCK_N=64 -DCAUSAL=true -Dnum_warps=4 -Dnum_stages=2
sm_80 examples/flash_attention.tile flash_attention -DHEAD_DIM=64 -DBLOCK_M=128 -DBLOCK_N=64 -Dnum_warps=4 -Dnum_stages=3
sm_80 examples/flash_attention.tile flash_attention -DHEAD_DIM=64 -DBLOCK_M=128 -DBLOCK_N=64 -DCAUSAL=true -Dnum_warps=4 -Dnum_stages=2
sm_80 examples/flash_attention.tile flash_attention -DHEAD_DIM=64 -DBLOCK_M=128 -DBLOCK_N=64 -DCAUSAL=true -Dnum_warps=4 -Dnum_stages=3
LIST
}
if [ $tuned -eq 1 ]; then
    while read -r arch f k consts; do
        n=$((n + 1))
        what="$f:$k $consts $arch:aligned"
        # shellcheck disable=SC2086
        if ! "$tilec" emit --emit=ptx --target=$arch --assume-aligned --kernel="$k" $consts "$f" \
                >"$tmp/k.ptx" 2>"$tmp/err" ||
            ! "$ptxas" -arch=$arch -v "$tmp/k.ptx" -o "$tmp/k.cubin" >"$tmp/log" 2>&1; then
            echo "FAIL $what: does not compile"
            sed 's/^/    /' "$tmp/err" "$tmp/log" 2>/dev/null | head -10
            fail=$((fail + 1))
            continue
        fi
        usage=$(grep -E "registers|stack frame|spill" "$tmp/log" | tr -s ' \n' ' ')
        tc=wgmma.mma_async
        [ "$arch" = sm_90a ] || tc=mma.sync
        if ! grep -q "$tc" "$tmp/k.ptx"; then
            echo "FAIL $what: no $tc"
            fail=$((fail + 1))
        elif grep -Eq "[1-9][0-9]* bytes stack frame|[1-9][0-9]* bytes spill" "$tmp/log"; then
            echo "FAIL $what: local memory: $usage"
            fail=$((fail + 1))
        else
            echo "ok   $what: $usage"
        fi
    done <<EOF2
$(tuned_configs)
EOF2
fi
echo "$((n - fail))/$n passed"
[ $fail -eq 0 ]
