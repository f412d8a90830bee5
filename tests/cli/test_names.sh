#!/usr/bin/env bash
# test_names.sh — `make install` and names (docs/cli.md): the installed tree (PREFIX, DESTDIR,
# moved) runs the headline command `gtsim --arch ascend910.cfg resnet50.gtg` from /, names
# resolve with or without their extension through the current directory, GTSIM_PATH and the
# share directory in that order, unknown names exit 1 with the close matches, and every option
# or input file a mode does not read is exit 1 naming it.
set -u
GTSIM=${GTSIM:-$PWD/build/gtsim}
. "$(dirname "$0")/lib.sh"
ROOT=$PWD
BUILD_DIR=$(cd "$(dirname "$GTSIM")" && pwd)
BUILD_REL=${BUILD_DIR#"$ROOT"/}

# field FILE KEY: a top-level string or number of a JSON report
field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# 1. make install PREFIX=DIR: every part where docs/cli.md says
make -s -C "$ROOT" install PREFIX="$tmp/p" BUILD="$BUILD_REL" >"$tmp/inst.log" 2>&1; rc=$?
check_rc "make install PREFIX=DIR: exit 0" $rc "$(tail -5 "$tmp/inst.log")"
missing=""
for f in bin/gtsim bin/gtsim-sweep share/gtsim/scripts/gs_sweep/spec.py share/gtsim/configs/ascend910.cfg share/gtsim/configs/tiny.cfg \
         share/gtsim/workloads/resnet50.gtg share/gtsim/workloads/README.md \
         share/gtsim/scripts/plot_occupancy share/doc/gtsim/README.md share/doc/gtsim/cli.md \
         share/doc/gtsim/config.md share/doc/gtsim/traces.md share/doc/gtsim/sweep.md \
         share/doc/gtsim/sweeps/stcp920-buffers.toml; do
  [ -e "$tmp/p/$f" ] || missing="$missing $f"
done
check_eval "installed: binary, configs, zoo, scripts, docs" '[ -z "$missing" ]'
[ -n "$missing" ] && echo "# missing:$missing"
ncfg=$(ls configs/*.cfg | wc -l); ninst=$(ls "$tmp/p/share/gtsim/configs/"*.cfg | wc -l)
check_eval "every shipped config installed ($ncfg)" '[ "$ncfg" -eq "$ninst" ]'

# 2. the headline command from /, as written, then by bare names: the same report, and the
# config that was used is the installed one (the share directory comes before the source tree)
(cd / && "$tmp/p/bin/gtsim" --arch ascend910.cfg resnet50.gtg >"$tmp/headline.txt" 2>"$tmp/err"); rc=$?
check_rc "from /: gtsim --arch ascend910.cfg resnet50.gtg" $rc "$(head -c 400 "$tmp/err")"
check_eval "headline: the installed config was used" \
  'head -1 "$tmp/headline.txt" | grep -qF "($tmp/p/share/gtsim/configs/ascend910.cfg)"'
(cd / && "$tmp/p/bin/gtsim" --arch ascend910 resnet50 >"$tmp/bare.txt" 2>&1)
check "bare names: the same report" cmp -s "$tmp/headline.txt" "$tmp/bare.txt"

# 3. a moved tree still finds its share directory (relative to the executable)
mv "$tmp/p" "$tmp/moved"
(cd / && "$tmp/moved/bin/gtsim" --arch tiny --describe --json -o "$tmp/moved.json" 2>"$tmp/err")
check_eval "moved install: names resolve under the new place" \
  '[ "$(field "$tmp/moved.json" source 2>/dev/null)" = "$tmp/moved/share/gtsim/configs/tiny.cfg" ]'

# ... and so does the installed gtsim-sweep, with the gtsim beside it (GTSIM unset)
printf '[grid]\narch = "tiny"\nmodel = "dlrm"\nbatch = 2\nstrategy = "tvm"\n' >"$tmp/s.toml"
(cd / && env -u GTSIM "$tmp/moved/bin/gtsim-sweep" run "$tmp/s.toml" >/dev/null 2>"$tmp/err" &&
  env -u GTSIM "$tmp/moved/bin/gtsim-sweep" export "$tmp/s.toml" --format json -o "$tmp/s.json"); rc=$?
check_rc "installed gtsim-sweep: runs a sweep from /" $rc "$(tail -3 "$tmp/err")"
check_eval "installed gtsim-sweep: used the installed gtsim and its configs" \
  '"$PY" -c "import json,sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(\"SELECT json FROM reports\").fetchone()[0]; sys.exit(json.loads(r)[\"arch_file\"] != sys.argv[2])" "$tmp/s.db" "$tmp/moved/share/gtsim/configs/tiny.cfg"'

# 4. DESTDIR stages under DESTDIR/PREFIX and nowhere else
make -s -C "$ROOT" install DESTDIR="$tmp/stage" PREFIX=/opt/gs BUILD="$BUILD_REL" >"$tmp/inst.log" 2>&1
check_eval "DESTDIR: staged under DESTDIR/PREFIX" \
  '[ -x "$tmp/stage/opt/gs/bin/gtsim" ] && [ -f "$tmp/stage/opt/gs/share/gtsim/configs/goya.cfg" ] && [ ! -e /opt/gs ]'

# 5. search order: the current directory, then GTSIM_PATH (DIR and DIR/configs), then shipped
mkdir -p "$tmp/gp/configs" "$tmp/cwd"
sed 's/^name = tiny/name = gp-tiny/' configs/tiny.cfg >"$tmp/gp/configs/tiny.cfg"
sed 's/^name = tiny/name = mine/' configs/tiny.cfg >"$tmp/gp/mine.cfg"
sed 's/^name = tiny/name = cwd-tiny/' configs/tiny.cfg >"$tmp/cwd/tiny.cfg"
name_of() { # DIR GTSIM_PATH ARCH: the arch name --describe --json reports
  (cd "$1" && GTSIM_PATH=$2 "$GTSIM" --arch "$3" --describe --json -o "$tmp/d.json" 2>/dev/null) &&
    field "$tmp/d.json" name
}
check_eval "GTSIM_PATH DIR: a name of the user's own" '[ "$(name_of / "$tmp/gp" mine)" = mine ]'
check_eval "GTSIM_PATH DIR/configs shadows the shipped tiny" '[ "$(name_of / "$tmp/gp" tiny.cfg)" = gp-tiny ]'
check_eval "the current directory comes first" '[ "$(name_of "$tmp/cwd" "$tmp/gp" tiny)" = cwd-tiny ]'
check_eval "without GTSIM_PATH: the shipped tiny" '[ "$(name_of / "" tiny)" = tiny ]'
cp workloads/dlrm.gtg "$tmp/gp/net.gtg"
(cd / && GTSIM_PATH=$tmp/gp "$GTSIM" --stats net --json -o "$tmp/s.json" 2>"$tmp/err"); rc=$?
check_rc "a model through GTSIM_PATH, extension left off (--stats net)" $rc "$(cat "$tmp/err")"

# 6. unknown names: exit 1, the close matches (computed here: names sharing the stem)
unknown() { # NAME WANT ARGS...: exit 1 and every word of WANT on the "close matches" line
  local name=$1 want=$2; shift 2
  (cd / && "$GTSIM" "$@" >/dev/null 2>"$tmp/err"); local rc=$? w miss=""
  for w in $want; do grep "close matches:" "$tmp/err" | grep -qw -- "$w" || miss="$miss $w"; done
  if [ $rc -eq 1 ] && [ -z "$miss" ]; then ok "$name"; else nok "$name" "exit $rc, missing:$miss" "$(cat "$tmp/err")"; fi
}
unknown "--arch ascend91: exit 1, close matches ascend910 ascend310" "ascend910 ascend310" --arch ascend91 --describe
unknown "model resnt50: close match resnet50" "resnet50" --arch tiny resnt50
unknown "model bert: every bert-* listed" "$(cd workloads && ls bert-*.gtg | sed 's/\.gtg$//')" --stats bert
(cd / && "$GTSIM" --arch qqqqqqqq --describe >/dev/null 2>"$tmp/err"); rc=$?
check_eval "no close match: exit 1 and every known config listed" \
  '[ $rc -eq 1 ] && grep "known names:" "$tmp/err" | grep -qw goya && grep "known names:" "$tmp/err" | grep -qw tiny'
"$GTSIM" --arch "$tmp/none/x.cfg" --describe >/dev/null 2>"$tmp/err"; rc=$?
check_eval "a missing path: the loader's cannot-read error" '[ $rc -eq 1 ] && grep -qF "$tmp/none/x.cfg: error: cannot read" "$tmp/err"'

# 7. every option and input file a mode does not read is exit 1 naming it
unused() { # WHAT ARGS...: exit 1 and WHAT in the message
  local what=$1; shift
  "$GTSIM" "$@" >/dev/null 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 1 ] && grep -qF -- "$what" "$tmp/err"; then ok "unused $what: $*"
  else nok "unused $what: $*" "exit $rc: $(head -c 300 "$tmp/err")"; fi
}
unused "'resnet50' is not used by --describe" --arch tiny --describe resnet50
unused "'bert-128' is not used by a model run" --arch tiny resnet50 bert-128
unused "--trace is not used by --compare" --arch tiny resnet50 --compare tvm,astitch --trace "$tmp/t.gtt.gz"
unused "--sched is not used by --compare" --arch tiny resnet50 --compare tvm,astitch --sched tvm
unused "--gt-level is not used" --arch tiny resnet50 --sched tvm --gt-level lb
unused "--gt-stitch is not used" --arch tiny resnet50 --compare tvm,astitch --gt-stitch 0.5
unused "--gt-level is not used" --arch tiny resnet50 --compare graphturbo:gb,graphturbo:lb --gt-level full
unused "--gt-time is not used" --arch tiny resnet50 --gt-time
unused "--gt-level is not used by --dump-after PASS" --arch tiny resnet50 --dump-after group --gt-level lb
unused "--set is not used by --stats" --set ddr.channels=4 --stats resnet50
unused "--arch is not used by --stats" --arch tiny --stats resnet50
unused "--batch is not used by a program run" --arch tiny tests/cases/asm/basic.gtasm --batch 4
unused "--timing is not used by --describe" --arch tiny --describe --timing
unused "--json is not used by --emit" --arch tiny tests/cases/asm/basic.gtasm --emit "$tmp/x.gtp" --json
unused "'extra' is not used by --config-doc" --config-doc extra
unused "--set overrides a key of --arch" --set ddr.channels=4 --disasm tests/cases/asm/basic.gtasm
unused "no input file and no mode" --arch tiny
# inputs that are no model: a clear message, not "nothing to do" or an I/O error
echo hi >"$tmp/a.xyz"
unused "/dev/null: error: unknown model format: expected a .gtg or .onnx file" --arch tiny /dev/null
unused "a.xyz: error: unknown model format" --arch tiny "$tmp/a.xyz"
unused "no model 'configs'" --arch tiny configs
unused "--arch: no architecture config 'configs'" --arch configs --describe
unused "--emit is not used by --stats" --stats resnet50 --emit "$tmp/x.gtp"
unused "--emit is not used by --dump-after PASS and --dump-schedule" --arch tiny resnet50 --dump-schedule --emit "$tmp/x.gtp"
unused "--trace is not used by --emit of a program file" --arch tiny tests/cases/asm/basic.gtasm --emit "$tmp/x.gtp" --trace "$tmp/t.gtt.gz"
unused "--sched is not used by a program run" --arch tiny tests/cases/asm/basic.gtasm --sched tvm
[ ! -e "$tmp/t.gtt.gz" ] && [ ! -e "$tmp/x.gtp" ] && ok "refused runs wrote nothing" || nok "refused runs wrote files"
done_testing
