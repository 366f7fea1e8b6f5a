#!/bin/sh
# run_golden.sh: golden tests. Runs PROGRAM on each DIR/*.tile (adding the flags of a first
# line `// ARGS: ...`) and diffs its stdout against DIR/NAME.expected.
# usage: run_golden.sh [--update] PROGRAM DIR   (--update rewrites the .expected files)
update=0
if [ "$1" = "--update" ]; then update=1; shift; fi
if [ $# -ne 2 ]; then
    echo "usage: $0 [--update] PROGRAM DIR" >&2
    exit 2
fi
prog=$1
dir=${2%/}
fail=0
total=0
tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT
for f in "$dir"/*.tile; do
    [ -e "$f" ] || continue
    total=$((total + 1))
    args=$(sed -n '1s|^// ARGS:||p' "$f")
    # shellcheck disable=SC2086
    "$prog" $args "$f" >"$tmp" 2>&1
    exp="${f%.tile}.expected"
    if [ $update -eq 1 ]; then
        cp "$tmp" "$exp"
    elif ! diff -u "$exp" "$tmp"; then
        echo "FAIL: $f"
        fail=$((fail + 1))
    fi
done
if [ $update -eq 1 ]; then
    echo "updated $total goldens in $dir"
    exit 0
fi
echo "$((total - fail))/$total passed in $dir"
[ $fail -eq 0 ]
