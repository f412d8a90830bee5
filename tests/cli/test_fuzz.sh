#!/usr/bin/env bash
# test_fuzz.sh — a short CI run of the .gtg parser fuzzer: `make fuzz FUZZ_SECONDS=20` (seed
# corpus: the zoo). ok when libFuzzer finds no crash, no sanitizer report and no round-trip
# mismatch in that time; SKIP when clang's libFuzzer is not installed. A crash leaves its
# input in $BUILD/fuzz/crash-*: fix the bug, then keep the input in tests/fuzz/regress/.
set -u
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$tmp/t.c"
if ! clang -fsanitize=fuzzer "$tmp/t.c" -o "$tmp/t" >/dev/null 2>&1; then
  ok "# SKIP clang libFuzzer unavailable"
  done_testing
  exit
fi
rm -f "$BUILD"/fuzz/crash-* "$BUILD"/fuzz/leak-* "$BUILD"/fuzz/timeout-* 2>/dev/null
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
if make --no-print-directory fuzz BUILD="$BUILD" FUZZ_SECONDS="${FUZZ_SECONDS:-20}" >"$tmp/log" 2>&1 &&
   ! ls "$BUILD"/fuzz/crash-* >/dev/null 2>&1; then
  ok "fuzz_gtg ran $(grep -o 'Done [0-9]* runs' "$tmp/log" | head -1 | cut -d' ' -f2) inputs without a crash"
else
  nok "fuzz_gtg found a problem"
  grep -E 'ERROR|runtime error|SUMMARY|Test unit written|does not parse|round trip' "$tmp/log" | head -20 | sed 's/^/# /'
fi
done_testing
