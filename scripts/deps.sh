#!/usr/bin/env bash
# Installs the Debian packages gtsim builds and tests with, when they are missing.
# As root: apt-get install -y (after one apt-get update if a package is not found).
# Otherwise: print the exact command and fail, so nothing half-builds.
# Optional packages (a test skips, saying why, without them) are installed as root when the
# package lists have them, and their failure fails nothing: clang's libFuzzer runtime (the fuzz
# test), Debian's slurm-wlm and munge (tests/cli/test_slurm.sh, gtsim-sweep --backend slurm).
set -u
pkgs=(g++ make pkg-config zlib1g-dev libinih-dev libsystemc-dev libprotobuf-c-dev libglpk-dev
      protobuf-c-compiler libonnx-dev libcmocka-dev python3 python3-matplotlib python3-onnx
      python3-numpy clang time)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done

# The optional packages not installed yet that apt knows. The libFuzzer runtime is a
# Recommends of clang that minimal images skip; its name carries clang's major version.
optional_missing() {
  local want=(slurm-wlm munge) p v
  if command -v clang >/dev/null 2>&1; then
    v=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
    [ -n "$v" ] && want+=("libclang-rt-$v-dev")
  fi
  for p in "${want[@]}"; do
    installed "$p" || ! apt-cache show "$p" >/dev/null 2>&1 || echo "$p"
  done
}
install_optional() {
  [ "$(id -u)" -eq 0 ] || return 0
  local opt
  mapfile -t opt < <(optional_missing)
  [ ${#opt[@]} -eq 0 ] && return 0
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${opt[@]}" >/dev/null 2>&1 ||
    echo "gtsim: optional ${opt[*]} not installed (the tests that need them will skip)" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
  install_optional
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
install_optional   # clang may have just been installed: its libFuzzer runtime too
