#!/bin/sh
# tilec_oom.sh: tilec handles every arena allocation failure. Runs `check`, `run` (with
# --check) and `tune` again and again with the N-th arena allocation and all after it failing
# (TILE_TEST_ARENA_FAIL_AFTER=N: every N up to 16, then every 37th, until the command
# succeeds); each must exit 0, or 1 with "out of memory" on stderr: never crash.
# usage: tests/tilec_oom.sh TILEC   (from the source root)
tilec=${1:?usage: tilec_oom.sh TILEC}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
export TILE_NO_DISK_CACHE=1 TILE_CACHE_DIR="$tmp/cache" TILE_TUNE_ISOLATE=0
printf '@tune(BLOCK = [16, 32])\n@grid(cdiv(n, BLOCK))\nkernel k(x: *f32, n: i32, const BLOCK: i32) {\n    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n    store(x + i, load(x + i, mask=i < n) * 2.0, mask=i < n);\n}\n' >"$tmp/small.tile"
fail=0

# sweep NAME ARGS...: the command with every allocation from the N-th on failing
sweep() {
    name=$1
    shift
    n=0
    while :; do
        TILE_TEST_ARENA_FAIL_AFTER=$n "$tilec" "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -eq 0 ]; then
            echo "ok   $name: succeeds with $n allocations"
            break
        fi
        if [ $rc -ne 1 ] || ! grep -q "out of memory" "$tmp/err"; then
            echo "FAIL $name with allocation $n failing: exit $rc"
            sed 's/^/    /' "$tmp/err" "$tmp/out" | tail -8
            fail=$((fail + 1))
            break
        fi
        [ $n -lt 16 ] && n=$((n + 1)) || n=$((n + 37))
        if [ $n -gt 100000 ]; then
            echo "FAIL $name: still failing at allocation $n"
            fail=$((fail + 1))
            break
        fi
    done
}

sweep check check examples/softmax.tile
sweep run run examples/add.tile:add --backend=cpu n=100 --reps=1 --check
sweep tune tune "$tmp/small.tile" --backend=cpu --reps=1 n=100
[ $fail -eq 0 ] && echo "all passed" || echo "$fail failed"
[ $fail -eq 0 ]
