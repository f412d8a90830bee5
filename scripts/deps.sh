#!/usr/bin/env bash
# Installs the Debian packages gtsim builds and tests with, when they are missing.
# As root: apt-get install -y (after one apt-get update if a package is not found).
# Otherwise: print the exact command and fail, so nothing half-builds.
set -u
pkgs=(g++ make pkg-config zlib1g-dev libinih-dev libsystemc-dev libprotobuf-c-dev
      protobuf-c-compiler libonnx-dev libcmocka-dev python3 python3-matplotlib python3-onnx
      python3-numpy clang time)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
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
