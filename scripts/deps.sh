#!/usr/bin/env bash
# Installs the Debian packages gtsim builds and tests with, when they are missing.
# As root: apt-get install -y (after one apt-get update if a package is not found).
# Otherwise: print the exact command and fail, so nothing half-builds.
set -u
pkgs=(g++ make pkg-config zlib1g-dev libinih-dev libsystemc-dev libprotobuf-c-dev libglpk-dev
      protobuf-c-compiler libonnx-dev libcmocka-dev python3 python3-matplotlib python3-onnx
      python3-numpy clang time)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Optional: clang's libFuzzer runtime (a Recommends of clang that minimal images skip). The
# fuzz test skips without it; its name carries clang's major version, so it is looked up.
optional=()
if command -v clang >/dev/null 2>&1; then
  v=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
  rt="libclang-rt-$v-dev"
  if [ -n "$v" ] && ! dpkg-query -W -f='${Status}' "$rt" 2>/dev/null | grep -q 'install ok installed' &&
     apt-cache show "$rt" >/dev/null 2>&1; then optional+=("$rt"); fi
fi
if [ ${#missing[@]} -eq 0 ]; then
  if [ ${#optional[@]} -ne 0 ] && [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${optional[@]}" >/dev/null 2>&1 ||
      echo "gtsim: optional ${optional[*]} not installed (the fuzz test will skip)" >&2
  fi
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "gtsim: missing Debian packages: ${missing[*]}" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "gtsim: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y "${missing[@]}"; then
  apt-get update && apt-get install -y "${missing[@]}" || exit 1
fi
# clang may have just been installed: pick up its libFuzzer runtime too (optional).
if command -v clang >/dev/null 2>&1; then
  v=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
  apt-get install -y "libclang-rt-$v-dev" >/dev/null 2>&1 ||
    echo "gtsim: optional libclang-rt-$v-dev not installed (the fuzz test will skip)" >&2
fi
