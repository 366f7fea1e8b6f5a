#!/usr/bin/env bash
# install_check.sh: installs a build into a fresh prefix and builds two consumer programs
# against the installed tree only: one with CMake's find_package(tile), one with
# pkg-config. Each runs a kernel on the CPU backend; the pkg-config one also loads a stdlib
# file by its relative name from a directory outside the source tree, found beside the
# installed library (share/tile/stdlib: a file only the installed tree has).
#   usage: install_check.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
for f in bin/tilec include/tile.h lib/libtile.a lib/pkgconfig/tile.pc lib/cmake/tile/tileConfig.cmake \
         lib/cmake/tile/tileConfigVersion.cmake share/tile/stdlib/attention/flash_fwd.tile; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
ls "$prefix"/lib/libtile.so.0 >/dev/null 2>&1 || fail "not installed: lib/libtile.so.0"
# only the tile_* API leaves the shared library
bad=$(nm -D --defined-only "$prefix/lib/libtile.so" | awk '{print $3}' | grep -v '^tile_' | head -3)
[ -z "$bad" ] || fail "libtile.so exports more than tile_*: $bad"
mkdir -p "$prefix/share/tile/stdlib/installcheck"
printf 'kernel marker(x: *f32) { store(x, 1.0); }\n' >"$prefix/share/tile/stdlib/installcheck/marker.tile"

cat >"$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "tile.h"
/* y = 3 * x on the CPU backend; with an argument, a module loaded by that relative name */
int main(int argc, char **argv) {
    tile_Context *ctx; tile_Module *m; tile_Kernel *k;
    if (strcmp(tile_version(), TILE_VERSION) != 0) return printf("version %s\n", tile_version()), 1;
    if (tile_context_open(TILE_BACKEND_CPU, &ctx) != TILE_OK) return puts("no context"), 1;
    const char *src = "@grid(1)\nkernel k(x: *f32, y: *f32) {\n"
                      "    let i = arange(0, 16);\n    store(y + i, load(x + i) * 3.0);\n}\n";
    float x[16], y[16];
    tile_DevPtr dx, dy;
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    if (tile_module_load_string(ctx, "k.tile", src, &m) || tile_kernel_get(m, "k", &k) ||
        tile_malloc(ctx, sizeof x, &dx) || tile_malloc(ctx, sizeof y, &dy) ||
        tile_copy_to_device(ctx, dx, x, sizeof x)) return printf("%s\n", tile_error(ctx)), 1;
    tile_Arg args[] = {tile_ptr(dx), tile_ptr(dy)};
    if (tile_launch(k, args, 2, NULL, 0) || tile_copy_to_host(ctx, y, dy, sizeof y))
        return printf("%s\n", tile_error(ctx)), 1;
    for (int i = 0; i < 16; i++) if (y[i] != 3.0f * (float)i) return puts("wrong result"), 1;
    for (int i = 1; i < argc; i++)
        if (tile_module_load_file(ctx, argv[i], &m) != TILE_OK)
            return printf("%s\n", tile_error(ctx)), 1;
    tile_context_close(ctx);
    puts("ok");
    return 0;
}
C
# 1. find_package(tile) in a CMake project
mkdir -p "$tmp/cmake_app"
cat >"$tmp/cmake_app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(tile 0.1 REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE tile::tile)
CM
cmake -S "$tmp/cmake_app" -B "$tmp/cmake_app/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    >"$tmp/cmake.log" 2>&1 && cmake --build "$tmp/cmake_app/build" >>"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log"; fail "find_package(tile) consumer did not build"; }
out=$("$tmp/cmake_app/build/consumer") || fail "find_package consumer: $out"
echo "ok   find_package(tile) consumer: $out"
# 2. pkg-config, run from a directory outside the source tree: stdlib files by relative name
command -v pkg-config >/dev/null || fail "pkg-config is missing (scripts/setup.sh installs it)"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tile) || fail "pkg-config tile"
cc "$tmp/consumer.c" $flags -Wl,-rpath,"$prefix/lib" -o "$tmp/pc_consumer" 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log"; fail "pkg-config consumer did not build"; }
out=$(cd "$tmp" && ./pc_consumer attention/flash_fwd.tile installcheck/marker.tile) ||
    fail "pkg-config consumer: $out"
echo "ok   pkg-config consumer (stdlib found beside the installed library): $out"
# the installed tilec finds the installed stdlib too
(cd "$tmp" && "$prefix/bin/tilec" list installcheck/marker.tile >/dev/null) || fail "installed tilec: stdlib"
echo "ok   installed tilec finds share/tile/stdlib"
# the installed Python package finds the installed library (no TILE_LIBRARY)
out=$(cd "$tmp" && env -u TILE_LIBRARY PYTHONPATH="$prefix/lib/python" python3 -c \
    'import tile; c = tile.Context("cpu"); m = c.load("installcheck/marker.tile"); print(tile.version(), m.kernels)') ||
    fail "installed Python package: $out"
echo "ok   installed Python package: $out"
