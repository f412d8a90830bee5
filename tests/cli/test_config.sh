#!/usr/bin/env bash
# Architecture configs through the real binary: every shipped config loads and describes
# cleanly in text and JSON; the JSON is valid and carries the same figures; docs/config.md is
# what `gtsim --config-doc` generates (refresh: build/gtsim --config-doc > docs/config.md).
# Run from the repo root with $GTSIM set (tests/run.sh does both).
set -u
. "$(dirname "$0")/lib.sh"

if "$GTSIM" --config-doc >"$tmp/doc.md" && cmp -s "$tmp/doc.md" docs/config.md; then
  ok "docs/config.md is up to date"
else
  nok "docs/config.md is up to date" "refresh with: build/gtsim --config-doc > docs/config.md" \
    "$(diff "$tmp/doc.md" docs/config.md | head -5)"
fi

shipped=(stcp920 stcp920-hw ascend910 ascend310 goya ipu-gc2 tpuv1 tiny)
for c in "${shipped[@]}"; do
  f=configs/$c.cfg
  if "$GTSIM" --arch "$f" --describe >"$tmp/t" 2>"$tmp/e" && [ ! -s "$tmp/e" ] &&
     grep -q "^name = $c\$" "$tmp/t" && grep -q "Peak matrix compute" "$tmp/t" &&
     grep -q "Machine balance" "$tmp/t"; then
    ok "$c: --describe"
  else nok "$c: --describe" "$(head -3 "$tmp/e")"; fi
  if "$GTSIM" --arch "$f" --describe --json >"$tmp/j" 2>"$tmp/e" && $PY -m json.tool "$tmp/j" >/dev/null; then
    ok "$c: --describe --json is valid JSON"
  else nok "$c: --describe --json is valid JSON" "$(head -3 "$tmp/e")"; fi
  # Same content: every "key = value" of the text's resolved config is in the JSON config,
  # and the chip row of the peak table equals the JSON's chip peak.
  if $PY - "$tmp/t" "$tmp/j" <<'PY'
import json, sys
text = open(sys.argv[1]).read().splitlines()
j = json.load(open(sys.argv[2]))
sec, seen = None, 0
for line in text:
    if line.startswith("["):
        sec = line.strip("[]")
        continue
    if line.startswith("#") or "=" not in line:
        continue
    k, v = [s.strip() for s in line.split("=", 1)]
    v = v.split(" ; ", 1)[0].strip()  # the line's comment: its provenance, in j["provenance"]
    assert v == line.split("=", 1)[1].strip() or j["provenance"]["%s.%s" % (sec, k)], (sec, k)
    got = j["config"][sec][k]
    if isinstance(got, list):
        assert got == v.split(", "), (sec, k, got, v)
    elif isinstance(got, str):
        assert got == v, (sec, k, got, v)
    else:
        assert abs(got - float(v)) <= 1e-9 * abs(got), (sec, k, got, v)
    seen += 1
assert seen > 20, seen
d = j["derived"]
assert d["cores_total"] == d["clusters"] * d["cores_per_cluster"]
for r in d["peak_matrix"]:
    assert abs(r["flops"] - 2 * r["macs_per_cycle"] * d["clock_hz"]) <= 1e-6 * r["flops"]
PY
  then ok "$c: text and JSON agree"; else nok "$c: text and JSON agree"; fi
done

# Figures from the published numbers (the configs' sources), read from the JSON:
#   stcp920: 4 clusters x 8 cores x 2048 fp16 MAC x 2 FLOP x 1e9 Hz = 131.072e12 FLOP/s,
#            DDR 136 GB/s at 1 GHz = 136 B/cycle, balance 131.072e12 / 136e9 FLOP/byte.
#   tpuv1:   256 x 256 int8 MAC x 2 x 700e6 Hz = 91.75e12 OP/s.
"$GTSIM" --arch configs/stcp920.cfg --describe --json >"$tmp/s.json"
"$GTSIM" --arch configs/tpuv1.cfg --describe --json >"$tmp/t.json"
if $PY - "$tmp/s.json" "$tmp/t.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["derived"]
t = json.load(open(sys.argv[2]))["derived"]
def chip(d, dt):
    return [r for r in d["peak_matrix"] if r["level"] == "chip" and r["dtype"] == dt][0]["flops"]
close = lambda a, b: abs(a - b) <= 1e-9 * abs(b)
assert close(chip(s, "fp16"), 4 * 8 * 2048 * 2 * 1e9)
assert close(s["ddr_bytes_per_cycle"], 136.0)
assert close(s["machine_balance_flop_per_byte"]["fp16"], 4 * 8 * 2048 * 2 * 1e9 / 136e9)
assert s["onchip_bytes"]["chip_total"] == 4 * (8 * 64 * 1024 + 8 * 2**20)
assert close(chip(t, "int8"), 256 * 256 * 2 * 700e6)
PY
then ok "published peak figures in the JSON"; else nok "published peak figures in the JSON"; fi

# --set changes the figures: stcp920 at 500 MHz has half the FLOP/s (65.54 T) and
# 136e9 / 500e6 = 272 DDR bytes per cycle; the value's comment names the override.
"$GTSIM" --arch configs/stcp920.cfg --set chip.clock_mhz=500 --describe >"$tmp/h" 2>&1
if grep -q "^clock_mhz = 500 *; --set chip.clock_mhz=500$" "$tmp/h" && grep -q "chip (4 clusters).* 65.54 T" "$tmp/h" &&
   grep -q "= 272 B/cycle" "$tmp/h"; then
  ok "--set chip.clock_mhz=500 is applied"
else nok "--set chip.clock_mhz=500 is applied" "$(grep -E 'clock|chip \(|B/cycle' "$tmp/h" | head -5)"; fi

# Determinism: the same input gives the same bytes.
"$GTSIM" --arch configs/goya.cfg --describe --json >"$tmp/g1"
"$GTSIM" --arch configs/goya.cfg --describe --json >"$tmp/g2"
if cmp -s "$tmp/g1" "$tmp/g2"; then ok "describe is deterministic"; else nok "describe is deterministic"; fi

# Text values are escaped in JSON.
if "$GTSIM" --arch configs/tiny.cfg --set 'chip.name=a "quoted" \ name' --describe --json >"$tmp/q" &&
   $PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["name"] == "a \"quoted\" \\ name"' "$tmp/q"; then
  ok "JSON escapes the chip name"
else nok "JSON escapes the chip name" "$(grep '"name"' "$tmp/q" | head -1)"; fi

# --describe without --arch is a usage error.
"$GTSIM" --describe >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then ok "--describe without --arch exits 1"; else nok "--describe without --arch exits 1" "exit $rc"; fi
done_testing
