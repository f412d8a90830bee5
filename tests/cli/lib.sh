# tests/cli/lib.sh — the helpers every shell test in tests/cli/ shares. Sourced, not run: each
# test_*.sh does `. "$(dirname "$0")/lib.sh"` right after `set -u` (tests/run.sh runs them as
# `bash tests/cli/test_X.sh` from the repository root, and runs only test_*.sh, never this file).
# It provides:
#   GTSIM        the simulator binary: build/gtsim unless GTSIM is already set (a test that may
#                cd sets its own absolute default before sourcing this file)
#   PY           the Python the tests use, /usr/bin/python3
#   tmp          a fresh temporary directory, removed when the test exits (trap on EXIT)
#   n, failed    how many checks were reported so far, and how many of them failed
#   ok NAME                        print "ok N - NAME"
#   nok NAME [DETAIL...]           print "not ok N - NAME", then each DETAIL as a "# DETAIL" line
#   check NAME CMD [ARG...]        ok when CMD exits 0, else nok with "failed: CMD ARG..."
#   check_eval NAME CONDITION      ok when `eval CONDITION` succeeds, else nok with CONDITION
#   check_rc NAME RC [DETAIL...]   ok when RC, an exit status taken before, is 0, else nok
#   stat KEY FILE                  the number on the line "KEY  VALUE ..." of a text report FILE
#                                  (it hides the stat command: call that as `command stat`)
#   shard K [heavy]                true when case K (0, 1, ...) is this run's: always, unless
#                                  tests/run.sh runs the test in shards (its header says
#                                  "# shards: N"; GS_SHARD=i/N): then heavy cases (GBs of
#                                  memory each) all in shard 0, one after another, never two
#                                  at once; the others round-robin over shards 1..N-1
#   done_testing                   print the plan line "1..N"; return non-zero when a check
#                                  failed — end every test with it, so that its exit status
#                                  says whether it passed
# The output is the TAP-like text tests/run.sh reads: "ok N - NAME", "not ok N - NAME", "# ...".

GTSIM=${GTSIM:-build/gtsim}
PY=/usr/bin/python3
n=0 failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift
  local l; for l in "$@"; do echo "# $l"; done
}
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name" "failed: $*"; fi; }
check_eval() { if eval "$2"; then ok "$1"; else nok "$1" "$2"; fi; }
check_rc() {
  local name=$1 rc=$2; shift 2
  if [ "$rc" -eq 0 ]; then ok "$name"; else nok "$name" "$@"; fi
}
stat() { sed -n "s/^$1  *\([0-9.e+]*\) .*/\1/p" "$2"; }
shard() {
  [ -z "${GS_SHARD:-}" ] && return 0
  local i=${GS_SHARD%/*} n=${GS_SHARD#*/}
  if [ "${2:-}" = heavy ] || [ "$n" -eq 1 ]; then [ "$i" -eq 0 ]; else [ $((1 + $1 % (n - 1))) -eq "$i" ]; fi
}
done_testing() { echo "1..$n"; [ "$failed" -eq 0 ]; }
