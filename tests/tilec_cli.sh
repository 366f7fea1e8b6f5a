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
printf 'kernel k(x: *f32, n: i32) {\n    store(x, n as f32);\n}\n' >"$tmp/scalar.tile"
expect 2 "run: bad backend" -- "$tilec" run examples/add.tile:add --backend=nonsense
expect 2 "run: no value for a scalar" -- "$tilec" run "$tmp/scalar.tile:k" --backend=cpu
has "n=VALUE" err "hint for a missing scalar"
expect 0 "run: scalar given" -- "$tilec" run "$tmp/scalar.tile:k" --backend=cpu n=3 x=1 --reps=2
has "x = \[3\]" out "scalar store result"
expect 1 "missing file" -- "$tilec" check "$tmp/does-not-exist.tile"
expect 1 "undefined name" -- "$tilec" check "$tmp/bad.tile"
has "bad.tile:2:13: error" err "diagnostic location"
expect 1 "shape error found by specialization" -- "$tilec" check "$tmp/shape.tile"
expect 1 "no such kernel" -- "$tilec" emit --kernel=nope examples/add.tile
expect 1 "a tile too large for the registers of a GPU thread" -- "$tilec" emit --emit=llvm --target=sm_90 -D BLOCK_M=128 -D BLOCK_N=128 -D num_warps=1 bench/flash_tune.tile
has "registers per thread with 1 warps" err "register check names the fix"
for f in examples/*.tile tests/exec/*.tile; do
    expect 0 "check $f" -- "$tilec" check "$f"
done
expect 0 "check -D" -- "$tilec" check -D BLOCK=256 -Dnum_warps=8 examples/add.tile
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
expect 0 "emit for the sim target" -- "$tilec" emit --emit=llvm --target=sim examples/softmax.tile
has "tile_sim_barrier" out "sim code calls the emulator's barrier"
expect 2 "run: missing scalar" -- "$tilec" run examples/add.tile:add --backend=cpu n=
expect 1 "run: no such kernel" -- "$tilec" run examples/add.tile:nope --backend=cpu

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

echo "$((n - fail))/$n passed"
[ $fail -eq 0 ]
