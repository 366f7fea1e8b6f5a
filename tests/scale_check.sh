#!/bin/sh
# scale_check.sh: compile cost stays near-linear and bounded on generated sources far larger
# than real ones: 100,000 helpers in a chain (the recursion check), a 100,000-helper cycle,
# exponential inlining (f1 calls f0 twice, f2 calls f1 twice, ...: the inlining budget),
# a kernel of 40,000 statements, and 2,000 tile statements lowered for the host. Each must
# finish well inside its time limit. Also: constant folding never traps, and the CPU backend's
# stack limit on tile sizes.
# usage: tests/scale_check.sh TILEC   (from the source root)
tilec=${1:?usage: scale_check.sh TILEC}
fail=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# expect CODE PATTERN FILE [ARGS...]: `tilec check FILE ARGS` (or `tilec $SUB`) exits CODE
# within 60 s (a hang or a quadratic stage fails here) and its stderr contains PATTERN
expect() {
    code=$1 pattern=$2 file=$3
    shift 3
    timeout 60 "$tilec" "${SUB:-check}" "$tmp/$file" "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$code" ] || { [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/err"; }; then
        echo "FAIL: $file: exit $rc (expected $code, 124 is a timeout), '$pattern' expected:"
        head -5 "$tmp/err" | sed 's/^/    /'
        fail=$((fail + 1))
    fi
}

# helpers f1..f(N-1), each calling the one before; $2: what f0 returns
chain() {
    awk -v n="$1" -v f0="$2" 'BEGIN {
        printf "fn f0(x) { return %s; }\n", f0
        for (i = 1; i < n; i++) printf "fn f%d(x) { return f%d(x); }\n", i, i - 1 }'
}

chain 100000 "x + 1" >"$tmp/chain.tile"
expect 0 "" chain.tile
chain 100000 "f99999(x)" >"$tmp/cycle.tile"
expect 1 "recursive call to 'f99999'" cycle.tile

{ chain 4000 "x + 1"; printf '@grid(1)\nkernel k(o: *i32) { store(o, f3999(1)); }\n'; } >"$tmp/deep.tile"
expect 1 "nested too deeply" deep.tile

awk 'BEGIN { print "fn f0(x) { return x + 1; }"
    for (i = 1; i <= 30; i++) printf "fn f%d(x) { return f%d(x) + f%d(x); }\n", i, i - 1, i - 1
    print "@grid(1)\nkernel k(o: *i32, n: i32) { store(o, f30(n)); }" }' >"$tmp/expo.tile"
expect 1 "past 100000 inlined statements" expo.tile

awk 'BEGIN { print "@grid(1)\nkernel k(o: *f32) {\n    let x = load(o);"
    for (i = 0; i < 40000; i++) printf "    x = x * 1.5 + %d.0;\n", i % 7
    print "    store(o, x);\n}" }' >"$tmp/long.tile"
expect 0 "" long.tile

# 2,000 statements on 16-element tiles, through LLVM for the host (87 s before: O3's loop passes
# on thousands of small loops; now they are straight-line code, and large modules get O1)
awk 'BEGIN { print "@grid(1)\nkernel k(o: *f32) {\n    let i = arange(0, 16);\n    let x = load(o + i);"
    for (i = 0; i < 2000; i++) printf "    x = x * 1.5 + %d.0;\n", i % 7
    print "    store(o + i, x);\n}" }' >"$tmp/tiles.tile"
SUB=emit expect 0 "" tiles.tile --emit=llvm -o /dev/null
SUB=emit expect 0 "" long.tile --emit=obj -o /dev/null

# cumsum and flip along 65536 elements for the host: LLVM loops along the axis (unrolled, 4096
# elements took LLVM 9 s to compile and 65536 elements more than five minutes)
printf '@grid(1)\nkernel k(o: *f32) {\n    let i = arange(0, 65536);
    store(o + i, flip(cumsum(load(o + i), 0, reverse=true), 0));\n}\n' >"$tmp/axis.tile"
SUB=emit expect 0 "" axis.tile --emit=llvm -o /dev/null

# Constant folding never traps: INT64_MIN / -1 (overflow) and division by zero of constants are
# errors, INT64_MIN % -1 is 0 (a SIGFPE in the compiler would be a crash).
for e in "(-9223372036854775807 - 1) / -1" "(-9223372036854775807 - 1) % -1" "7 / 0" "7 % 0"; do
    printf '@grid(1)\nkernel k(o: *i64) {\n    store(o, %s);\n}\n' "$e" >"$tmp/fold.tile"
    case $e in
    *"% -1") expect 0 "" fold.tile ;;
    *) expect 1 "error:" fold.tile ;;
    esac
    # a const default: reported (whether as an error or a note is the front end's business)
    printf '@grid(1)\nkernel k(o: *i64, const C: i64 = %s) {\n    store(o, C);\n}\n' "$e" \
        >"$tmp/fold_const.tile"
    timeout 60 "$tilec" check "$tmp/fold_const.tile" >/dev/null 2>&1
    rc=$?
    [ $rc -le 1 ] || { echo "FAIL: const C: i64 = $e: exit $rc"; fail=$((fail + 1)); }
done

# A tile too large for the CPU backend's worker stacks is refused at compile time (it killed the
# process with SIGSEGV before); half of it still runs.
timeout 120 "$tilec" run examples/add.tile:add n=1000 -D BLOCK=1048576 --backend=cpu --reps=1 \
    >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "bytes of stack for its tiles on the host target" "$tmp/err"; then
    echo "FAIL: add BLOCK=1048576 on the CPU backend: exit $rc, expected 1 and the stack message"
    head -3 "$tmp/err" | sed 's/^/    /'
    fail=$((fail + 1))
fi
if ! timeout 120 "$tilec" run examples/add.tile:add n=1000 -D BLOCK=262144 --backend=cpu \
    --reps=1 >/dev/null 2>"$tmp/err"; then
    echo "FAIL: add BLOCK=262144 on the CPU backend does not run"
    head -3 "$tmp/err" | sed 's/^/    /'
    fail=$((fail + 1))
fi

[ $fail -eq 0 ] && echo "scale_check: all passed"
[ $fail -eq 0 ]
