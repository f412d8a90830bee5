#!/usr/bin/env bash
# The checked-in zoo (workloads/*.gtg) is exactly what workloads/gen_zoo.py writes.
# When a change to the generator is intended, refresh with:
#     /usr/bin/python3 workloads/gen_zoo.py workloads/
# Run from the repository root (tests/run.sh does).
set -u
. "$(dirname "$0")/lib.sh"
MODELS="resnet50 bert-128 bert-256 bert-384 bert-512 dlrm mobilenetv2 vit-b16 densenet121 conformer"

mkdir "$tmp/a" "$tmp/b"
$PY workloads/gen_zoo.py "$tmp/a"; check_rc "generator runs" $?
for m in $MODELS; do
  if [ ! -f "workloads/$m.gtg" ]; then nok "workloads/$m.gtg is checked in"; continue; fi
  if diff -u "workloads/$m.gtg" "$tmp/a/$m.gtg" >"$tmp/diff" 2>&1; then
    ok "workloads/$m.gtg matches the generator"
  else
    nok "workloads/$m.gtg matches the generator (refresh: $PY workloads/gen_zoo.py workloads/)"
    head -20 "$tmp/diff" | sed 's/^/# /'
  fi
done
# Exactly the ten models: no stray or missing file in either direction.
ls "$tmp/a" | sort >"$tmp/list"
printf '%s.gtg\n' $MODELS | sort >"$tmp/want"
diff -q "$tmp/list" "$tmp/want" >/dev/null; check_rc "generator writes exactly the ten zoo files" $?
# Deterministic: a second run is byte-identical, and no temporary file is left behind.
$PY workloads/gen_zoo.py "$tmp/b" && diff -r "$tmp/a" "$tmp/b" >/dev/null; check_rc "two runs are identical" $?
# Each header batch is the paper's (GraphTurbo OSDI'23 evaluation: 64, 32, 16, 8, 8, 1024, 128, 32, 32, 12).
bad=0
for mb in resnet50:64 bert-128:32 bert-256:16 bert-384:8 bert-512:8 dlrm:1024 mobilenetv2:128 \
          vit-b16:32 densenet121:32 conformer:12; do
  m=${mb%%:*}; b=${mb#*:}
  grep -qx "model $m batch=$b dtype=fp16" "workloads/$m.gtg" || { echo "# $m: header batch is not $b"; bad=1; }
done
check_rc "header batch of every model is the paper's" $bad
# Usage errors exit 1 with a message, never a traceback.
$PY workloads/gen_zoo.py --only nosuchmodel "$tmp/a" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "unknown model nosuchmodel" "$tmp/err" && ! grep -q Traceback "$tmp/err"
check_rc "unknown model is a usage error (exit 1)" $?
$PY workloads/gen_zoo.py "$tmp/does-not-exist" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "not a directory" "$tmp/err"; check_rc "missing output directory is an error (exit 1)" $?
done_testing
