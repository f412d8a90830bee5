#!/usr/bin/env bash
# test_slurm.sh — gtsim-sweep --backend slurm against a real single-node Slurm (docs/sweep.md,
# "On Slurm"): starts munged, slurmctld and slurmd of Debian's slurm-wlm on a localhost
# slurm.conf in a temporary directory (own ports and munge socket: nothing of the machine's
# own is touched), runs part of the example sweep docs/sweeps/ascend910-cores-ddr.toml as a job
# array (2 points per task, 2 tasks at once), checks its results equal the local backend's,
# that a sweep begun locally resumes on Slurm with only the rest submitted, then stops the
# daemons (by their pids). Needs root and the packages (scripts/deps.sh installs them as
# root); otherwise it says why it skips ("1..0 # SKIP reason").
set -u
GTSIM=${GTSIM:-$PWD/build/gtsim}
. "$(dirname "$0")/lib.sh"
GTSIM=$(cd "$(dirname "$GTSIM")" && pwd)/$(basename "$GTSIM")
export GTSIM
skip() { echo "1..0 # SKIP $1"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root: the test starts munged, slurmctld and slurmd as root"
for c in sbatch squeue scancel slurmctld slurmd munged; do
  command -v "$c" >/dev/null || skip "no $c: install Debian's slurm-wlm and munge (scripts/deps.sh does as root)"
done
[ -r /etc/munge/munge.key ] || skip "no /etc/munge/munge.key (the munge package creates it)"

S=$tmp/slurm
mkdir -p "$S/state" "$S/spool" "$S/log"
pids=()
stop() { local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'stop; rm -rf "$tmp"' EXIT
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
host=$(hostname -s)
cat >"$S/slurm.conf" <<EOF
ClusterName=gtsimtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$S/slurm.conf
munged -F --force --socket="$S/munge.sock" --pid-file="$S/munged.pid" --log-file="$S/log/munged.log" \
  --seed-file="$S/munged.seed" >"$S/log/munged.out" 2>&1 & pids+=($!)
for i in $(seq 300); do [ -S "$S/munge.sock" ] && break; sleep 0.1; done  # up to 30 s: a loaded machine
slurmctld -D -f "$SLURM_CONF" >"$S/log/ctld.out" 2>&1 & pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$S/log/d.out" 2>&1 & pids+=($!)
for i in $(seq 300); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 0.2; done  # up to a minute
if sinfo -h -o %T 2>/dev/null | grep -q idle; then ok "single-node Slurm up (munged, slurmctld, slurmd on port $port)"
else nok "single-node Slurm up" "$(tail -3 "$S/log/slurmctld.log" "$S/log/slurmd.log" 2>&1)"; done_testing; exit 1; fi

SPEC=docs/sweeps/ascend910-cores-ddr.toml
W=(--where model=resnet50 --where set:core.aicore.count=4)   # 6 bandwidths x 3 strategies
SW=scripts/gtsim-sweep
"$SW" run $SPEC "${W[@]}" --db "$tmp/s.db" --backend slurm --points-per-task 2 --array-size 2 \
  >/dev/null 2>"$tmp/s.err"; rc=$?
check_rc "18 points as a 9-task job array: exit 0" $rc "$(tail -5 "$tmp/s.err")"
check_eval "sbatch took the array" 'grep -q "slurm job [0-9]*: 9 tasks of up to 2 points" "$tmp/s.err"'
"$SW" run $SPEC "${W[@]}" --db "$tmp/l.db" -j 2 >/dev/null 2>&1
"$SW" export "$tmp/s.db" -o "$tmp/s.csv"; "$SW" export "$tmp/l.db" -o "$tmp/l.csv"
same() { # A.csv B.csv: the same points with the same cycles, DDR bytes and config hashes
  "$PY" - "$1" "$2" <<'PYEOF'
import csv, sys
a, b = ({r["id"]: (r["status"], r["cycles"], r["ddr_read_bytes"], r["config_hash"], r["gtsim_version"])
         for r in csv.DictReader(open(p))} for p in sys.argv[1:3])
print("%d vs %d points, differing: %s" % (len(a), len(b), sorted(k for k in a if a[k] != b.get(k))[:3]))
sys.exit(0 if a == b and len(a) == 18 and all(v[0] == "ok" for v in a.values()) else 1)
PYEOF
}
msg=$(same "$tmp/s.csv" "$tmp/l.csv"); check_rc "Slurm results = the local backend's" $? "$msg"
backends() { "$PY" -c 'import sqlite3,sys; print(" ".join("%s:%d" % r for r in sqlite3.connect(sys.argv[1]).execute("SELECT backend, count(*) FROM points GROUP BY backend ORDER BY backend")))' "$1"; }
check_eval "every point ran on Slurm" '[ "$(backends "$tmp/s.db")" = "slurm:18" ]'

# begun locally (one bandwidth), finished on Slurm: only the other 15 submitted
"$SW" run $SPEC "${W[@]}" --where set:ddr.bandwidth_gb_per_s=75 --db "$tmp/m.db" >/dev/null 2>&1
"$SW" run $SPEC "${W[@]}" --db "$tmp/m.db" --backend slurm --points-per-task 4 >/dev/null 2>"$tmp/m.err"; rc=$?
check_eval "resumed on Slurm: 15 to run, 4 tasks" '[ $rc -eq 0 ] && grep -q "3 done, 0 failed, 15 to run (slurm)" "$tmp/m.err" && grep -q ": 4 tasks of up to 4" "$tmp/m.err"'
check_eval "3 points local, 15 on Slurm" '[ "$(backends "$tmp/m.db")" = "local:3 slurm:15" ]'
"$SW" export "$tmp/m.db" -o "$tmp/m.csv"
msg=$(same "$tmp/m.csv" "$tmp/l.csv"); check_rc "mixed backends = local only" $? "$msg"
check_eval "the job's work directory is gone" '[ -z "$(ls "$tmp/m.db.slurm" | grep job-)" ]'
stop; pids=()
check_eval "daemons stopped" '! sinfo -h >/dev/null 2>&1'
done_testing
