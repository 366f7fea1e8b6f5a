#!/bin/sh
# cache_damage.sh: tilec against damaged caches. A tuning file that is truncated, random
# bytes, JSON of the wrong shape, a FIFO, a directory or unreadable; a read-only cache; damaged
# kernel cache files; concurrent tuners. For each: no crash, no hang (every command runs under
# `timeout`), no lost data (a damaged tuning file is moved aside byte for byte, earlier keys
# survive), a warning on stderr and the documented exit code (docs/tuning.md, "Damage").
# usage: tests/cache_damage.sh TILEC   (from the source root)
tilec=${1:?usage: cache_damage.sh TILEC}
fail=0 n=0 skipped=0
tmp=$(mktemp -d) || exit 2
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export TILE_CACHE_DIR="$tmp/cache"
unset TILE_TUNE TILE_NO_DISK_CACHE

bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND (at most 60 s), checks its exit status
expect() {
    code=$1 what=$2
    shift 3
    n=$((n + 1))
    timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 124 ] && { bad "$what: hung (killed after 60 s)"; return; }
    [ "$rc" -ge 128 ] && { bad "$what: crashed (exit $rc)"; sed 's/^/    /' "$tmp/err" | head -5; return; }
    # sanitizer builds: a report exits 1, which some cases expect; the report itself fails them
    grep -q "Sanitizer\|runtime error:" "$tmp/err" && { bad "$what: sanitizer report"; sed 's/^/    /' "$tmp/err" | head -8; return; }
    if [ "$rc" -ne "$code" ]; then
        bad "$what: exit $rc, expected $code ($*)"
        sed 's/^/    /' "$tmp/err" | head -5
    fi
}
# has PATTERN FILE DESCRIPTION: the last command's std(out|err) contains PATTERN
has() {
    n=$((n + 1))
    grep -q -- "$1" "$tmp/$2" || bad "$3: '$1' not in std$2"
}
skip() { echo "SKIP: $*"; skipped=$((skipped + 1)); }

cat >"$tmp/small.tile" <<'EOF'
// A two-configuration @tune space: tuning it takes a fraction of a second on the CPU.
@grid(cdiv(n, BLOCK))
@tune(BLOCK = [64, 128])
@key(n: pow2)
kernel inc(x: *f32, n: i32, const BLOCK: i32 = 64) {
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    store(x + i, load(x + i, mask=i < n) + 1.0, mask=i < n);
}
EOF
# tune [NAME=VALUE...] and run (reading the tuning cache as a server does): scripts, so that
# `timeout` can run them
printf '#!/bin/sh\nexec "%s" tune "%s" --backend=cpu --reps=1 "$@"\n' "$tilec" "$tmp/small.tile" >"$tmp/tune"
printf '#!/bin/sh\nTILE_TUNE=cached exec "%s" run "%s" --backend=cpu --reps=1 n=100\n' "$tilec" "$tmp/small.tile" >"$tmp/run"
chmod +x "$tmp/tune" "$tmp/run"
tune="$tmp/tune" run="$tmp/run"

# A good tuning file with the key n=128; `file` is its path.
expect 0 "first tune" -- "$tune" n=100
file=$(ls "$TILE_CACHE_DIR"/tuning/*.json 2>/dev/null | head -1)
[ -f "$file" ] || { echo "FAIL: no tuning file after the first tune"; exit 1; }
cp "$file" "$tmp/good.json"

# The log sink: asked-for autotuning choices print as they are, routine activity not at all.
expect 0 "run with TILE_PRINT_AUTOTUNING=1" -- env TILE_PRINT_AUTOTUNING=1 "$run"
has "^tile: autotuning: 'inc' key 'n=128;' -> BLOCK=" err "autotuning choice printed"
n=$((n + 1))
grep -q "warning\|compiled '" "$tmp/err" && bad "a clean run printed a warning or routine activity"

# damaged_file CASE SHOW_EXIT: after $file was damaged by the caller (its old bytes in
# $tmp/damaged, or $tmp/damaged absent for a FIFO or a directory), every reader finishes with
# a warning (cache show exits SHOW_EXIT: 1 when nothing could be read, 0 when only some
# entries were malformed) and a tune moves the damaged file aside and saves a new one.
damaged_file() {
    c=$1
    expect 0 "$c: cache list" -- "$tilec" cache list
    has "warning: the tuning file" err "$c: cache list warns"
    expect 0 "$c: run" -- "$run"
    has "warning: the tuning file" err "$c: run warns"
    expect "$2" "$c: cache show" -- "$tilec" cache show "$file"
    expect 0 "$c: tune" -- "$tune" n=1000
    has "warning: the tuning file" err "$c: tune warns about the file"
    has "moved to $file.damaged-1" err "$c: tune says where the file went"
    n=$((n + 1))
    if [ -e "$tmp/damaged" ]; then
        cmp -s "$tmp/damaged" "$file.damaged-1" || bad "$c: the damaged file was not kept as it was"
    else
        [ -e "$file.damaged-1" ] || bad "$c: the damaged file was not kept"
    fi
    expect 0 "$c: show after the tune" -- "$tilec" cache show inc
    has "key n=1024;" out "$c: the new result was saved"
    rm -rf "$file.damaged-1" "$tmp/damaged"
    cp "$tmp/good.json" "$file"
}

head -c 200 "$tmp/good.json" >"$file"; cp "$file" "$tmp/damaged"
damaged_file "truncated" 1
head -c 300 /dev/urandom >"$file"; cp "$file" "$tmp/damaged"
damaged_file "random bytes" 1
sed 's/"status": "ok"/"status": 17/' "$tmp/good.json" >"$file"; cp "$file" "$tmp/damaged"
damaged_file "wrong-shape entries" 0
echo '{"format": 1, "keys": [1, 2]}' >"$file"; cp "$file" "$tmp/damaged"
damaged_file "wrong-shape document" 1
rm "$file"; mkfifo "$file"
damaged_file "a FIFO" 1
rm "$file"; mkdir "$file"
damaged_file "a directory" 1

# The lock file beside the tuning file: a FIFO works, a directory stops the save (exit 1).
lock="${file%.json}.lock"
rm -rf "$lock"; mkfifo "$lock"
expect 0 "a FIFO as the lock file: tune" -- "$tune" n=1000
rm -rf "$lock"; mkdir "$lock"
expect 1 "a directory as the lock file: tune" -- "$tune" n=5000
has "warning: cannot save the tuning cache: cannot lock" err "a directory as the lock file: warning"
rm -rf "$lock"
cp "$tmp/good.json" "$file"

# export and import with special files: in place (a device node is never replaced), no hang.
expect 0 "export to /dev/null" -- "$tilec" cache export /dev/null
n=$((n + 1))
[ -c /dev/null ] || bad "export replaced /dev/null"
mkfifo "$tmp/pipe"
expect 1 "export to a FIFO without a reader" -- "$tilec" cache export "$tmp/pipe"
expect 1 "import from a FIFO" -- "$tilec" cache import "$tmp/pipe"
has "not a regular file" err "import from a FIFO: message"
expect 1 "import from /dev/zero" -- "$tilec" cache import /dev/zero
expect 1 "import from a directory" -- "$tilec" cache import "$tmp"

# Malformed entries beside good ones: shown with a warning.
sed '0,/"status": "ok"/s//"status": "weird"/' "$tmp/good.json" >"$file"
expect 0 "malformed entries: cache show" -- "$tilec" cache show "$file" --all
has "warning:.*malformed" err "malformed entries: show warns"
cp "$tmp/good.json" "$file"

# A cache that cannot be written: tune warns and exits 1 (nothing saved); run still works.
echo "not a directory" >"$tmp/blocker"
expect 1 "cache under a file: tune" -- env TILE_CACHE_DIR="$tmp/blocker/cache" "$tilec" tune \
    "$tmp/small.tile" --backend=cpu --reps=1 n=100
has "warning: cannot save the tuning cache" err "cache under a file: warning"
has "not saved to the tuning cache" err "cache under a file: the error names it"
expect 1 "cache under a file: isolated tune" -- env TILE_TUNE_ISOLATE=1 TILE_CACHE_DIR="$tmp/blocker/cache" \
    "$tilec" tune "$tmp/small.tile" --backend=cpu --reps=1 n=100
has "warning: tuning in this process, without fault isolation: cannot create" err \
    "cache under a file: isolated tune says why it runs in process"
has "not saved to the tuning cache" err "cache under a file: isolated tune, the error names it"
expect 0 "cache under a file: run" -- env TILE_CACHE_DIR="$tmp/blocker/cache" "$tilec" run \
    "$tmp/small.tile" --backend=cpu --reps=1 n=100
has "warning: cannot create the kernel cache directory" err "cache under a file: run warns once"

# Permissions: as root (CI containers) chmod stops nothing, so these run as user nobody
# through setpriv where it exists, and are skipped visibly where it does not.
as_user=""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    chmod 755 "$tmp"
fi
if [ -n "$as_user" ] && ! $as_user "$tilec" --version >/dev/null 2>&1; then
    skip "unreadable tuning file and read-only directory: user nobody cannot run $tilec"
elif [ "$(id -u)" = 0 ] && [ -z "$as_user" ]; then
    skip "unreadable tuning file and read-only directory: running as root without setpriv"
else
    perm="$tmp/perm"
    mkdir -p "$perm/tuning" && cp "$tmp/good.json" "$perm/tuning/$(basename "$file")"
    [ -n "$as_user" ] && chown -R 65534:65534 "$perm"
    pfile="$perm/tuning/$(basename "$file")"
    # An unreadable tuning file: moved aside byte for byte, never replaced by the new results.
    chmod 000 "$pfile"
    expect 0 "unreadable: tune" -- env TILE_CACHE_DIR="$perm" $as_user "$tune" n=1000
    has "warning: the tuning file.*Permission denied" err "unreadable: tune warns"
    has "moved to $pfile.damaged-1" err "unreadable: tune says where the file went"
    n=$((n + 1))
    chmod 644 "$pfile.damaged-1" 2>/dev/null
    cmp -s "$tmp/good.json" "$pfile.damaged-1" || bad "unreadable: the old file was not kept"
    # A read-only tuning directory: the tune warns and exits 1; the file is untouched.
    cp "$pfile" "$tmp/before.json"
    chmod 555 "$perm/tuning"
    expect 1 "read-only tuning directory: tune" -- env TILE_CACHE_DIR="$perm" $as_user "$tune" n=5000
    has "warning: cannot save the tuning cache" err "read-only: warning"
    has "not saved to the tuning cache" err "read-only: the error says so"
    chmod 755 "$perm/tuning"
    n=$((n + 1))
    cmp -s "$tmp/before.json" "$pfile" || bad "read-only: the tuning file changed"
fi

# Damaged kernel cache files: a warning, recompiled, replaced.
for k in "$TILE_CACHE_DIR"/kernels/*; do
    head -c 100 "$k" >"$k.cut" && mv "$k.cut" "$k"
done
expect 0 "truncated kernel cache file: run" -- "$run"
has "warning: ignoring the damaged kernel cache file" err "truncated kernel file warns"
for k in "$TILE_CACHE_DIR"/kernels/*; do rm -f "$k"; mkfifo "$k"; done
expect 0 "FIFO as a kernel cache file: run" -- "$run"
for k in "$TILE_CACHE_DIR"/kernels/*; do rm -rf "$k"; mkdir "$k"; done
expect 0 "directory as a kernel cache file: run" -- "$run"
has "warning: cannot save compiled code" err "a kernel file that cannot be replaced warns"
rm -rf "$TILE_CACHE_DIR/kernels"
echo "not a directory" >"$TILE_CACHE_DIR/kernels"
expect 0 "no kernel cache: tune still saves its results (exit 0)" -- "$tune" n=300
has "warning: cannot create the kernel cache directory" err "no kernel cache: tune warns"
rm -rf "$TILE_CACHE_DIR/kernels"

# Concurrent tuners of four keys into one file: every key survives, the earlier one too.
cp "$tmp/good.json" "$file"
for size in 1000 5000 20000 70000; do
    timeout 120 "$tilec" tune "$tmp/small.tile" --backend=cpu --reps=1 n=$size \
        >"$tmp/con.$size" 2>&1 &
done
wait
expect 0 "concurrent tuners: show" -- "$tilec" cache show inc
for key in 128 1024 8192 32768 131072; do
    has "key n=$key;" out "concurrent tuners: key n=$key kept"
done

echo "$((n - fail))/$n passed, $skipped skipped"
[ $fail -eq 0 ]
