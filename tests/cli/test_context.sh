#!/usr/bin/env bash
# test_context.sh — reports carry their context (docs/cli.md, "Report context"): every CSV
# record of --compare and of a single run leads with the version, arch, arch file, model, model
# file, batch, chunk size and its source, every --set override and the batches per cluster;
# the JSON has the same as a "context" object; the text ends with it. The chunk size is the
# config key chip.chunk_bytes: GTSIM_CHUNK_BYTES overrides it, --set overrides both, and the
# override reaches the simulator (same cycles whichever way 512 is given). Expected values
# come from --describe --json and --version, never from the report under test.
set -u
. "$(dirname "$0")/lib.sh"
M=tests/cases/gtg/tiny_cnn.gtg
A=(--arch tiny)

"$GTSIM" "${A[@]}" --describe --json -o "$tmp/arch.json"
version=$("$GTSIM" --version | awk '{print $2}')

# 1. --compare --csv with two overrides (one value holds commas): the context columns on every
# record, with the values the test derives on its own
"$GTSIM" "${A[@]}" "$M" --batch 4 --compare tvm,astitch,graphturbo --csv --set ddr.channels=4 \
  --set core.pe.units=mme,vec,scl -o "$tmp/c.csv" 2>"$tmp/err"
check_rc "compare --csv with --set: exit 0" $? "$(cat "$tmp/err")"
msg=$("$PY" - "$tmp/c.csv" "$tmp/arch.json" "$version" "$PWD/$M" <<'PYEOF'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
arch = json.load(open(sys.argv[2]))
head, body = rows[0], rows[1:]
want_cols = ["gtsim_version", "arch", "arch_file", "model", "model_file", "batch", "chunk_bytes",
             "chunk_source", "transfer_model", "set:ddr.channels", "set:core.pe.units", "batch_per_cluster", "strategy"]
err = []
if head[:len(want_cols)] != want_cols: err.append("header %s" % head[:len(want_cols)])
if len(body) != 3: err.append("%d rows" % len(body))
clusters = arch["config"]["chip"]["clusters"]
want = {"gtsim_version": sys.argv[3], "arch": arch["name"], "arch_file": arch["source"],
        "model": "tiny_cnn", "batch": "4", "chunk_bytes": str(arch["config"]["chip"]["chunk_bytes"]),
        "chunk_source": "config", "transfer_model": "chunk", "set:ddr.channels": "4", "set:core.pe.units": "mme,vec,scl",
        "batch_per_cluster": str(4 // clusters)}
for r in body:
    if len(r) != len(head): err.append("row of %d fields, header %d" % (len(r), len(head)))
    d = dict(zip(head, r))
    for k, v in want.items():
        if d.get(k) != v: err.append("%s: %s = %r, want %r" % (d.get("strategy"), k, d.get(k), v))
    if not sys.argv[4].endswith(d.get("model_file", "-")): err.append("model_file %r" % d.get("model_file"))
print("; ".join(err[:4]))
sys.exit(1 if err else 0)
PYEOF
)
check_rc "compare CSV: context columns on every row, values as derived" $? "$msg"

# 2. a single run's CSV (kernel rows and the total): every record prefixed, strategy included
"$GTSIM" "${A[@]}" "$M" --batch 4 --sched tvm --csv -o "$tmp/s.csv"
msg=$("$PY" - "$tmp/s.csv" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = rows[0]
bad = [r for r in rows[1:] if len(r) != len(head) or dict(zip(head, r))["strategy"] != "tvm"]
ok = head[0] == "gtsim_version" and "kernel" in head and rows[-1][head.index("kernel")] == "(total)"
print("header %s, %d bad rows" % (head[:3], len(bad)))
sys.exit(0 if ok and not bad and len(rows) > 2 else 1)
PYEOF
)
check_rc "single-run CSV: every kernel row and the total carry the context" $? "$msg"

# 3. JSON: the context object agrees with the report's own fields; --compare lists per row
"$GTSIM" "${A[@]}" "$M" --batch 4 --sched astitch --json --set ddr.channels=4 -o "$tmp/s.json"
"$GTSIM" "${A[@]}" "$M" --batch 4 --compare tvm,graphturbo:lb --json -o "$tmp/c.json"
msg=$("$PY" - "$tmp/s.json" "$tmp/c.json" "$version" <<'PYEOF'
import json, sys
s, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
x, y = s["context"], c["context"]
err = []
if list(s)[0] != "context": err.append("context is not first")
for k in ("model", "arch", "arch_file", "strategy", "batch", "batch_per_cluster"):
    if x[k] != s[k]: err.append("%s: %r vs %r" % (k, x[k], s[k]))
if x["overrides"] != {"ddr.channels": "4"}: err.append("overrides %r" % x["overrides"])
if x["gtsim_version"] != sys.argv[3] or y["gtsim_version"] != sys.argv[3]: err.append("version")
if y["strategy"] != [r["strategy"] for r in c["rows"]]: err.append("compare strategies %r" % y["strategy"])
if len(y["batch_per_cluster"]) != len(c["rows"]): err.append("compare batch_per_cluster")
print("; ".join(err))
sys.exit(1 if err else 0)
PYEOF
)
check_rc "JSON: context first, agrees with the report; --compare per row" $? "$msg"

# 4. text: the last line is the context
"$GTSIM" "${A[@]}" "$M" --batch 4 --sched tvm --set ddr.channels=4 >"$tmp/s.txt"
check_eval "text: last line is the context with version and override" \
  'tail -1 "$tmp/s.txt" | grep -q "^context .*gtsim_version=$version .*set:ddr.channels=4 strategy=tvm"'

# 5. the chunk size: config key, env override, --set over env; the simulator uses it
cyc() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["context"]; print(d["cycles"], c["chunk_bytes"], c["chunk_source"])' "$1"; }
R=(tests/cases/gtg/tiny_cnn.gtg --batch 8 --sched tvm --json)
"$GTSIM" "${A[@]}" "${R[@]}" -o "$tmp/k0.json"
GTSIM_CHUNK_BYTES=64 "$GTSIM" "${A[@]}" "${R[@]}" -o "$tmp/k1.json"
"$GTSIM" "${A[@]}" "${R[@]}" --set chip.chunk_bytes=64 -o "$tmp/k2.json"
GTSIM_CHUNK_BYTES=999 "$GTSIM" "${A[@]}" "${R[@]}" --set chip.chunk_bytes=64 -o "$tmp/k3.json"
read -r c0 b0 s0 <<<"$(cyc "$tmp/k0.json")"; read -r c1 b1 s1 <<<"$(cyc "$tmp/k1.json")"
read -r c2 b2 s2 <<<"$(cyc "$tmp/k2.json")"; read -r c3 b3 s3 <<<"$(cyc "$tmp/k3.json")"
want0=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["chip"]["chunk_bytes"])' "$tmp/arch.json")
check_eval "default: the config's chunk ($want0), source config" '[ "$b0 $s0" = "$want0 config" ]'
check_eval "GTSIM_CHUNK_BYTES=64: reported as the source" '[ "$b1 $s1" = "64 GTSIM_CHUNK_BYTES" ]'
check_eval "--set chip.chunk_bytes=64: reported as --set" '[ "$b2 $s2" = "64 --set" ]'
check_eval "--set wins over GTSIM_CHUNK_BYTES" '[ "$b3 $s3" = "64 --set" ]'
check_eval "64 B by env or by --set: the same cycles ($c1, $c2, $c3)" '[ "$c1" = "$c2" ] && [ "$c2" = "$c3" ]'
check_eval "the chunk reaches the simulator: 64 B and $want0 B differ ($c1 vs $c0)" '[ "$c1" != "$c0" ]'
"$GTSIM" "${A[@]}" --set chip.chunk_bytes=0 --describe >/dev/null 2>"$tmp/err"; rc=$?
check_eval "chip.chunk_bytes=0: exit 1 naming the key" '[ $rc -eq 1 ] && grep -q chunk_bytes "$tmp/err"'

# 6. the flow transfer model: named in the context; a chunk size it would ignore is an error
"$GTSIM" "${A[@]}" "${R[@]}" --set chip.transfer_model=flow -o "$tmp/f0.json" 2>"$tmp/err"
check_rc "chip.transfer_model=flow: exit 0" $? "$(cat "$tmp/err")"
tm=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"]["transfer_model"])' "$tmp/f0.json")
check_eval "the context names transfer_model=flow ($tm)" '[ "$tm" = flow ]'
"$GTSIM" "${A[@]}" "${R[@]}" --set chip.transfer_model=flow --set chip.chunk_bytes=64 -o "$tmp/f1.json" 2>"$tmp/err"; rc=$?
check_eval "flow with --set chip.chunk_bytes: exit 1, no output" '[ $rc -eq 1 ] && grep -q "transfer_model is flow" "$tmp/err" && [ ! -e "$tmp/f1.json" ]'
GTSIM_CHUNK_BYTES=64 "$GTSIM" "${A[@]}" "${R[@]}" --set chip.transfer_model=flow -o "$tmp/f2.json" 2>"$tmp/err"; rc=$?
check_eval "flow with GTSIM_CHUNK_BYTES: exit 1 naming it" '[ $rc -eq 1 ] && grep -q GTSIM_CHUNK_BYTES "$tmp/err"'
done_testing
