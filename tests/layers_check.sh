#!/bin/sh
# layers_check.sh: the library's layers never point upward: lang < compiler < runtime < tuner.
# No object of a layer references a symbol that a layer above it defines (nm over the build's
# object files), so each layer builds and links with only those below it.
# usage: tests/layers_check.sh OBJECT_DIR   (the tile_objects target's directory)
dir=${1:?usage: layers_check.sh OBJECT_DIR}
command -v nm >/dev/null || { echo "skipped: no nm"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
layers="lang compiler runtime tuner"
for l in $layers; do
    ls "$dir/$l"/*.o >/dev/null 2>&1 || { echo "FAIL: no objects under $dir/$l"; exit 1; }
    nm -g --defined-only "$dir/$l"/*.o 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/$l.def"
    nm -u "$dir/$l"/*.o 2>/dev/null | awk '{print $NF}' | sort -u >"$tmp/$l.undef"
done
fail=0
below=
for l in $layers; do
    for up in $layers; do
        case " $below $l " in *" $up "*) continue ;; esac # $up is $l or below it
        bad=$(comm -12 "$tmp/$l.undef" "$tmp/$up.def" | head -5 | tr '\n' ' ')
        if [ -n "$bad" ]; then
            echo "FAIL: $l uses $up (above it): $bad"
            fail=1
        fi
    done
    below="$below $l"
done
[ $fail -eq 0 ] && echo "layers ok: $layers, none uses a layer above it"
exit $fail
