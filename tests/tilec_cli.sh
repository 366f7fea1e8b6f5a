#!/bin/sh
# tilec_cli.sh: tests of tilec's command line: exit codes (0 ok, 1 errors, 2 usage), --help,
# --version, check and emit of every example, run on the CPU backend (and the sim backend).
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

echo "$((n - fail))/$n passed"
[ $fail -eq 0 ]
