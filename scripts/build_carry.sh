#!/usr/bin/env bash
# build_carry.sh: builds tilec, test_exec, embed and paged_attention with LLVM linked statically into
# build-static/, strips them, and packs them (with any shared library they need that a bare
# machine may lack) as .carry/bin.tar.xz for the GPU machine, which has no LLVM.
# scripts/gpu_check.sh (tests) and scripts/gpu_bench.sh (bench/tensor_cores.py and
# bench/attention.py, which need only tilec: it is its own tuning worker) unpack and run them
# there.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build-static scripts/build.sh -DTILE_STATIC_LLVM=ON -DCMAKE_BUILD_TYPE=Release
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for b in tilec tests/exec/test_exec tests/runtime/test_stream tests/tuner/test_isolate examples/embed \
         examples/paged_attention bench/launch_overhead bench/compile_time; do
    strip -s -o "$stage/bin/$(basename "$b")" "build-static/$b"
done
# libtile.so with LLVM inside, for the Python package's tests there
cp -L build-static/libtile.so.0 "$stage/lib/"
strip -s "$stage/lib/libtile.so.0"
# shared libraries outside glibc (libz3, libxml2, ...) travel along
for lib in $(ldd "$stage"/bin/* "$stage"/lib/libtile.so.0 | awk '/=> \//{print $3}' | sort -u); do
    case $(basename "$lib") in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
    esac
done
mkdir -p .carry
# a dictionary larger than all binaries together: the LLVM they share is stored once
XZ_OPT="--lzma2=preset=6,dict=256MiB -T1" tar -C "$stage" -cJf .carry/bin.tar.xz bin lib
ls -l .carry/bin.tar.xz
tar -tJf .carry/bin.tar.xz
