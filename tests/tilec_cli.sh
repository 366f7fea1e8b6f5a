#!/bin/sh
# tilec_cli.sh: tests of tilec's command line: exit codes (0 ok, 1 errors, 2 usage), --help,
# --version, check and emit of every example, run on the CPU backend (and the sim backend),
# run's data files (--load, --save), --verbose and --cold.
# usage: tests/tilec_cli.sh TILEC   (from the source root)
tilec=${1:?usage: tilec_cli.sh TILEC}
fail=0
n=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit status
expect() {
    code=$1 what=$2
    shift 3
    n=$((n + 1))
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if grep -q "Sanitizer\|runtime error:" "$tmp/err"; then # a report may exit 1, as expected
        echo "FAIL: $what: sanitizer report ($*)"
        sed 's/^/    /' "$tmp/err" | head -8
        fail=$((fail + 1))
    fi
    if [ "$rc" -ne "$code" ]; then
        echo "FAIL: $what: exit $rc, expected $code ($*)"
        sed 's/^/    /' "$tmp/err" | head -5
        fail=$((fail + 1))
    fi
}
# has PATTERN FILE DESCRIPTION: the last command's FILE (out or err) contains PATTERN
has() {
    n=$((n + 1))
    if ! grep -q -- "$1" "$tmp/$2"; then
        echo "FAIL: $3: '$1' not in std$2"
        fail=$((fail + 1))
    fi
}
# lacks PATTERN FILE DESCRIPTION: the last command's FILE does not contain PATTERN
lacks() {
    n=$((n + 1))
    if grep -q -- "$1" "$tmp/$2"; then
        echo "FAIL: $3: '$1' in std$2"
        fail=$((fail + 1))
    fi
}

printf 'kernel k(x: *f32) {\n    let y = undefined_name;\n}\n' >"$tmp/bad.tile"
printf 'kernel k(x: *f32, n: i32) {\n    store(x + arange(0, 4), zeros([8], f32));\n}\n' >"$tmp/shape.tile"

expect 0 "--help" -- "$tilec" --help
has "usage: tilec" out "--help"
expect 0 "--version" -- "$tilec" --version
has "LLVM" out "--version"
expect 2 "no arguments" -- "$tilec"
has "tilec --help" err "usage hint"
expect 2 "unknown command" -- "$tilec" frobnicate x.tile
expect 2 "unknown option" -- "$tilec" check --frobnicate examples/add.tile
expect 2 "check without a file" -- "$tilec" check
expect 2 "bad -D" -- "$tilec" check -D BLOCK examples/add.tile
expect 2 "unknown --emit" -- "$tilec" emit --emit=nonsense examples/add.tile
expect 2 "unknown --dump-after" -- "$tilec" emit --emit=tir --dump-after=layouts examples/add.tile
expect 0 "--dump-after a pass" -- "$tilec" emit --emit=tir --dump-after=smem-alloc -o /dev/null examples/add.tile
printf 'kernel k(x: *f32, n: i32) {\n    store(x, n as f32);\n}\n' >"$tmp/scalar.tile"
expect 2 "run: bad backend" -- "$tilec" run examples/add.tile:add --backend=nonsense
expect 2 "run: no value for a scalar" -- "$tilec" run "$tmp/scalar.tile:k" --backend=cpu
has "n=VALUE" err "hint for a missing scalar"
expect 0 "run: scalar given" -- "$tilec" run "$tmp/scalar.tile:k" --backend=cpu n=3 x=1 --reps=2
has "x = \[3\]" out "scalar store result"
printf 'kernel k(x: *f32, const B: i32 = 8) {\n    static_print("B is", B);\n    store(x + arange(0, B), 1.0);\n}\n' >"$tmp/sprint.tile"
expect 0 "check: static_print" -- "$tilec" check "$tmp/sprint.tile"
has "sprint.tile:2:5: note: static_print: B is 8" err "static_print's note in check"
expect 0 "run: static_print" -- env TILE_CACHE_DIR="$tmp/sprint" "$tilec" run "$tmp/sprint.tile:k" --backend=cpu -D B=16
has "note: static_print: B is 16" err "static_print's note when run compiles"
lacks "warning" err "static_print's note is no warning"
expect 0 "run: static_print, code from the disk cache" -- env TILE_CACHE_DIR="$tmp/sprint" "$tilec" run "$tmp/sprint.tile:k" --backend=cpu -D B=16
lacks "static_print" err "no note without a compile"
expect 1 "emit: a batch of products every warp holds" -- "$tilec" emit --emit=ptx --target=sm_90a \
    tests/exec/mma.tile --kernel=mm_batched -D BB=64 -D BM=16 -D BN=8 -D BK=16 -D num_warps=4
has "more warps would not help" err "register hint for a layout with copies"
expect 1 "emit: a tile too large for 4 warps" -- "$tilec" emit --emit=ptx --target=sm_90a \
    tests/exec/mma.tile --kernel=mm_batched -D BB=8 -D BM=64 -D BN=64 -D BK=16 -D num_warps=4
has "use more warps or smaller blocks" err "register hint for a layout without copies"
printf 'kernel k(x: *f32, a: f32, b: f32) {\n    store(x + arange(0, 4), where(arange(0, 4) < 2, a, b));\n}\n' >"$tmp/nonfinite.tile"
expect 0 "run: inf and nan as float arguments" -- "$tilec" run "$tmp/nonfinite.tile:k" --backend=cpu a=-inf b=nan x=4
has "x = \[-inf, -inf, nan, nan\]" out "non-finite float arguments"
expect 2 "run: arithmetic that overflows to inf" -- "$tilec" run "$tmp/nonfinite.tile:k" --backend=cpu a=inf*2 b=1 x=4
expect 1 "missing file" -- "$tilec" check "$tmp/does-not-exist.tile"
expect 1 "undefined name" -- "$tilec" check "$tmp/bad.tile"
has "bad.tile:2:13: error" err "diagnostic location"
expect 1 "shape error found by specialization" -- "$tilec" check "$tmp/shape.tile"
expect 1 "no such kernel" -- "$tilec" emit --kernel=nope examples/add.tile
# --kernel=NAME: another kernel's errors (body, annotations, a redefinition) are not its own
printf 'fn helper(x) {\n    return x + 1.0;\n}\n\n@tune(NOPE = [1, 2])\nkernel a(x: *f32) {\n    store(x, load(x) + missing);\n}\n\nkernel b(x: *f32) {\n    store(x, helper(load(x)));\n}\n\nkernel a(y: *f32) {\n    store(y, 1.0);\n}\n' >"$tmp/two.tile"
expect 1 "--kernel: every kernel" -- "$tilec" check "$tmp/two.tile"
has "missing" err "the bad kernel's error"
has "NOPE" err "the bad kernel's annotation"
# a neighbour's errors are left out, counted in one note; the file still does not load
expect 1 "--kernel: a good kernel beside a bad one" -- "$tilec" check --kernel=b "$tmp/two.tile"
lacks "missing" err "no neighbour's diagnostic"
lacks "NOPE" err "no neighbour's annotation"
has "note: 3 errors in other kernels of the file left out (--kernel=b)" err "the neighbours' errors counted"
expect 1 "--kernel: emit beside a bad one" -- "$tilec" emit --emit=tir --kernel=b "$tmp/two.tile"
has "kernel @b" out "b emitted all the same"
expect 1 "--kernel: the bad kernel" -- "$tilec" check --kernel=a "$tmp/two.tile"
has "two.tile:7:" err "its body's error"
has "redefinition of 'a'" err "and the redefinition"
printf 'fn helper(x) {\n    return x + missing;\n}\n\nkernel a(x: *f32) {\n    store(x, 1.0);\n}\n\nkernel b(x: *f32) {\n    store(x, helper(load(x)));\n}\n' >"$tmp/helper.tile"
expect 1 "--kernel: a helper's error stays" -- "$tilec" check --kernel=b "$tmp/helper.tile"
has "helper.tile:2:" err "the helper's error"
printf '@types(T = [f16, bf16])\nkernel k(x: *T) {\n    store(x, load(x) + missing);\n}\n\nkernel other(x: *f32) {\n    store(x, 1.0);\n}\n' >"$tmp/types.tile"
expect 1 "--kernel: each @types instance has the error" -- "$tilec" check --kernel=k_bf16 "$tmp/types.tile"
expect 1 "--kernel: not the kernel beside them" -- "$tilec" check --kernel=other "$tmp/types.tile"
has "note: 1 error in other kernels" err "said once for both instances"
expect 1 "a tile too large for the registers of a GPU thread" -- "$tilec" emit --emit=llvm --target=sm_90 -D BLOCK_M=128 -D BLOCK_N=128 -D num_warps=1 bench/flash_tune.tile
has "registers per thread with 1 warps" err "register check names the fix"
for f in examples/*.tile tests/exec/*.tile; do
    expect 0 "check $f" -- "$tilec" check "$f"
done
expect 0 "check -D" -- "$tilec" check -D BLOCK=256 -Dnum_warps=8 examples/add.tile
# a const given twice is refused, as tile_launch refuses it: which value counts is no guess
expect 2 "-D twice" -- "$tilec" run examples/add.tile:add --backend=cpu -D BLOCK=64 -D BLOCK=128 n=1000 --reps=1
has "\-D BLOCK given twice (BLOCK=64 and BLOCK=128)" err "-D twice: message"
expect 2 "-D twice: check" -- "$tilec" check -D BLOCK=64 -DBLOCK=64 examples/add.tile
expect 2 "-D and NAME=VALUE of one const" -- "$tilec" run examples/add.tile:add --backend=cpu -D BLOCK=64 BLOCK=128 n=1000 --reps=1
has "const 'BLOCK' given twice (-D BLOCK=64 and BLOCK=128)" err "-D and NAME=VALUE: message"
# Every diagnostics golden: exit 1 exactly when it reports an error (a const expression that
# fails is an error, not a note; only a const with no value at all stays a note).
for f in tests/diag/*.tile; do
    args=$(sed -n '1s|^// ARGS:||p' "$f")
    code=0
    grep -q ": error: \|^error: " "${f%.tile}.expected" && code=1
    # shellcheck disable=SC2086
    expect $code "exit status of check $f" -- "$tilec" check $args "$f"
done
expect 1 "check -D of an unknown name" -- "$tilec" check -D FOO=3 examples/add.tile
expect 1 "emit -D of an unknown name" -- "$tilec" emit -D FOO=3 examples/add.tile
expect 1 "check -Dnum_warps=64" -- "$tilec" check -Dnum_warps=64 examples/add.tile
for e in tokens ast tir llvm asm; do
    expect 0 "emit --emit=$e" -- "$tilec" emit --emit=$e examples/add.tile
done
expect 0 "emit -o" -- "$tilec" emit --emit=llvm -o "$tmp/add.ll" examples/add.tile
n=$((n + 1))
[ -s "$tmp/add.ll" ] || { echo "FAIL: emit -o wrote nothing"; fail=$((fail + 1)); }
expect 0 "emit obj" -- "$tilec" emit --emit=obj -o "$tmp/add.o" examples/add.tile
expect 0 "emit ptx" -- "$tilec" emit --emit=ptx --kernel=add examples/add.tile
has ".entry" out "PTX entry"
expect 0 "emit tir with -D" -- "$tilec" emit --emit=tir -D BLOCK=128 examples/add.tile
expect 0 "tilec --emit=tir FILE" -- "$tilec" --emit=tir examples/add.tile
expect 0 "list" -- "$tilec" list examples/matmul.tile
has "matmul_f16(" out "list"
expect 0 "run add" -- "$tilec" run examples/add.tile:add --backend=cpu n=10000 --reps=3
has "median" out "run timing"
expect 0 "run with --check" -- "$tilec" run examples/softmax.tile --backend=cpu n_rows=7 n_cols=33 --reps=1 --check
has "ok" out "run --check"
expect 0 "run on the sim backend, checked against the CPU" -- "$tilec" run examples/add.tile:add n=1000 --backend=sim --check
has "on sim (SIMT emulator" out "run --backend=sim names the emulator"
has "check out against cpu: .*ok" out "run --backend=sim --check"
cat > "$tmp/inf.tile" <<'EOF2'
@grid(1)
kernel k(o: *f32) {
    let i = arange(0, 4);
    store(o + i, where(i == 0, inf, where(i == 1, -inf, where(i == 2, nan, 1.0))));
}
EOF2
expect 0 "--check with the same infinities and NaN on both backends" -- "$tilec" run \
    "$tmp/inf.tile:k" o=4 --backend=sim --check --reps=1
has "check o against cpu: relative error 0, .*ok" out "run --check: inf == inf"
cat > "$tmp/cons.tile" <<'EOF2'
@grid(cdiv(n, BLOCK))
@tune(BLOCK = [16, 32, 64, 128])
@constraint(BLOCK <= n)
@key(n)
kernel scale(x: *f32, n: i32, const BLOCK: i32 = 16) {
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    store(x + i, load(x + i, mask=i < n) * 3.0, mask=i < n);
}
EOF2
expect 0 "@constraint reading an integer scalar argument" -- env TILE_CACHE_DIR="$tmp/cons_cache" \
    "$tilec" tune "$tmp/cons.tile:scale" n=40 x=40 --backend=cpu --reps=1
has "configs: 2 total" out "@constraint(BLOCK <= n) at n=40 keeps BLOCK 16 and 32"
expect 1 "@constraint that no configuration meets" -- env TILE_CACHE_DIR="$tmp/cons_cache" \
    "$tilec" tune "$tmp/cons.tile:scale" n=8 x=8 --backend=cpu --reps=1
has "no configuration of its @tune space satisfies its @constraint with n=8" err \
    "an empty tuning space says so"
expect 1 "a launch whose @constraint excludes every configuration" -- env \
    TILE_CACHE_DIR="$tmp/cons_cache" TILE_TUNE=auto "$tilec" run "$tmp/cons.tile:scale" n=8 x=8 \
    --backend=cpu --reps=1
has "satisfies its @constraint with n=8" err "the launch fails with the reason"
expect 0 "run on the sim backend's AMD path" -- env TILE_SIM_TARGET=sim-amd "$tilec" run \
    examples/softmax.tile:softmax n_rows=5 n_cols=300 --backend=sim --check
has "AMD wave64 path" out "TILE_SIM_TARGET=sim-amd names the AMD path"
has "check out against cpu: .*ok" out "TILE_SIM_TARGET=sim-amd --check"
expect 1 "the HIP backend without its runtime library" -- env TILE_HIP_LIBRARY=/nonexistent/libamdhip64.so \
    "$tilec" run examples/add.tile:add n=10 --backend=hip
has "cannot load the HIP runtime (/nonexistent/libamdhip64.so)" err "a missing HIP runtime says so"
if [ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 ] || [ -e /opt/rocm/lib/libamdhip64.so ]; then
    expect 1 "the HIP backend on a machine without an AMD GPU" -- "$tilec" run \
        examples/add.tile:add n=10 --backend=hip
    has "cannot open the hip backend: no device: hip: " err "no AMD GPU: a clean no-device status"
fi
expect 1 "an unknown TILE_SIM_TARGET" -- env TILE_SIM_TARGET=gfx942 "$tilec" run \
    examples/add.tile:add n=10 --backend=sim
has "TILE_SIM_TARGET='gfx942' is not sim or sim-amd" err "an unknown TILE_SIM_TARGET says so"
expect 0 "emit for the sim target" -- "$tilec" emit --emit=llvm --target=sim examples/softmax.tile
has "tile_sim_barrier" out "sim code calls the emulator's barrier"
expect 2 "run: missing scalar" -- "$tilec" run examples/add.tile:add --backend=cpu n=
expect 1 "run: no such kernel" -- "$tilec" run examples/add.tile:nope --backend=cpu
expect 2 "run: a name given twice" -- "$tilec" run examples/add.tile:add --backend=cpu n=3 n=4
expect 2 "tune: a name given twice" -- "$tilec" tune examples/add.tile:add --backend=cpu n=3 n=3

# --load / --save: known f32 inputs in (raw, little-endian), exact sums out
printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100' >"$tmp/x.bin"  # 1 2 3 4
printf '\000\000\040\101\000\000\240\101\000\000\360\101\000\000\040\102' >"$tmp/y.bin"  # 10 20 30 40
printf '\000\000\060\101\000\000\260\101\000\000\004\102\000\000\060\102' >"$tmp/sum.bin" # 11 22 33 44
expect 0 "run --load --save" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=2 \
    --load x="$tmp/x.bin" --load y="$tmp/y.bin" --save out="$tmp/out.bin" --save x="$tmp/x2.bin"
has "saved out (4 x f32)" out "--save reports what it wrote"
n=$((n + 1))
cmp -s "$tmp/out.bin" "$tmp/sum.bin" || { echo "FAIL: --save: out.bin is not x + y"; fail=$((fail + 1)); }
n=$((n + 1))
cmp -s "$tmp/x2.bin" "$tmp/x.bin" || { echo "FAIL: --save of an input is not its --load"; fail=$((fail + 1)); }
printf 'kernel k(x: *f32) {\n    let i = arange(0, 4);\n    store(x + i, load(x + i) + 1.0);\n}\n' >"$tmp/inc.tile"
printf '\000\000\000\100\000\000\100\100\000\000\200\100\000\000\240\100' >"$tmp/inc.bin"  # 2 3 4 5
expect 0 "run --save after the first launch" -- "$tilec" run "$tmp/inc.tile:k" --backend=cpu --reps=5 \
    --load x="$tmp/x.bin" --save x="$tmp/x3.bin"
n=$((n + 1))
cmp -s "$tmp/x3.bin" "$tmp/inc.bin" || { echo "FAIL: --save is not the first launch's result"; fail=$((fail + 1)); }
expect 0 "run --load on the sim backend" -- "$tilec" run examples/add.tile:add --backend=sim n=4 --reps=1 \
    --load x="$tmp/x.bin" --load y="$tmp/y.bin" --save out="$tmp/out_sim.bin"
n=$((n + 1))
cmp -s "$tmp/out_sim.bin" "$tmp/sum.bin" || { echo "FAIL: --save on sim: not x + y"; fail=$((fail + 1)); }
# .npy (NumPy's format, header written here): the f32 values 1 2 3 4, shape (4,)
npy_header() { # DESCR SHAPE: magic, version 1.0, a 118-byte header padded with spaces
    h="{'descr': '$1', 'fortran_order': False, 'shape': $2, }"
    printf '\223NUMPY\001\000v\000%s' "$h"
    printf '%*s\n' $((117 - ${#h})) ''
}
npy_header '<f4' '(4,)' >"$tmp/x.npy"; cat "$tmp/x.bin" >>"$tmp/x.npy"
npy_header '<f4' '(2, 2)' >"$tmp/y.npy"; cat "$tmp/y.bin" >>"$tmp/y.npy"
npy_header '<i4' '(4,)' >"$tmp/i.npy"; cat "$tmp/x.bin" >>"$tmp/i.npy"
npy_header '<f4' '(8,)' >"$tmp/short.npy"; cat "$tmp/x.bin" >>"$tmp/short.npy"
expect 0 "run --load of .npy files" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 \
    --load x="$tmp/x.npy" --load y="$tmp/y.npy" --save out="$tmp/out_npy.bin"
n=$((n + 1))
cmp -s "$tmp/out_npy.bin" "$tmp/sum.bin" || { echo "FAIL: --load .npy: out is not x + y"; fail=$((fail + 1)); }
expect 2 "--load .npy: another dtype" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --load x="$tmp/i.npy"
has "its dtype is '<i4', the parameter is f32" err "--load .npy dtype message"
expect 2 "--load .npy: shorter than its shape" -- "$tilec" run examples/add.tile:add --backend=cpu n=8 --load x="$tmp/short.npy"
printf '\223NUMPY\001\000\040\000{"descr": "<f4", "shape": (4,)}       \n' >"$tmp/dq.npy"; cat "$tmp/x.bin" >>"$tmp/dq.npy"
expect 2 "--load .npy: a header NumPy would not write (double quotes)" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --load x="$tmp/dq.npy"
has "its .npy header has no 'descr' (dtype) entry" err "--load .npy: says what is missing"
# --fill: a constant and a range
printf '\000\000\240\100\000\000\240\100\000\000\240\100\000\000\240\100' >"$tmp/five.bin" # 5 5 5 5
expect 0 "run --fill" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 \
    --fill x=2 --fill y=3:3 --save out="$tmp/out_fill.bin"
n=$((n + 1))
cmp -s "$tmp/out_fill.bin" "$tmp/five.bin" || { echo "FAIL: --fill: out is not 2 + 3"; fail=$((fail + 1)); }
expect 0 "run --fill: an index range" -- "$tilec" run tests/exec/memory.tile:gather --backend=cpu \
    n=50 x=10 --fill idx=0:9 --check --reps=1
expect 2 "--fill: LO above HI" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --fill x=3:1
expect 2 "--fill: not a number" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --fill x=two
expect 2 "--fill and --load of one buffer" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 \
    --fill x=1 --load x="$tmp/x.bin"
# --fill values out of the buffer's element type: a usage error naming the range (converting
# them was undefined behaviour: UBSan aborted), also a fraction for an integer type
printf 'kernel fills(a: *i8, b: *i32, c: *u64, d: *f16, e: *f32) {\n    store(a, load(a));\n}\n' >"$tmp/fills.tile"
fill_bad() {
    expect 2 "--fill $1" -- "$tilec" run "$tmp/fills.tile" --backend=cpu --reps=1 a=1 b=1 c=1 d=1 e=1 --fill "$1"
    has "bad --fill $1: $2" err "--fill $1: message"
}
fill_bad b=9999999999 "i32 takes integers in \[-2147483648, 2147483647\]"
fill_bad b=-1e300 "i32 takes integers in"
fill_bad b=0:99999999999999999999 "i32 takes integers in"
fill_bad a=1000 "i8 takes integers in \[-128, 127\]"
fill_bad a=0.5 "i8 takes integers in"
fill_bad c=-1:5 "u64 takes integers in \[0, 18446744073709551615\]"
fill_bad d=1e5 "out of the range of f16 (finite values of magnitude at most 65504)"
fill_bad e=-1e300:0 "out of the range of f32"
expect 2 "--fill inf" -- "$tilec" run "$tmp/fills.tile" --backend=cpu --reps=1 a=1 b=1 c=1 d=1 e=1 --fill e=inf
expect 0 "--fill: whole ranges of i32, u64 and f32" -- "$tilec" run "$tmp/fills.tile" --backend=cpu --reps=1 \
    a=64 b=64 c=64 d=64 e=64 --fill b=-2147483648:2147483647 --fill c=0:1e19 --fill e=-3.4e38:3.4e38 --fill a=-128:127

# AMD's knobs (waves_per_eu, mfma_size) are tuned on AMD targets only: elsewhere one each
cat >"$tmp/knobs.tile" <<'TILE'
@grid(1)
@tune(BLOCK = [16, 32], mfma_size = [16, 32], waves_per_eu = [0, 2])
kernel mm(a: *f32, c: *f32, const BLOCK: i32 = 16, const mfma_size: i32 = 0, const waves_per_eu: i32 = 0) {
    let r = arange(0, BLOCK);
    store(c + r, load(a + r) * 2.0);
}
TILE
expect 0 "tune: AMD knobs ignored on the CPU" -- "$tilec" tune "$tmp/knobs.tile:mm" a=32 c=32 --backend=cpu
has "configs: 2 total" out "only BLOCK's two candidates are tried"

# what the new builtins must do to the PTX: hints give vector loads, acq_rel atomics fences
expect 0 "hints: vector loads" -- "$tilec" emit --emit=ptx --assume-aligned=ptr --kernel=hinted_rows -D W=512 tests/exec/memory.tile
has "ld.global.v4" out "assume/multiple_of make 16-byte loads"
# launch divisors: an f16 row stride that is a multiple of 4 gives 8-byte asynchronous copies
expect 0 "divisors: 8-byte copies" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned --assume-divisor=lda=4 --assume-divisor=K=4 --kernel=matmul_f16 examples/matmul.tile
has "cp.async.ca.shared.global.*8;" out "lda a multiple of 4: cp.async of 8 bytes"
expect 2 "divisors: not a power of two" -- "$tilec" emit --emit=ptx --assume-divisor=lda=3 --kernel=matmul_f16 examples/matmul.tile
has "expected PARAM=D" err "the usage error names the form"
expect 2 "divisors: no such parameter" -- "$tilec" emit --emit=ptx --assume-divisor=nope=4 --kernel=matmul_f16 examples/matmul.tile
has "not a runtime parameter" err "a name the kernel lacks is an error"
# a unit stride argument: a launch specializes it to the constant (--assume-one), and pointer
# tiles advanced in the loop (Triton's tutorial form) are pipelined as index forms are
expect 0 "unit strides: copies" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned --assume-one=stride_ak --assume-one=stride_bn --kernel=mm_strided tests/exec/mma.tile
has "cp.async.ca.shared.global" out "unit strides and advanced pointers give asynchronous copies"
expect 0 "strides unknown: no copies" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned --kernel=mm_strided tests/exec/mma.tile
lacks "cp.async" out "a stride that may be anything gives element loads"
expect 2 "unit strides: not an integer" -- "$tilec" emit --emit=ptx --assume-one=a --kernel=mm_strided tests/exec/mma.tile
has "not an integer parameter" err "--assume-one of a pointer is a usage error"
cat >"$tmp/unit.tile" <<'TILE'
@grid(rows)
kernel copy_strided(x: *f16, y: *f16, rows: i32, stride_r: i32, stride_c: i32) {
    let c = arange(0, 1024);
    assume(stride_c == 1);
    store(y + program_id(0) * 1024 + c, load(x + program_id(0) * stride_r + c * stride_c));
}
TILE
expect 0 "assume(stride == 1): vector loads" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned "$tmp/unit.tile"
has "ld.global.v4" out "a stride assumed to be 1 gives 16-byte loads"
expect 0 "atomics: acq_rel on NVIDIA" -- "$tilec" emit --emit=ptx --kernel=last_program tests/exec/atomics.tile
has "fence.acq_rel.gpu" out "an acq_rel atomic is fenced (LLVM 22 emits atomicrmw relaxed)"
# cache hints: the qualifiers in the PTX of vector and masked accesses (tests/exec/hints.tile)
expect 0 "cache hints: PTX of vector accesses" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned --kernel=copy tests/exec/hints.tile
for q in "ld.global.cg.b64" "ld.global.ca.L2::cache_hint.b64" "ld.global.cs.b64" \
         "ld.global.cv.L2::cache_hint.b64" "ld.volatile.global.b64" "ld.global.L1::evict_normal.b64" \
         "createpolicy.fractional.L2::evict_last.b64" "createpolicy.fractional.L2::evict_first.b64" \
         "st.global.wb.b64" "st.global.cg.L2::cache_hint.b64" "st.global.cs.b64" \
         "st.global.wt.L2::cache_hint.b64" "st.global.L1::evict_first.L2::cache_hint.b64"; do
    has "$q" out "cache hints: $q"
done
expect 0 "cache hints: PTX of masked scalar accesses" -- "$tilec" emit --emit=ptx --target=sm_80 --kernel=other tests/exec/hints.tile
has "ld.global.cg.L2::cache_hint.b32" out "cache hints: a masked .cg load with evict_first"
has "ld.global.L1::evict_last.L2::cache_hint.b32" out "cache hints: a masked evict_last load"
has "ld.volatile.global.b32" out "cache hints: a volatile load"
has "st.global.wt.b32" out "cache hints: a scalar .wt store"
expect 0 "cache hints: sm_75 has no createpolicy" -- "$tilec" emit --emit=ptx --target=sm_75 --kernel=other tests/exec/hints.tile
has "ld.global.L1::evict_last.b32" out "cache hints: only the L1 priority before sm_80"
lacks "createpolicy" out "cache hints: no L2 policy before sm_80"
expect 0 "cache hints: a volatile K loop is not pipelined" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned -D VOL=true --kernel=dot_loop tests/exec/hints.tile
lacks "cp.async" out "cache hints: volatile loads are not turned into async copies"
has "ld.volatile.global" out "cache hints: the volatile loads stay"
expect 0 "prefetch: PTX" -- "$tilec" emit --emit=ptx --target=sm_80 --assume-aligned -D num_stages=3 --kernel=prefetched tests/exec/hints.tile
has "prefetch.global.L2 \\[" out "prefetch: level L2 (the default)"
has "prefetch.global.L1 \\[" out "prefetch: level L1"
has "cp.async" out "prefetch: a loop that prefetches is still pipelined"
expect 0 "prefetch: AMD compiles it (to nothing)" -- "$tilec" emit --emit=amdgcn --kernel=prefetched tests/exec/hints.tile
expect 0 "inline asm: PTX" -- "$tilec" emit --emit=ptx --target=sm_80 --kernel=bytes_plus_one tests/exec/inline_asm.tile
has "add.u32 t, t, 0x01010101" out "inline asm: the text in the PTX"
expect 0 "inline asm: two results" -- "$tilec" emit --emit=ptx --target=sm_90a --kernel=two_results tests/exec/inline_asm.tile
has "mul.rn.f32 %r[0-9]*, %r[0-9]*, 0f40000000" out "inline asm: operands named"
expect 0 "inline asm: an impure one whose result is unused stays" -- "$tilec" emit --emit=ptx --target=sm_90 --kernel=effect tests/exec/inline_asm.tile
has "red.global.add.u32" out "inline asm: kept"
expect 0 "inline asm: the IR" -- "$tilec" emit --emit=tir --kernel=halves tests/exec/inline_asm.tile
has "inline_asm asm=0 pack=2 pure" out "inline asm: the op in the IR"
expect 0 "inline asm: the CPU runs the file's kernel without it" -- "$tilec" run tests/exec/inline_asm.tile:plain --backend=cpu n=10 --reps=1
expect 1 "inline asm: the CPU runs none" -- "$tilec" run tests/exec/inline_asm.tile:triple4 --backend=cpu n=10 --reps=1
has "runs only on GPU targets" err "inline asm: says so"
has "inline_asm.tile:[0-9]*:[0-9]*: error" err "inline asm: at the call"
expect 1 "inline asm: PTX given to the AMD assembler" -- "$tilec" emit --emit=hsaco --kernel=triple4 -o "$tmp/asm.hsaco" tests/exec/inline_asm.tile
has "LLVM rejects the assembly" err "inline asm: the assembler's complaint, not an exit"
printf '@grid(1)\nkernel k(x: *i32) {\n    let a = load(x + arange(0, 64));\n    store(x + arange(0, 64), inline_asm_elementwise("v_add_u32 $0, $1, $1", "=v,v", [a], i32, true, 1));\n}\n' >"$tmp/gcn.tile"
expect 0 "inline asm: GCN assembly in an AMD code object" -- "$tilec" emit --emit=hsaco -o "$tmp/gcn.hsaco" "$tmp/gcn.tile"
printf '@grid(1)\nkernel k(x: *i32) {\n    let a = load(x + arange(0, 64));\n    store(x + arange(0, 64), inline_asm_elementwise("mov.b32 $0, $1;", "=x,r", [a], i32, true, 1));\n}\n' >"$tmp/badc.tile"
expect 1 "inline asm: a constraint no register class takes" -- "$tilec" emit --emit=ptx --target=sm_90 -o /dev/null "$tmp/badc.tile"
has "badc.tile:4:30: error: inline_asm_elementwise(): LLVM rejects the assembly: couldn't allocate output register" err "inline asm: LLVM's error at the call"
cat >"$tmp/bp_hints.tile" <<'EOF'
@grid(1)
kernel k(x: *f32, y: *f32, n: i32) {
    let p = make_block_ptr(x, [n], [1], [0], [256], [0]);
    let q = make_block_ptr(y, [n], [1], [0], [256], [0]);
    store(q, load(p, boundary_check=[0], cache_modifier=".cg"), boundary_check=[0], cache_modifier=".cs");
}
EOF
expect 0 "cache hints: block pointers" -- "$tilec" emit --emit=ptx --target=sm_80 "$tmp/bp_hints.tile"
has "ld.global.cg.b32" out "cache hints: a block pointer's load"
has "st.global.cs.b32" out "cache hints: a block pointer's store"
expect 0 "cache hints: AMD" -- "$tilec" emit --emit=llvm --target=gfx942 --kernel=other tests/exec/hints.tile
has "!nontemporal" out "cache hints: .cs and evict_first are !nontemporal on AMD"
has "load volatile" out "cache hints: volatile loads on AMD"

# block pointers (make_block_ptr, advance along K) give the PTX the index form gives: as many
# asynchronous copies of the same widths, ldmatrix and mma.sync (sm_80) or wgmma (sm_90a)
bp_counts() { # FILE: "cp.async(width) ldmatrix mma.sync wgmma" counts
    printf '%s %s %s %s %s\n' "$(grep -c 'cp.async.c[ag].*, 16' "$1")" "$(grep -c 'cp.async.c[ag].*, 8,' "$1")" \
        "$(grep -c 'ldmatrix' "$1")" "$(grep -c 'mma.sync' "$1")" "$(grep -c 'wgmma.mma_async' "$1")"
}
for target in sm_80 sm_90a; do
    for form in "mm_strided tests/exec/mma.tile" "mm_bp tests/exec/block_ptr.tile"; do
        set -- $form
        expect 0 "block pointers: $1 on $target" -- "$tilec" emit --emit=ptx --target=$target --assume-aligned \
            --assume-one=stride_ak --assume-one=stride_bn -D BM=64 -D BN=64 -D BK=32 -D num_stages=3 \
            --kernel=$1 $2
        cp "$tmp/out" "$tmp/$1.ptx"
    done
    n=$((n + 1))
    idx=$(bp_counts "$tmp/mm_strided.ptx") bp=$(bp_counts "$tmp/mm_bp.ptx")
    if [ "$idx" != "$bp" ] || [ "$(grep -c 'cp.async.c' "$tmp/mm_bp.ptx")" -eq 0 ]; then
        echo "FAIL: block pointers on $target: copies, ldmatrix, mma, wgmma $bp; the index form's $idx"
        fail=$((fail + 1))
    fi
done
has "wgmma.mma_async" out "block pointers on sm_90a: wgmma"
# attention as Triton's tutorial writes it (K a transposed view): K and V in 16-byte copies
expect 0 "block pointers: attention on sm_90a" -- "$tilec" emit --emit=ptx --target=sm_90a --assume-aligned \
    --kernel=attn_bp tests/exec/block_ptr.tile
has "cp.async.c[ag].*, 16" out "block-pointer attention: 16-byte asynchronous copies"
has "wgmma.mma_async" out "block-pointer attention: wgmma"

# bash completion (scripts/completion/tilec.bash): commands, option values, kernels of FILE:
if command -v bash >/dev/null 2>&1; then
    cat >"$tmp/comp.sh" <<'SH'
source scripts/completion/tilec.bash
t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _tilec; echo "${COMPREPLY[*]}"; }
t tilec e
t tilec emit --emit=p
t tilec run examples/add.tile:
t tilec tune --bud
SH
    expect 0 "bash completion" -- env PATH="$(dirname "$tilec"):$PATH" bash "$tmp/comp.sh"
    has "^emit$" out "completes the command"
    has "^--emit=ptx$" out "completes --emit's value"
    has "^examples/add.tile:add$" out "completes a file's kernels"
    has "^--budget=$" out "completes a command's options"
fi

printf '123456' >"$tmp/six.bin"
run_add() { "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 "$@"; }
expect 2 "--load: size not a multiple of the element" -- run_add --load x="$tmp/six.bin"
has "not a whole number of f32 elements" err "--load size message"
expect 2 "--load: missing file" -- run_add --load x="$tmp/none.bin"
has "none.bin" err "--load names the missing file"
expect 2 "--load: a directory" -- run_add --load x="$tmp"
expect 2 "--load: a scalar parameter" -- run_add --load n="$tmp/x.bin"
has "'n' is not a pointer parameter of 'add'" err "--load of a scalar"
expect 2 "--load: no such parameter" -- run_add --load nope="$tmp/x.bin"
expect 2 "--load: no file named" -- run_add --load x
expect 2 "--load: no name" -- run_add --load ="$tmp/x.bin"
expect 2 "--load: given twice" -- run_add --load x="$tmp/x.bin" --load x="$tmp/y.bin"
expect 2 "--load: a count that disagrees" -- run_add --load x="$tmp/x.bin" x=8
has "holds 4 f32 elements, but x=8" err "--load count message"
expect 2 "--save: a scalar parameter" -- run_add --save n="$tmp/n.bin"
expect 2 "--save: no file named" -- run_add --save out=
expect 1 "--save: cannot write" -- run_add --save out="$tmp/no/such/dir.bin"
has "cannot write '$tmp/no/such/dir.bin'" err "--save names the file it cannot write"
cp examples/add.tile "$tmp/add_src.tile"
expect 2 "--save naming the source" -- "$tilec" run "$tmp/add_src.tile:add" --backend=cpu n=4 --reps=1 --save out="$tmp/add_src.tile"
n=$((n + 1))
cmp -s "$tmp/add_src.tile" examples/add.tile || { echo "FAIL: --save changed the source"; fail=$((fail + 1)); }
expect 2 "tune: --save is an option of run" -- "$tilec" tune examples/add.tile:add --backend=cpu n=4 --save out="$tmp/o.bin"
# --verbose and --cold
expect 0 "run --verbose" -- run_add --verbose -D BLOCK=256
has "specialization of add on cpu" out "--verbose header"
has "consts: BLOCK=256 (given), num_warps=[0-9]* (@tune)" out "--verbose consts and where they came from"
has "grid: 1 x 1 x 1 programs, 1 thread each" out "--verbose grid"
has "registers per thread: n/a (the cpu backend" out "--verbose: registers n/a on the CPU"
has "local memory per thread (spills, stack): n/a" out "--verbose: local memory"
has "static shared memory: n/a" out "--verbose: static shared memory"
has "dynamic shared memory: [0-9]* bytes" out "--verbose: dynamic shared memory"
has "max threads per block: n/a" out "--verbose: max threads"
expect 0 "run --verbose on sim" -- "$tilec" run examples/add.tile:add --backend=sim n=1000 --reps=1 --verbose
has "programs, 128 threads each" out "--verbose on sim: 4 warps of 32 threads"
expect 0 "run --cold" -- run_add --cold --reps=3
has "cold launches (at most 3, .*: median [0-9.]* ms" out "--cold timing line"

# Every kernel is checked, however many a file holds (the 301st has a shape error).
awk 'BEGIN { for (i = 0; i < 300; i++) printf "kernel k%d(x: *f32) { store(x + arange(0, 4), zeros([4], f32)); }\n", i;
             print "kernel last(x: *f32) { store(x + arange(0, 4), zeros([8], f32)); }" }' >"$tmp/many.tile"
expect 1 "check: the 301st kernel" -- "$tilec" check "$tmp/many.tile"
has "many.tile:301:.*error: shapes do not broadcast" err "check reaches the 301st kernel"
expect 0 "list: 301 kernels" -- "$tilec" list "$tmp/many.tile"
has "^last(" out "list shows the 301st kernel"
# sources: regular files only, never a hang on a FIFO or an endless read of a device
mkfifo "$tmp/fifo.tile"
expect 1 "check a FIFO" -- timeout 20 "$tilec" check "$tmp/fifo.tile"
has "not a regular file" err "check a FIFO: message"
expect 1 "run a FIFO" -- timeout 20 "$tilec" run "$tmp/fifo.tile:k"
if [ -r /dev/zero ]; then
    expect 1 "check /dev/zero" -- timeout 20 "$tilec" check /dev/zero
    has "not a regular file" err "check /dev/zero: message"
fi
expect 1 "check a directory" -- "$tilec" check "$tmp"
# the hidden tune-worker: a job that is a FIFO, a device or lies about a blob's length
expect 1 "tune-worker: a FIFO" -- timeout 20 "$tilec" tune-worker "$tmp/fifo.tile"
expect 1 "tune-worker: /dev/zero" -- timeout 20 "$tilec" tune-worker /dev/zero
printf 'tile-tune-job 1\nname 18446744073709551615\nx\n' >"$tmp/job"
expect 1 "tune-worker: a blob length of 2^64-1" -- "$tilec" tune-worker "$tmp/job"
printf 'tile-tune-job 1\nsource 100\nshort\n' >"$tmp/job"
expect 1 "tune-worker: a blob past the end" -- "$tilec" tune-worker "$tmp/job"
expect 2 "cache show --top beyond int" -- "$tilec" cache show x --top=99999999999999999999
expect 2 "cache show --top=3x" -- "$tilec" cache show x --top=3x
expect 2 "-D beyond 64 bits" -- "$tilec" check -D BLOCK=99999999999999999999 examples/add.tile

# run: NAME=VALUE checked: unknown names, 64-bit overflow, type ranges, buffer sizes
run_bad() { expect 2 "run $1" -- "$tilec" run examples/add.tile:add --backend=cpu --reps=1 "$1"; has "$2" err "run $1: message"; }
run_bad n=99999999999999999999 "out of the 64-bit range"
run_bad x=4611686018427387904 "more than the 1099511627776 bytes"
run_bad n=1e999 "out of the range of a double"
run_bad x=-5 "cannot be negative"
run_bad n=-9223372036854775809 "beyond the 64-bit range"
run_bad n=-9223372036854775808 "out of the range of i32"
run_bad n=-9223372036854775807-1 "out of the range of i32"
run_bad n=5000000000 "out of the range of i32"
run_bad n=2.5 "takes an integer (i32), not 2.5"
run_bad n=3/0 "division by zero"
run_bad n=18446744073709551615+1 "integer overflow"
run_bad n=4294967296*4294967296 "integer overflow"
run_bad n=9223372036854775807+1 "9223372036854775808 is out of the range of i32"
# u64 parameters take 0 to 2^64 - 1 (tile_u64), and the message says so
printf 'kernel ku(o: *u64, w: u64) {\n    store(o, w);\n}\n' >"$tmp/ku.tile"
expect 0 "run: u64 2^64 - 1" -- "$tilec" run "$tmp/ku.tile" --backend=cpu --reps=1 o=1 w=18446744073709551615 --save o="$tmp/ku.bin"
[ "$(od -An -tx1 "$tmp/ku.bin" | tr -d ' \n')" = ffffffffffffffff ] || { echo "FAIL: u64 2^64 - 1: $(od -An -tx1 "$tmp/ku.bin")"; fail=$((fail + 1)); }
expect 0 "run: u64 2^63 as an expression" -- "$tilec" run "$tmp/ku.tile" --backend=cpu --reps=1 o=1 w=9223372036854775807+1
expect 2 "run: u64 -1" -- "$tilec" run "$tmp/ku.tile" --backend=cpu --reps=1 o=1 w=-1
has "w=-1: -1 is out of the range of u64 \[0, 18446744073709551615\]" err "run: u64 -1: message"
expect 2 "run: u64 2^64" -- "$tilec" run "$tmp/ku.tile" --backend=cpu --reps=1 o=1 w=18446744073709551616
has "out of the 64-bit range" err "run: u64 2^64: message"
# user text a message echoes is cut at 200 bytes: a 100 KB kernel name or expression is not
# sent back whole
big=$(awk 'BEGIN { s = ""; for (i = 0; i < 100000; i++) s = s "k"; print s }')
clipped() {
    clip_code=$1 clip_what=$2
    shift 2
    expect "$clip_code" "$clip_what" -- "$@"
    size=$(wc -c <"$tmp/err")
    [ "$size" -lt 1000 ] || { echo "FAIL: $clip_what: a $size-byte message"; fail=$((fail + 1)); }
    has "kkk\.\.\." err "$clip_what: the ellipsis"
}
clipped 1 "a 100 KB kernel name" "$tilec" run "examples/add.tile:$big" --backend=cpu n=4
clipped 2 "a 100 KB expression" "$tilec" run examples/add.tile:add --backend=cpu "n=1+$big"
clipped 2 "a 100 KB option" "$tilec" run examples/add.tile:add --backend=cpu "--$big"
clipped 2 "a 100 KB --emit" "$tilec" emit "--emit=$big" examples/add.tile
clipped 2 "a 100 KB --fill" "$tilec" run examples/add.tile:add --backend=cpu n=4 "--fill=x=$big"
run_bad "n=(3" "missing ')'"
run_bad bogus=3 "'bogus' is not a parameter of kernel 'add'"
run_bad "$(awk 'BEGIN { s = "n="; for (i = 0; i < 50000; i++) s = s "("; print s "1" }')" "nested more than 200 deep"
run_bad "$(awk 'BEGIN { s = "n="; for (i = 0; i < 50000; i++) s = s "-"; print s "1" }')" "nested more than 200 deep"
run_bad --reps=99999999999999999999 "bad --reps"
expect 1 "run: buffers beyond the machine's memory" -- "$tilec" run examples/add.tile:add --backend=cpu --reps=1 n=4 x=274877906944
has "more than this machine's" err "run: host memory message"
run_bad --elems=-1 "bad --elems"
expect 0 "run: a whole float for an integer" -- "$tilec" run examples/add.tile:add --backend=cpu --reps=1 n=1e3
# sizes may use the consts' values: -D, else the default (a @tune const without one stays unknown)
printf '@tune(B = [8, 16])\nkernel k(x: *f32, n: i32, const W: i32 = 3, const B: i32) {\n    let i = arange(0, B);\n    store(x + i, zeros([B], f32) + W as f32, mask=i < n);\n}\n' >"$tmp/consts.tile"
expect 0 "run: a size over a const's default" -- "$tilec" run "$tmp/consts.tile" --backend=cpu --reps=1 n=2 x=n*W --verbose
has "x = \[3, 3, " out "run: a size over a const's default: the kernel's stores"
has "(6 x f32 written)" out "run: a size over a const's default: its length"
expect 0 "run: a size over a -D const" -- "$tilec" run "$tmp/consts.tile" --backend=cpu --reps=1 n=2 x=n*W -D W=5
has "(10 x f32 written)" out "run: a size over a -D const: its length"
expect 2 "run: a size over a @tune const" -- "$tilec" run "$tmp/consts.tile" --backend=cpu --reps=1 n=2 x=B
has "unknown name" err "run: a size over a @tune const: message"
expect 0 "run: the flash example at head_dim 128 (its sizes follow HEAD_DIM)" -- "$tilec" run \
    examples/flash_attention.tile:flash_attention --backend=cpu --reps=1 batch=1 heads=1 seq=16 -D HEAD_DIM=128
has "(2048 x f16 written)" out "run: the flash example at head_dim 128: the output's length"
# run lines: only `// run:` and `// run KERNEL:` (KERNEL a kernel of the file) count; other
# comments that start with the word are comments; a malformed one is an error at its place
cat >"$tmp/runlines.tile" <<'TILE'
// run: n=64 x=64
// run other: bogus=1
// run k: y=n*2
// run this file with tilec: it needs nothing else
// run-time sizes come from the caller
@grid(1)
kernel k(x: *f32, y: *f32, n: i32) {
    let i = arange(0, 64);
    store(y + i, 2.0, mask=i < n);
}
@grid(1)
kernel other(x: *f32, bogus: i32) {
    store(x, 1.0);
}
TILE
expect 0 "run lines: for every kernel, for one, and comments" -- "$tilec" run "$tmp/runlines.tile:k" --backend=cpu --reps=1
has "(128 x f32 written)" out "run lines: y's size from the kernel's line"
printf '// run-time sizes come from the caller\n@grid(1)\nkernel k(x: *f32, n: i32) {\n    store(x, 1.0);\n}\n' >"$tmp/runword.tile"
expect 0 "run lines: a comment that starts with 'run'" -- "$tilec" run "$tmp/runword.tile" n=4 x=4 --backend=cpu --reps=1
printf '// run: n=64 x\n@grid(1)\nkernel k(x: *f32, n: i32) {\n    store(x, 1.0);\n}\n' >"$tmp/runbad.tile"
expect 1 "run lines: malformed" -- "$tilec" run "$tmp/runbad.tile" --backend=cpu --reps=1
has "runbad.tile:1:14: error: expected NAME=VALUE in this \`// run\` line, got 'x'" err "run lines: malformed: file:line:col"
expect 2 "tune: --budget=inf" -- "$tilec" tune examples/add.tile:add --backend=cpu n=4 --budget=1e999
expect 2 "tune: --samples beyond int" -- "$tilec" tune examples/add.tile:add --backend=cpu n=4 --samples=99999999999

# -o: never the input; a failed emit leaves an existing output untouched
cp examples/add.tile "$tmp/in.tile"
expect 2 "emit -o naming the input" -- "$tilec" emit --emit=llvm "$tmp/in.tile" -o "$tmp/in.tile"
has "names the input file" err "-o input message"
expect 2 "emit -o naming the input by another path" -- "$tilec" emit "$tmp/in.tile" -o "$tmp/../$(basename "$tmp")/in.tile"
n=$((n + 1))
cmp -s "$tmp/in.tile" examples/add.tile || { echo "FAIL: -o input changed the input"; fail=$((fail + 1)); }
echo "keep me" >"$tmp/old.ll"
expect 1 "emit of a bad file with -o" -- "$tilec" emit --emit=llvm "$tmp/bad.tile" -o "$tmp/old.ll"
n=$((n + 1))
[ "$(cat "$tmp/old.ll")" = "keep me" ] || { echo "FAIL: a failed emit changed its -o file"; fail=$((fail + 1)); }
n=$((n + 1))
[ -z "$(ls "$tmp" | grep 'old.ll.tmp')" ] || { echo "FAIL: a failed emit left its temporary file"; fail=$((fail + 1)); }
expect 0 "emit -o over an old file" -- "$tilec" emit --emit=llvm examples/add.tile -o "$tmp/old.ll"
has "ModuleID" old.ll "emit -o replaced the old file"
expect 0 "emit -o /dev/null" -- "$tilec" emit --emit=llvm examples/add.tile -o /dev/null
expect 1 "emit -o a directory" -- "$tilec" emit --emit=llvm examples/add.tile -o "$tmp"
if [ -w /dev/full ]; then
    expect 1 "emit to a full standard output" -- sh -c "\"$tilec\" emit examples/add.tile >/dev/full"
    has "writing to standard output failed" err "a failed write to stdout is reported"
fi

# @tune: --budget bounds the compile phase too; spaces past the size limits are refused
expect 1 "tune: a budget spent before compiling" -- env TILE_CACHE_DIR="$tmp/cache" "$tilec" tune \
    examples/add.tile n=100 --backend=cpu --budget=0.000000001 --force --top=12
has "past the time budget (not compiled)" out "tune --budget stops compiling"
awk 'BEGIN { l = "[1"; for (i = 2; i <= 16; i++) l = l ", " i; l = l "]";
             print "@grid(1)"; print "@tune(A = " l ", B = " l ", C = " l ", D = [1, 2])";
             print "kernel k(x: *f32, const A: i32 = 1, const B: i32 = 1, const C: i32 = 1, const D: i32 = 1) { }" }' >"$tmp/bigspace.tile"
expect 1 "tune: a space of 8192 configurations" -- env TILE_CACHE_DIR="$tmp/cache" "$tilec" tune \
    "$tmp/bigspace.tile" --backend=cpu
has "bigspace.tile:2:.*has 8192 configurations after its constraints (at most 4096" err "space size message"

# imports: -I for check, emit, run and tune (the isolated worker too), $TILE_PATH, the limits
mkdir -p "$tmp/inc/sub" "$tmp/main" "$tmp/deep" "$tmp/wide"
printf 'fn twice(x) { return x * 2.0; }\n' >"$tmp/inc/sub/twice.tile"
printf 'import "sub/twice.tile";\n@grid(cdiv(n, BLOCK))\n@tune(BLOCK = [32, 64])\nkernel k(x: *f32, n: i32, const BLOCK: i32 = 32) {\n    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n    store(x + i, twice(load(x + i, mask=i < n)), mask=i < n);\n}\n' >"$tmp/main/uses.tile"
expect 1 "import: not found" -- "$tilec" check "$tmp/main/uses.tile"
has "uses.tile:1:8: error: cannot find 'sub/twice.tile' (looked for $tmp/main/sub/twice.tile, " err "import: where it looked"
expect 0 "import: check -I" -- "$tilec" check -I "$tmp/inc" "$tmp/main/uses.tile"
expect 0 "import: check -IDIR" -- "$tilec" check "-I$tmp/inc" "$tmp/main/uses.tile"
expect 0 "import: emit -I" -- "$tilec" emit --emit=ast -I "$tmp/inc" "$tmp/main/uses.tile"
has "fn twice (from $tmp/inc/sub/twice.tile)" out "import: the AST names the imported file"
expect 0 "import: \$TILE_PATH" -- env TILE_PATH="/nonexistent:$tmp/inc" "$tilec" check "$tmp/main/uses.tile"
expect 0 "import: run -I" -- "$tilec" run -I "$tmp/inc" "$tmp/main/uses.tile:k" n=100 x=100 --backend=cpu --reps=1
expect 0 "import: tune -I, isolated" -- env TILE_TUNE_ISOLATE=1 TILE_CACHE_DIR="$tmp/cache" "$tilec" tune \
    -I "$tmp/inc" "$tmp/main/uses.tile:k" n=100 x=100 --backend=cpu --reps=1
expect 0 "import: cache list" -- "$tilec" cache list --dir="$tmp/cache"
grep -c "^k " "$tmp/out" >"$tmp/count_before"
printf 'fn twice(x) { return x * 3.0; }\n' >"$tmp/inc/sub/twice.tile" # the tuning key follows it
expect 0 "import: tune after the imported file changed" -- env TILE_CACHE_DIR="$tmp/cache" "$tilec" tune \
    -I "$tmp/inc" "$tmp/main/uses.tile:k" n=100 x=100 --backend=cpu --reps=1
expect 0 "import: cache list again" -- "$tilec" cache list --dir="$tmp/cache"
n=$((n + 1))
if [ "$(grep -c "^k " "$tmp/out")" -ne $(($(cat "$tmp/count_before") + 1)) ]; then
    echo "FAIL: import: a changed imported file did not give a new tuning file"
    fail=$((fail + 1))
fi
expect 2 "import: -I without a directory" -- "$tilec" check "$tmp/main/uses.tile" -I
expect 2 "import: -I with a colon" -- "$tilec" check -I "a:b" "$tmp/main/uses.tile"
printf 'import "fifo.tile";\n' >"$tmp/import_fifo.tile"
expect 1 "import: a FIFO" -- timeout 20 "$tilec" check "$tmp/import_fifo.tile"
has "not a regular file (a FIFO)" err "import: a FIFO's message"
awk -v d="$tmp/deep" 'BEGIN { for (i = 0; i < 33; i++) printf "import \"d%d.tile\";\n", i + 1 > (d "/d" i ".tile");
                               printf "fn last() { return 1; }\n" > (d "/d33.tile") }'
expect 1 "import: 33 levels" -- "$tilec" check "$tmp/deep/d0.tile"
has "d32.tile:1:8: error: imports are nested more than 32 levels deep" err "import: the depth limit"
awk -v d="$tmp/wide" 'BEGIN { for (i = 1; i <= 256; i++) { printf "import \"f%d.tile\";\n", i > (d "/main.tile");
                                                              printf "fn f%d() { return %d; }\n", i, i > (d "/f" i ".tile") } }'
expect 1 "import: 257 files" -- "$tilec" check "$tmp/wide/main.tile"
has "main.tile:256:8: error: a module may be built from at most 256 files" err "import: the file limit"
# a module path that names no file from here is found along the search path (the stdlib too)
expect 0 "module path: the stdlib's from another directory" -- env -C "$tmp" "$tilec" check attention/flash_fwd.tile
expect 0 "module path: -I" -- env -C / "$tilec" check -I "$tmp/main" -I "$tmp/inc" uses.tile
expect 1 "module path: ./ is not searched" -- env -C "$tmp" "$tilec" check ./attention/flash_fwd.tile

# each subcommand's --help: its usage and options, exit 0
for c in check emit run tune list cache; do
    expect 0 "$c --help" -- "$tilec" $c --help
    has "usage: tilec $c" out "$c --help: its usage line"
done
expect 0 "tune -h after other arguments" -- "$tilec" tune examples/add.tile:add -h
has "Options of tune" out "tune --help: the tune options"
# several kernels' PTX is one module that ptxas takes
expect 0 "emit --emit=ptx of three kernels" -- "$tilec" emit --emit=ptx examples/matmul.tile -o "$tmp/three.ptx"
n=$((n + 1))
if [ "$(grep -c '^\.version' "$tmp/three.ptx")" != 1 ] || [ "$(grep -c '\.entry' "$tmp/three.ptx")" != 3 ]; then
    echo "FAIL: emit --emit=ptx of three kernels: not one module with three entries"
    fail=$((fail + 1))
fi
if [ -x /usr/local/cuda/bin/ptxas ]; then
    expect 0 "ptxas takes the three-kernel module" -- /usr/local/cuda/bin/ptxas -arch=sm_90 "$tmp/three.ptx" -o "$tmp/three.cubin"
fi

# review 32: buffers that cannot hold anything, .npy shapes, options naming what they check
run_bad --elems=0 "the buffer of pointer parameter 'x' needs at least one element"
run_bad x=0 "x=0: the buffer of pointer parameter 'x' needs at least one element"
for shape in '(-5,)' '(4294967296, 4294967296)' '(12345678901234567890123,)' '(4, x)' '(4611686018427387904,)'; do
    npy_header '<f4' "$shape" >"$tmp/bad.npy"; cat "$tmp/x.bin" >>"$tmp/bad.npy"
    expect 2 "--load .npy: shape $shape" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 --load x="$tmp/bad.npy"
    has "bad shape '$shape' in its header" err "--load .npy: shape $shape: message"
done
npy_header '<f4' '(0,)' >"$tmp/empty.npy"
expect 2 "--load .npy: no elements" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 --load x="$tmp/empty.npy"
has "holds no elements" err "--load .npy: no elements: message"
npy_header '<f4' '()' >"$tmp/scalar.npy"; printf '\000\000\200\077' >>"$tmp/scalar.npy"
expect 0 "--load .npy: a 0-d array is one element" -- "$tilec" run examples/add.tile:add --backend=cpu n=1 --reps=1 --load x="$tmp/scalar.npy"
expect 2 "--fill of a name the kernel lacks" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 --fill nope=1
has "'nope' is not a pointer parameter of 'add'" err "--fill nope: message"
expect 2 "--fill of a scalar" -- "$tilec" run examples/add.tile:add --backend=cpu n=4 --reps=1 --fill n=7
expect 1 "tune: no tuning cache (no HOME)" -- env -u TILE_CACHE_DIR HOME= XDG_CACHE_HOME= "$tilec" tune \
    examples/add.tile:add n=64 --backend=cpu --reps=1
has "no tuning cache" err "tune without a cache: the warning"
has "not saved" err "tune without a cache: the error"
expect 1 "tune: no tuning cache (TILE_CACHE_DIR empty)" -- env TILE_CACHE_DIR= "$tilec" tune \
    examples/add.tile:add n=64 --backend=cpu --reps=1
has "no tuning cache" err "tune with TILE_CACHE_DIR empty: the warning"
for v in abc -5 99999999999999999999; do
    expect 0 "TILE_CPU_THREADS=$v" -- env TILE_CPU_THREADS=$v "$tilec" run examples/add.tile:add --backend=cpu n=64 --reps=1
    has "warning: TILE_CPU_THREADS='$v' ignored" err "TILE_CPU_THREADS=$v: the warning"
done
expect 0 "TILE_CACHE_DIR past PATH_MAX" -- env TILE_CACHE_DIR="$tmp/$(printf '%04100d' 0)" "$tilec" run \
    examples/add.tile:add --backend=cpu n=64 --reps=1
has "longer than PATH_MAX" err "TILE_CACHE_DIR past PATH_MAX: the warning"
expect 2 "--assume-one of a name the kernel lacks" -- "$tilec" emit --assume-one=nope examples/add.tile
has "assume-one=nope: 'nope' is not a runtime parameter" err "--assume-one names itself"
expect 2 "--emit=ptx for an AMD target" -- "$tilec" emit --emit=ptx --target=gfx942 examples/add.tile
has "needs an NVIDIA target" err "--emit=ptx --target=gfx942: message"
expect 2 "--emit=amdgcn for an NVIDIA target" -- "$tilec" emit --emit=amdgcn --target=sm_90 examples/add.tile
# an unknown target: one usage error, not an error per kernel at its compile
expect 2 "emit --target=sm_12" -- "$tilec" emit --target=sm_12 examples/matmul.tile
has "unknown --target=sm_12 (expected host, sim, sm_70" err "emit --target=sm_12: message"
[ "$(grep -c "unknown" "$tmp/err")" = 1 ] || { echo "FAIL: emit --target=sm_12: said more than once"; fail=$((fail + 1)); }
[ -s "$tmp/out" ] && { echo "FAIL: emit --target=sm_12: wrote to stdout"; fail=$((fail + 1)); }
expect 2 "check --target=gfx1" -- "$tilec" check --target=gfx1 examples/add.tile
# sm_80's mma operands that no cp.async fills (Q) sit in padded buffers (rows of 128 bytes or
# more), the pipeliner's rings (K, V) in swizzled ones; where padding would pass the 166912
# bytes sm_80 allows, every buffer is swizzled and the kernel compiles
fa="examples/flash_attention.tile --kernel=flash_attention --target=sm_80 --assume-aligned -D HEAD_DIM=128"
expect 0 "sm_80: padded operand buffers" -- "$tilec" emit --emit=tir $fa -D BLOCK_M=128 \
    -D BLOCK_N=64 -D num_warps=4
has "#shared<vec=8 phase=1x1 pad=8 order=\[1,0\]>" out "sm_80: padded operand buffers: the layout"
has "smem\*2 #shared<vec=8 phase=1x8 order" out "sm_80: the rings are swizzled"
lacks "smem\*2 #shared<[^>]*pad=" out "sm_80: no ring is padded"
expect 0 "sm_80: swizzled where padding does not fit" -- "$tilec" emit --emit=tir $fa \
    -D BLOCK_M=64 -D BLOCK_N=128 -D num_warps=8
lacks "pad=" out "sm_80: swizzled where padding does not fit: no padding"
has "#shared<vec=8 phase=1x8 order=\[1,0\]>" out "sm_80: swizzled where padding does not fit: the layout"
expect 0 "sm_90a: wgmma's buffers, not padded" -- "$tilec" emit --emit=tir \
    examples/flash_attention.tile --kernel=flash_attention --target=sm_90a -D HEAD_DIM=128
lacks "pad=" out "sm_90a: no padding"
if [ -r /dev/zero ]; then
    expect 1 "cache show /dev/zero" -- "$tilec" cache show /dev/zero
    has "'/dev/zero' is a device, not a tuning file" err "cache show /dev/zero: message"
fi

echo "$((n - fail))/$n passed"
[ $fail -eq 0 ]
