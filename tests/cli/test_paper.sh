#!/usr/bin/env bash
# test_paper.sh — scripts/paper, the paper's evaluation as one command, at --quick size on
# configs/tiny.cfg with two models: the runs, tables, figures and summary it writes; the
# speedup it prints against cycles read back from the run JSONs; resume (nothing reruns, a
# deleted run reruns alone); a failing run recorded, shown as "failed" and exit 1; bad names.
set -u
. "$(dirname "$0")/lib.sh"
case "$GTSIM" in /*) ;; *) GTSIM="$PWD/$GTSIM" ;; esac
P="scripts/paper --quick --configs tiny --models resnet50,dlrm --gtsim $GTSIM"
out=$tmp/p
R=$out/runs/tiny
strategies="tvm astitch graphturbo-gb graphturbo-lb graphturbo-instances graphturbo-full"

$P --out "$out" >"$tmp/o1" 2>&1; rc=$?
check_eval "scripts/paper --quick on tiny, resnet50 + dlrm: exit 0" "[ $rc -eq 0 ]"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/o1" | tail -20
check_eval "it reports 12 runs, none failed" "grep -q '^scripts/paper: 12 runs, 0 reused, 0 failed' '$tmp/o1'"
missing=
for m in resnet50 dlrm; do for s in $strategies; do
  [ -s "$R/$m/$s.json" ] || missing="$missing $m/$s"
done; done
check_eval "a JSON per model x strategy in runs/tiny/MODEL/STRATEGY.json" "[ -z '$missing' ]"
check_eval "--quick: batch = clusters of tiny (2), 1 sample per cluster" \
  "$PY -c 'import json; d=json.load(open(\"$R/resnet50/graphturbo-full.json\")); assert (d[\"batch\"], d[\"batch_per_cluster\"], d[\"strategy\"]) == (2, 1, \"graphturbo:full\")'"
check_eval "table2.md, table3.md and summary.json (valid JSON) are written" \
  "[ -s '$out/table2.md' ] && [ -s '$out/table3.md' ] && $PY -c 'import json; json.load(open(\"$out/summary.json\"))'"
for f in fig14 fig15 fig17; do
  check_eval "$f.png is a PNG" "[ \"\$(head -c 8 '$out/$f.png' | od -An -tx1 | tr -d ' \n')\" = 89504e470d0a1a0a ]"
done
check_eval "no temporary files are left in the output directory" \
  "[ -z \"\$(find '$out' -name '*.tmp')\" ]"

# table2.md: a row per model with a number under every strategy; its speedup = the JSON cycles'
cat >"$tmp/t2.py" <<'PYEOF'
import json, sys
out, want_models = sys.argv[1], sys.argv[2].split(",")
strategies = ["tvm", "astitch", "graphturbo:gb", "graphturbo:lb", "graphturbo:instances",
              "graphturbo:full"]
lines = open(out + "/table2.md").read().splitlines()
head = next(l for l in lines if l.startswith("| model |"))
cols = [c.strip() for c in head.strip("|").split("|")]
assert all(s in cols for s in strategies), cols
rows = {}
for l in lines:
    if l.startswith("| ") and not l.startswith("| model |"):
        cells = [c.strip() for c in l.strip("|").split("|")]
        rows[cells[0]] = dict(zip(cols, cells))
what = sys.argv[3]
for m in want_models:
    r = rows[m]
    if what == "rows":
        for s in strategies:
            float(r[s])  # a number, not "failed" or empty
    else:
        cyc = {}
        for s in ("tvm", "astitch", "graphturbo:full"):
            cyc[s] = json.load(open("%s/runs/tiny/%s/%s.json" % (out, m, s.replace(":", "-"))))["cycles"]
        assert r["full vs tvm"] == "%.2fx" % (cyc["tvm"] / cyc["graphturbo:full"]), (m, r, cyc)
        assert r["full vs astitch"] == "%.2fx" % (cyc["astitch"] / cyc["graphturbo:full"]), (m, r, cyc)
PYEOF
check_eval "table2.md has a row per model with a throughput under every strategy" \
  "$PY '$tmp/t2.py' '$out' resnet50,dlrm rows"
check_eval "table2.md's speedups equal cycles_tvm (astitch) / cycles_graphturbo:full of the run JSONs" \
  "$PY '$tmp/t2.py' '$out' resnet50,dlrm speedup"
check_eval "table2.md has the geometric mean row" "grep -qE '^\| geomean \|.* [0-9]+\.[0-9]{2}x \|' '$out/table2.md'"
check_eval "table3.md has a DDR / GB / LB cell for every strategy of each model" \
  "[ \$(grep -cE '^\| (resnet50|dlrm) (\| [0-9]+ / [0-9]+ / [0-9]+( \([0-9]+ spills\))? ){6}\|$' '$out/table3.md') -eq 2 ]"
check_eval "summary.json holds the runs and ResNet-50's per-stage fractions" \
  "$PY -c 'import json; s=json.load(open(\"$out/summary.json\")); assert s[\"runs\"][\"tiny\"][\"dlrm\"][\"tvm\"][\"status\"]==\"ok\"; f=s[\"fig17_resnet50_stage_flop_fraction\"][\"tiny\"]; assert set(f)=={\"tvm\",\"graphturbo:full\"}; assert all(0<v<=1 for v in f[\"tvm\"].values()) and len(f[\"tvm\"])==5'"

# resume: a second invocation runs nothing and rewrites byte-identical tables
mt() { find "$R" -name '*.json' -printf '%p %T@\n' | sort; }
mt >"$tmp/mt1"
cp "$out/table2.md" "$out/table3.md" "$out/summary.json" "$tmp/"
$P --out "$out" >"$tmp/o2" 2>&1; rc=$?
mt >"$tmp/mt2"
check_eval "second invocation: exit 0, '0 runs', 12 reused" "[ $rc -eq 0 ] && grep -q '^scripts/paper: 0 runs, 12 reused' '$tmp/o2'"
check_eval "second invocation leaves every run JSON untouched (mtimes)" "cmp -s '$tmp/mt1' '$tmp/mt2'"
check_eval "regenerated table2.md, table3.md, summary.json are byte-identical" \
  "cmp -s '$tmp/table2.md' '$out/table2.md' && cmp -s '$tmp/table3.md' '$out/table3.md' && cmp -s '$tmp/summary.json' '$out/summary.json'"

rm "$R/dlrm/astitch.json"
$P --out "$out" >"$tmp/o3" 2>&1; rc=$?
mt >"$tmp/mt3"
check_eval "a deleted run JSON: exactly that run again ('1 run', 11 reused)" \
  "[ $rc -eq 0 ] && grep -q '^scripts/paper: 1 run, 11 reused' '$tmp/o3' && [ \$(grep -c '^\[[0-9]*/[0-9]*\] ' '$tmp/o3') -eq 1 ] && grep -q '^\[1/1\] tiny/dlrm/astitch: ok' '$tmp/o3'"
check_eval "... the JSON is back and no other run JSON changed" \
  "[ -s '$R/dlrm/astitch.json' ] && [ \"\$(grep -v /dlrm/astitch.json '$tmp/mt1')\" = \"\$(grep -v /dlrm/astitch.json '$tmp/mt3')\" ]"

# a failing run: recorded with its stderr, "failed" in the tables, exit 1; retried next time
cat >"$tmp/fake" <<F
#!/usr/bin/env bash
case "\$*" in *dlrm.gtg*astitch*) echo "gtsim: simulation error: injected by test_paper" >&2; exit 2 ;; esac
exec "$GTSIM" "\$@"
F
chmod +x "$tmp/fake"
F="scripts/paper --quick --configs tiny --models dlrm --strategies tvm,astitch,graphturbo --out $tmp/f"
$F --gtsim "$tmp/fake" >"$tmp/o4" 2>&1; rc=$?
check_eval "a failing run: exit 1, its stderr in runs/.../astitch.err" \
  "[ $rc -eq 1 ] && grep -q 'injected by test_paper' '$tmp/f/runs/tiny/dlrm/astitch.err' && [ ! -e '$tmp/f/runs/tiny/dlrm/astitch.json' ]"
check_eval "... shown as 'failed' in table2.md and table3.md, and listed with its message" \
  "grep -qE '^\| dlrm \|.*\| failed \|' '$tmp/f/table2.md' && grep -qE '^\| dlrm \|.*\| failed \|' '$tmp/f/table3.md' && grep -q 'dlrm astitch: exit 2 .*injected by test_paper' '$tmp/f/table2.md'"
check_eval "... and the other runs' numbers are still there" \
  "grep -qE '^\| dlrm \| 2 \| 1 \| 1 \| [0-9.]+ \| failed \| [0-9.]+ \| [0-9.]+x \|' '$tmp/f/table2.md'"
$F --gtsim "$GTSIM" >"$tmp/o5" 2>&1; rc=$?
check_eval "... the next invocation retries only the failed run; exit 0, .err removed" \
  "[ $rc -eq 0 ] && grep -q '^scripts/paper: 1 run, 2 reused, 0 failed' '$tmp/o5' && [ ! -e '$tmp/f/runs/tiny/dlrm/astitch.err' ] && ! grep -qE '\| failed \||^Failed runs' '$tmp/f/table2.md'"

# user errors
scripts/paper --quick --configs tiny --models resnet50,nosuchnet --out "$tmp/e" >"$tmp/e1" 2>&1; rc=$?
check_eval "a bad --models name: exit 1 naming it" "[ $rc -eq 1 ] && grep -q \"unknown model 'nosuchnet'\" '$tmp/e1'"
scripts/paper --quick --configs nosuchcfg --models dlrm --out "$tmp/e" >"$tmp/e2" 2>&1; rc=$?
check_eval "a bad --configs name: exit 1 naming it" "[ $rc -eq 1 ] && grep -q \"unknown config 'nosuchcfg'\" '$tmp/e2'"
scripts/paper --quick --configs tiny --strategies tvm,fastest --out "$tmp/e" >"$tmp/e3" 2>&1; rc=$?
check_eval "a bad --strategies name: exit 1 naming it" "[ $rc -eq 1 ] && grep -q \"unknown strategy 'fastest'\" '$tmp/e3'"
check_eval "nothing ran for the bad names" "[ ! -e '$tmp/e/runs' ]"
scripts/paper --help >"$tmp/h" 2>&1; rc=$?
check_eval "--help: exit 0, warns about stcp920's minutes and GB per run" \
  "[ $rc -eq 0 ] && grep -q 'stcp920' '$tmp/h' && grep -q 'minutes' '$tmp/h' && grep -q -- '--jobs' '$tmp/h'"
done_testing
