#!/bin/sh
# tmpdir_check.sh: the tests that make temporary directories (tests/tmpdir.h, the Python test's
# mkdtemp) remove them, whether they pass, skip, fail or are given an unknown test name. Each
# runs with TMPDIR naming an empty directory, which must be empty again afterwards (the tuner's
# own job directories for its workers are held to that too).
# usage: tests/tmpdir_check.sh TEST_RUNTIME TEST_TUNE TEST_ISOLATE TILEC [PYTHON LIBTILE]
rt=${1:?usage: tmpdir_check.sh TEST_RUNTIME TEST_TUNE TEST_ISOLATE TILEC [PYTHON LIBTILE]}
tune=$2 iso=$3 tilec=$4 python=$5 libtile=$6
fail=0 n=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t" || exit 2

# run CODES DESCRIPTION -- COMMAND...: COMMAND under TMPDIR=$tmp/t exits with one of CODES
# ("0 77"), and leaves nothing in $tmp/t
run() {
    codes=$1 what=$2
    shift 3
    n=$((n + 1))
    TMPDIR="$tmp/t" TILE_TUNE_WORKER="$tilec" timeout 120 "$@" >"$tmp/out" 2>&1
    rc=$?
    case " $codes " in
    *" $rc "*) ;;
    *) echo "FAIL: $what: exit $rc, expected one of: $codes"; sed 's/^/    /' "$tmp/out" | tail -5
       fail=$((fail + 1)) ;;
    esac
    left=$(ls -A "$tmp/t")
    if [ -n "$left" ]; then
        echo "FAIL: $what: left behind in TMPDIR: $left"
        fail=$((fail + 1))
        rm -rf "$tmp/t" && mkdir "$tmp/t"
    fi
}

# where TMPDIR names no directory a test cannot make its own there: it fails, naming the path
# (a test that ignored TMPDIR would pass, and leave its directory in /tmp unseen)
probe() {
    run 1 "$1 with TMPDIR=$tmp/none" -- env TMPDIR="$tmp/none" "$@"
    grep -q "$tmp/none" "$tmp/out" || { echo "FAIL: $1: no message naming $tmp/none"; fail=$((fail + 1)); }
}

probe "$rt" disk_cache
probe "$tune" off
probe "$iso" cpu_inputs
run "0" "runtime disk_cache (passes)" -- "$rt" disk_cache
run "0" "runtime disk_cache_concurrent (forked children)" -- "$rt" disk_cache_concurrent
run "0 77" "runtime cuda (skips without a GPU)" -- "$rt" cuda
run "0" "tune off (passes)" -- "$tune" off
run "2" "tune with an unknown test name" -- "$tune" no_such_test
run "0" "isolate cpu_fault (passes; tuning workers)" -- "$iso" cpu_fault
run "0 77" "isolate gpu_fault (skips without a GPU)" -- "$iso" gpu_fault
run "2" "isolate with an unknown test name" -- "$iso" no_such_test
# no usable worker: tuning falls back into the process, so cpu_inputs' checks fail (exit 1)
run "1" "isolate cpu_inputs (fails)" -- env TILE_TUNE_WORKER=/nonexistent/tilec "$iso" cpu_inputs
if [ -n "$python" ] && [ -n "$libtile" ]; then
    run "0" "python test_tile.py" -- env TILE_LIBRARY="$libtile" TILE_TUNE=off "$python" \
        tests/python/test_tile.py .
fi
echo "$((n - fail)) of $n passed"
[ "$fail" -eq 0 ]
