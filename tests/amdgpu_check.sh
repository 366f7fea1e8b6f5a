#!/bin/sh
# amdgpu_check.sh: every kernel of every example, of the attention stdlib and of the exec
# tests' matrix files compiles for AMD GPUs (gfx90a, gfx942, gfx950 with wave64; gfx1100 with
# wave32) into a code object linked by ld.lld, whose metadata (llvm-readobj --notes) names the
# kernel with its argument layout and wavefront size, whose symbols hold the kernel
# descriptor (NAME.kd), and (for the examples, on the wave64 targets the tuner will time)
# that uses no scratch memory: no spills. On the wave64 (CDNA) targets, the kernels whose dots
# are f16 or bf16 must use MFMA (llvm-objdump shows v_mfma). The f64 math kernels (exp ... pow,
# computed by the kernel) leave no symbol undefined: nothing waits for a device library.
# Nothing runs: no AMD GPU is reachable. Skips (exit 77) without ld.lld or llvm-readobj.
# usage: tests/amdgpu_check.sh TILEC   (from the source root)
tilec=${1:?usage: amdgpu_check.sh TILEC}
readobj=$(command -v llvm-readobj-22 || command -v llvm-readobj || ls /usr/lib/llvm-22/bin/llvm-readobj 2>/dev/null || true)
objdump=$(command -v llvm-objdump-22 || command -v llvm-objdump || ls /usr/lib/llvm-22/bin/llvm-objdump 2>/dev/null || true)
lld=$(command -v ld.lld-22 || command -v ld.lld || ls /usr/lib/llvm-22/bin/ld.lld 2>/dev/null || true)
if [ -z "$readobj" ] || [ -z "$objdump" ] || [ -z "$lld" ]; then
    echo "skipped: llvm-readobj, llvm-objdump or ld.lld not found (Debian: llvm-22 and lld-22)"
    exit 77
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
# FILE KERNEL TARGET SCRATCH_OK [-D ...]: one code object, checked
check() {
    f=$1 k=$2 t=$3 scratch_ok=$4
    shift 4
    n=$((n + 1))
    what="$f:$k $t"
    if ! "$tilec" emit --emit=hsaco --target="$t" --kernel="$k" "$@" "$f" -o "$tmp/k.hsaco" 2>"$tmp/err"; then
        echo "FAIL $what: tilec emit failed"
        sed 's/^/    /' "$tmp/err" | head -10
        fail=$((fail + 1))
        return
    fi
    "$readobj" --notes --symbols "$tmp/k.hsaco" >"$tmp/meta" 2>&1
    waves=64
    case $t in gfx1*) waves=32 ;; esac
    problem=
    grep -q "\.name: *$k" "$tmp/meta" || problem="no kernel named $k in the metadata"
    grep -q "Name: $k.*\.kd" "$tmp/meta" || problem="$problem; no kernel descriptor symbol"
    grep -q "\.kernarg_segment_size:" "$tmp/meta" || problem="$problem; no argument layout"
    grep -q "\.wavefront_size: *$waves" "$tmp/meta" || problem="$problem; not wave$waves"
    if [ "$scratch_ok" = no ] && ! grep -q "\.private_segment_fixed_size: *0$" "$tmp/meta"; then
        problem="$problem; uses scratch memory ($(grep private_segment "$tmp/meta" | tr -s ' '))"
    fi
    case $t:$k in
    gfx9*:matmul_f16|gfx9*:matmul_bf16|gfx9*:flash_attention|gfx9*:flash_attention_bf16|\
    gfx9*:mm_f16|gfx9*:mm_bf16|gfx9*:chain_bf16|gfx9*:flash_fwd*|gfx9*:decode|gfx9*:paged)
        "$objdump" -d "$tmp/k.hsaco" | grep -q "v_mfma_f32_" || problem="$problem; no v_mfma"
        ;;
    esac
    if [ -n "$problem" ]; then
        echo "FAIL $what: ${problem#; }"
        fail=$((fail + 1))
    fi
}
for t in gfx90a gfx942 gfx950 gfx1100; do
    for f in examples/*.tile tests/exec/mma.tile tests/exec/reduce.tile tests/exec/dot.tile tests/exec/block_ptr.tile tests/exec/hints.tile tests/exec/triton_ops.tile; do
        scratch=no
        case $f:$t in tests/*|*:gfx1*) scratch=yes ;; esac
        for k in $("$tilec" list "$f" | sed 's/(.*//'); do
            check "$f" "$k" "$t" $scratch
        done
    done
    check stdlib/attention/flash_fwd.tile flash_fwd "$t" yes -D HEAD_DIM=64 -D CAUSAL=true
    check stdlib/attention/flash_fwd.tile flash_fwd_bf16 "$t" yes -D HEAD_DIM=128 -D CAUSAL=false \
        -D BLOCK_M=64 -D BLOCK_N=32
    check stdlib/attention/decode.tile decode "$t" yes -D GROUP=4
    check stdlib/attention/decode.tile decode_combine "$t" yes
    check stdlib/attention/paged.tile paged "$t" yes -D HEAD_DIM=128 -D GROUP=4 -D PAGE=16 -D SPLIT=true
done
# without the linker: a clear error, and assembly still comes out
n=$((n + 1))
if TILE_LLD=/nonexistent/ld.lld "$tilec" emit --emit=hsaco examples/add.tile -o "$tmp/k.hsaco" 2>"$tmp/err" ||
    ! grep -q "needs LLVM's linker ld.lld" "$tmp/err" ||
    ! TILE_LLD=/nonexistent/ld.lld "$tilec" emit --emit=amdgcn examples/add.tile -o "$tmp/k.s"; then
    echo "FAIL: a missing ld.lld is not reported as such"; cat "$tmp/err"
    fail=$((fail + 1))
fi
# FILE KERNEL TARGET [-D ...]: check's code object, with no scratch and no undefined symbol
check_self_contained() {
    f=$1 k=$2 t=$3
    shift 3
    before=$fail
    check "$f" "$k" "$t" no "$@"
    [ $fail -ne $before ] && return
    undefined=$("$readobj" --symbols --dyn-symbols "$tmp/k.hsaco" |
        awk '/Name:/ { name = $2 } /Section: Undefined/ && name != "(0)" { print name }' | sort -u)
    if [ -n "$undefined" ]; then
        echo "FAIL $f:$k $t $*: undefined symbols:" $undefined
        fail=$((fail + 1))
    fi
}
# f64 exp, log, sin, cos, tanh, erf and pow, f32 and f64 log1p and expm1, tan ... copysign: computed by the
# kernel itself (no device library)
for t in gfx90a gfx942; do
    for fn in 0 2 7 8 12 13; do
        check_self_contained tests/exec/elementwise.tile math_f64 $t -D FN=$fn
    done
    check_self_contained tests/exec/elementwise.tile pow_f64 $t
    for fn in 2 3; do # log1p, expm1
        check_self_contained tests/exec/porting.tile math1_f64 $t -D FN=$fn
        check_self_contained tests/exec/porting.tile math1 $t -D FN=$fn
    done
    # tan, atan, asin, acos, sinh, cosh, log10, atan2, hypot, copysign, asinh, acosh, atanh,
    # cbrt, exp10, erfinv (f32 through f64), fmod and % (LLVM's exact frem expansion)
    for k in libm libm_f64 libm2 libm2_f64; do
        check_self_contained tests/exec/porting.tile $k $t
    done
done
# f32 tanh, erf and pow: computed by the kernel itself (no device library), on CDNA and RDNA
for t in gfx942 gfx1100; do
    check tests/exec/elementwise.tile math_f32 $t yes -D FN=12
    check tests/exec/elementwise.tile math_f32 $t yes -D FN=13
    check tests/exec/elementwise.tile pow_f32 $t yes
    check tests/exec/porting.tile libm $t yes
    check tests/exec/porting.tile libm2 $t yes
done
# AMD's tuning knobs, as consts a kernel declares: the MFMA size it asks for, and
# waves_per_eu (an occupancy floor: amdgpu-waves-per-eu caps the registers)
cat >"$tmp/knobs.tile" <<'TILE'
@tune(mfma_size = [16, 32], waves_per_eu = [0, 2])
kernel mm(a: *f16, b: *f16, c: *f32, const mfma_size: i32 = 0, const waves_per_eu: i32 = 0) {
    let r = arange(0, 64);
    let x = load(a + r[:, None] * 64 + r[None, :]);
    let y = load(b + r[:, None] * 64 + r[None, :]);
    store(c + r[:, None] * 64 + r[None, :], dot(x, y));
}
TILE
for want in 16x16x16 32x32x8; do
    n=$((n + 1))
    size=${want%%x*}
    "$tilec" emit --emit=amdgcn --target=gfx942 "$tmp/knobs.tile" -D num_warps=4 -D mfma_size=$size -o "$tmp/k.s" 2>"$tmp/err"
    if ! grep -q "v_mfma_f32_${want}" "$tmp/k.s" || grep -v "v_mfma_f32_${want}" "$tmp/k.s" | grep -q "v_mfma"; then
        echo "FAIL: mfma_size=$size does not give only v_mfma_f32_$want"; cat "$tmp/err"
        fail=$((fail + 1))
    fi
done
n=$((n + 1))
"$tilec" emit --emit=llvm --target=gfx942 "$tmp/knobs.tile" -D waves_per_eu=2 -o "$tmp/k.ll" 2>"$tmp/err"
if ! grep -q '"amdgpu-waves-per-eu"="2"' "$tmp/k.ll"; then
    echo "FAIL: waves_per_eu=2 does not reach the AMD kernel"; cat "$tmp/err"
    fail=$((fail + 1))
fi
n=$((n + 1))
if ! "$tilec" emit --emit=ptx "$tmp/knobs.tile" -D waves_per_eu=2 -D mfma_size=32 -o "$tmp/k.ptx" 2>"$tmp/err" ||
    grep -q "waves" "$tmp/k.ptx"; then
    echo "FAIL: the AMD knobs are not ignored on NVIDIA"; cat "$tmp/err"
    fail=$((fail + 1))
fi
echo "$((n - fail))/$n AMDGPU code objects pass"
[ $fail -eq 0 ]
