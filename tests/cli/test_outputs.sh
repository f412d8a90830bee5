#!/usr/bin/env bash
# test_outputs.sh — output paths that are not regular files: a report, trace or program written
# to /dev/null or a FIFO goes to it directly (the device node or FIFO stays what it was; regular
# files are still written through a temporary and a rename), and a device that refuses the
# bytes (/dev/full) is a clear error with exit 1.
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
done_testing
