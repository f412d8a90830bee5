#!/usr/bin/env bash
# `gtsim --stats` works on every zoo model, and its JSON totals agree with a second,
# independent implementation of the accounting: the shape tracking and MAC/parameter counts
# that workloads/gen_zoo.py does while writing the file (Python, docs/gtg.md conventions).
# The published figures themselves are checked in tests/unit/test_zoo.c.
# Run from the repository root with $GTSIM set (tests/run.sh does).
set -u
. "$(dirname "$0")/lib.sh"

for m in resnet50 bert-128 bert-256 bert-384 bert-512 dlrm mobilenetv2 vit-b16 densenet121 conformer; do
  "$GTSIM" --stats "workloads/$m.gtg" >"$tmp/$m.txt" 2>&1; rc=$?
  [ $rc -eq 0 ] && grep -q "^total " "$tmp/$m.txt"; check_rc "$m: --stats text exits 0 with a total row" $?
  "$GTSIM" --stats "workloads/$m.gtg" --json >"$tmp/$m.json" 2>"$tmp/$m.err"; rc=$?
  if [ $rc -ne 0 ]; then sed 's/^/# /' "$tmp/$m.err" | head -5; fi
  # Header batch, total MACs (= batch x per-sample MACs) and parameters against the generator.
  $PY - "$m" "$tmp/$m.json" <<'PYEOF'
import json, sys
sys.dont_write_bytecode = True  # no __pycache__ in workloads/
sys.path.insert(0, "workloads")
import gen_zoo
name, path = sys.argv[1], sys.argv[2]
g = dict(gen_zoo.MODELS)[name]()
d = json.load(open(path))
t = d["totals"]
ok = True
for what, got, want in (("batch", d["batch"], g.batch),
                        ("macs", t["macs"], g.batch * g.macs),
                        ("macs_per_sample", t["macs_per_sample"], g.macs),
                        ("params", t["params"], g.params),
                        ("param_bytes (fp16)", t["param_bytes"], 2 * g.params)):
    if got != want:
        print("# %s: %s is %s, the generator counts %s" % (name, what, got, want))
        ok = False
sys.exit(0 if ok else 1)
PYEOF
  check_rc "$m: --stats --json totals equal the generator's accounting" $?
done
# --batch rebinds N: MACs scale, parameters do not.
"$GTSIM" --stats workloads/bert-384.gtg --batch 3 --json >"$tmp/b3.json" 2>&1
$PY -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
ok = b["batch"] == 3 and b["totals"]["macs"] == 3 * a["totals"]["macs_per_sample"] \
     and b["totals"]["params"] == a["totals"]["params"]
sys.exit(0 if ok else 1)' "$tmp/bert-384.json" "$tmp/b3.json"
check_rc "bert-384 --batch 3: MACs x3, same parameters" $?
done_testing
