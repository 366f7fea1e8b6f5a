#!/usr/bin/env bash
# setup.sh: installs what building and testing tile needs on Debian 12 (idempotent: does
# nothing when everything is there). Uses sudo only when not run as root.
set -euo pipefail

# libamdhip64-5: Debian's HIP runtime, so the HIP backend's loader runs against the real
# library in CI (with no AMD GPU it must report "no device", cleanly)
PKGS=(cmake ninja-build make gcc libc6-dev git xz-utils file
      llvm-22-dev llvm-22-tools lld-22 clang-22 libclang-rt-22-dev
      libamdhip64-5
      re2c bison zlib1g-dev libzstd-dev libxml2-dev libz3-dev libjansson-dev python3 python3-numpy pkg-config)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#PKGS[@]} packages present"
    exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
