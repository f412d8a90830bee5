#!/usr/bin/env bash
# test_outputs.sh — output paths that are not regular files: a report, trace or program written
# to /dev/null or a FIFO goes to it directly (the device node or FIFO stays what it was; regular
# files are still written through a temporary and a rename), and a device that refuses the
# bytes (/dev/full) is a clear error with exit 1, on stdout too; SIGINT/SIGTERM in the middle
# of a run leave no temporary; a valued option given twice is an error, not "the last wins";
# an output that cannot be written, or that names an input or another output, is refused
# before any work (no "scheduling" stage on --progress's line), with nothing written.
set -u
. "$(dirname "$0")/lib.sh"
A="--arch configs/tiny.cfg"
M="workloads/resnet50.gtg --batch 2 --sched tvm"

# 1. every kind of output to /dev/null: exit 0 and /dev/null is still a character device
if "$GTSIM" $A $M --json -o /dev/null --trace /dev/null --perfetto /dev/null 2>"$tmp/err" &&
   "$GTSIM" $A $M >"$tmp/out" 2>>"$tmp/err"; then
  [ -c /dev/null ] && ok "outputs to /dev/null: exit 0, /dev/null still a device" \
    || nok "/dev/null replaced by a regular file"
else
  nok "outputs to /dev/null" "$(head -c 400 "$tmp/err")"
fi
[ -z "$(ls /dev/null.tmp.* 2>/dev/null)" ] && ok "no temporary left next to /dev/null" \
  || nok "temporaries left" "$(ls /dev/null.tmp.*)"

# 2. a report into a FIFO: the reader gets the whole JSON, the FIFO stays a FIFO
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/got" &
reader=$!
if "$GTSIM" $A $M --json -o "$tmp/fifo" 2>"$tmp/err"; then
  wait $reader
  if [ -p "$tmp/fifo" ] && /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/got" 2>/dev/null; then
    ok "report into a FIFO: complete JSON read from it, still a FIFO"
  else
    nok "report into a FIFO" "fifo type: $(command stat -c %F "$tmp/fifo"), got $(wc -c <"$tmp/got") bytes"
  fi
else
  kill $reader 2>/dev/null
  nok "report into a FIFO: exit $?" "$(head -c 400 "$tmp/err")"
fi

# 3. /dev/full: exit 1 naming the path and the reason; the device is left alone
"$GTSIM" $A $M --json -o /dev/full 2>"$tmp/err"
rc=$?
if [ $rc = 1 ] && grep -q "/dev/full: error: cannot write" "$tmp/err" && [ -c /dev/full ]; then
  ok "report to /dev/full: exit 1 with the path and the reason"
else
  nok "report to /dev/full" "exit $rc: $(head -c 300 "$tmp/err")"
fi

# 4. --emit with a name that is neither .gtp nor .gtasm: refused before any work, exit 1
"$GTSIM" $A $M --emit /dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "must end in .gtp or .gtasm" "$tmp/err" && ok "--emit /dev/null: exit 1 up front" \
  || nok "--emit without extension" "exit $rc: $(head -c 300 "$tmp/err")"
# 5. stdout that refuses the bytes: a report, --describe and --help exit 1 with the reason
for args in "$A tests/cases/asm/basic.gtasm --json" "$A --describe" "--help"; do
  "$GTSIM" $args >/dev/full 2>"$tmp/err"
  rc=$?
  [ $rc = 1 ] && grep -q "cannot write the standard output" "$tmp/err" && ok "'$args' > /dev/full: exit 1" \
    || nok "'$args' > /dev/full" "exit $rc: $(head -c 300 "$tmp/err")"
done

# 6. SIGINT and SIGTERM while the traces are being written: the run ends by the signal (128+N
# in the shell), and neither the temporaries nor the outputs are left behind. gtsim keeps an
# ignored SIGINT ignored, and a background job of a shell without job control starts with it
# ignored — this script itself, when the suite runs it in the background, and everything it
# starts — so gtsim runs with both signals back at their defaults (env --default-signal).
set -m
for sig in INT TERM; do
  mkdir "$tmp/$sig"
  env --default-signal=INT,TERM "$GTSIM" $A workloads/resnet50.gtg --batch 16 --sched tvm --trace "$tmp/$sig/t.gtt.gz" \
    --perfetto "$tmp/$sig/p.json" >/dev/null 2>&1 &
  pid=$!
  # the temporaries appear when the simulation starts (after scheduling): seconds on a loaded
  # machine, and the run then lasts several more
  for _ in $(seq 600); do [ -e "$tmp/$sig/t.gtt.gz.tmp.$pid" ] && break; sleep 0.1; done
  sleep 0.2
  kill -$sig $pid
  wait $pid
  rc=$?
  left=$(ls -A "$tmp/$sig")
  want=$((128 + $(kill -l $sig)))
  [ $rc = $want ] && [ -z "$left" ] && ok "SIG$sig during a traced run: exit $rc, nothing left" \
    || nok "SIG$sig during a traced run" "exit $rc (want $want), left: $left"
done
set +m

# 7. a valued option twice is refused (which would win?); --set may repeat
"$GTSIM" --arch configs/tiny.cfg --arch configs/goya.cfg --describe >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q -- "--arch is given twice" "$tmp/err" && ok "--arch twice: exit 1" \
  || nok "--arch twice" "exit $rc: $(head -c 300 "$tmp/err")"
"$GTSIM" $A $M --json -o "$tmp/a" -o "$tmp/b" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q -- "-o is given twice" "$tmp/err" && [ ! -e "$tmp/a" ] && ok "-o twice: exit 1, nothing written" \
  || nok "-o twice" "exit $rc: $(head -c 300 "$tmp/err")"
check "--set twice: allowed" "$GTSIM" $A --set ddr.channels=2 --set ddr.channels=4 --describe -o "$tmp/d"
# 8. outputs checked before any work: each kind to a directory that does not exist, then -o to
# a directory, is exit 1 naming the path and the reason, and --progress never showed the
# scheduling stage (without the check, --trace and --perfetto failed only after scheduling,
# -o and --emit after the whole run)
for o in "-o $tmp/no/r.json" "--emit $tmp/no/p.gtp" "--trace $tmp/no/t.gtt.gz" "--perfetto $tmp/no/p.json" "-o $tmp"; do
  path=${o#* }
  reason="No such file or directory"; [ "$path" = "$tmp" ] && reason="Is a directory"
  "$GTSIM" $A $M --progress $o >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc = 1 ] && grep -qF "$path: error: cannot write: $reason" "$tmp/err" && ! grep -q scheduling "$tmp/err"; then
    ok "'${o%% *}' unwritable: exit 1 before scheduling"
  else
    nok "'${o%% *}' unwritable" "exit $rc: $(head -c 300 "$tmp/err")"
  fi
done
"$GTSIM" $A $M --progress -o "" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -qF ": error: cannot write: No such file or directory" "$tmp/err" && ! grep -q scheduling "$tmp/err" &&
  ok "-o '': exit 1 before scheduling" \
  || nok "-o ''" "exit $rc: $(head -c 300 "$tmp/err")"
"$GTSIM" $A tests/cases/asm/basic.gtasm --progress -o "$tmp/no/r.txt" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -qF "$tmp/no/r.txt: error: cannot write" "$tmp/err" && ok "a program's report unwritable: exit 1" \
  || nok "a program's report unwritable" "exit $rc: $(head -c 300 "$tmp/err")"

# 9. an output that names an input (the model, the config; another spelling of it) or another
# output: exit 1 naming both, the input byte for byte as it was, and no file or temporary made
mkdir "$tmp/in"
cp workloads/resnet50.gtg configs/tiny.cfg "$tmp/in/"
for o in "-o $tmp/in/resnet50.gtg" "--emit $tmp/in/./tiny.cfg" "-o $tmp/in/r.json --perfetto $tmp/in/../in/r.json"; do
  "$GTSIM" --arch "$tmp/in/tiny.cfg" "$tmp/in/resnet50.gtg" --batch 2 --sched tvm $o >/dev/null 2>"$tmp/err"
  rc=$?
  want="would replace the input"; case $o in *perfetto*) want="given to both -o and --perfetto" ;; esac
  if [ $rc = 1 ] && grep -q "$want" "$tmp/err" && cmp -s "$tmp/in/resnet50.gtg" workloads/resnet50.gtg &&
     cmp -s "$tmp/in/tiny.cfg" configs/tiny.cfg && [ "$(ls "$tmp/in")" = "$(printf 'resnet50.gtg\ntiny.cfg')" ]; then
    ok "'$o': exit 1, the inputs as they were, nothing written"
  else
    nok "'$o'" "exit $rc: $(head -c 300 "$tmp/err")" "files: $(ls "$tmp/in" | tr '\n' ' ')"
  fi
done
# --convert may rewrite its own model (read whole first), and "-o -" is its stdout even where
# the working directory cannot be written
cp workloads/resnet50.gtg "$tmp/in/c.gtg"
if "$GTSIM" --convert "$tmp/in/c.gtg" --batch 4 -o "$tmp/in/c.gtg" 2>"$tmp/err" &&
   grep -q '^model .* batch=4' "$tmp/in/c.gtg" && (gt=$(realpath "$GTSIM") && cd /proc && "$gt" --convert "$tmp/in/c.gtg" -o - | cmp -s - "$tmp/in/c.gtg"); then
  ok "--convert onto its own model, and to stdout from an unwritable directory"
else
  nok "--convert onto its own model" "$(head -c 300 "$tmp/err")" "$(head -1 "$tmp/in/c.gtg")"
fi
# the check leaves no temporary next to the outputs of a run that succeeds
mkdir "$tmp/outs"
if "$GTSIM" $A $M --json -o "$tmp/outs/r.json" --emit "$tmp/outs/p.gtp" >/dev/null 2>"$tmp/err"; then
  [ "$(ls "$tmp/outs")" = "$(printf 'p.gtp\nr.json')" ] && ok "checked outputs: written, no temporary left" \
    || nok "checked outputs" "files: $(ls "$tmp/outs" | tr '\n' ' ')"
else
  nok "checked outputs: the run failed" "$(head -c 300 "$tmp/err")"
fi
done_testing
