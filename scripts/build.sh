#!/usr/bin/env bash
# build.sh: configures and builds tile into build/ (or $BUILD_DIR), passing extra arguments to
# cmake, e.g. scripts/build.sh -DTILE_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build}
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
ninja -C "$dir"
