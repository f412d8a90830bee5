"""Running points: one gtsim process per point (execute), many at once on this machine
(run_local) with a progress line and an ETA. A point's result is a record: its status, exit
code, error, resolved config hash, gtsim version, timings and metrics (docs/sweep.md).

Ctrl-C (SIGINT) or SIGTERM stops the sweep cleanly: no new point starts, the gtsim processes
still running are killed (each runs in a session of its own, so a terminal's Ctrl-C reaches
only the sweep), their points go back to pending, and the exit status is 130. The signal only
sets a flag (Stop) that the loop reads between steps, so it never falls between a database
write and the loop's own record of it. A point whose
gtsim failed is recorded as failed with its exit code and the end of its stderr, and is not
run again unless --retry-failed.
"""

import concurrent.futures as cf
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from . import db as sdb
from . import spec as sspec

ERROR_TAIL = 4000  # characters of stderr kept for a failed point
TIMEOUT_EXIT = 124  # the exit code recorded for a point that ran out of time (as timeout(1))
WAKE = 0.1  # seconds: how soon a loop notices Ctrl-C


class Interrupted(Exception):
    """SIGINT or SIGTERM: stop the sweep."""


class Stop:
    """While entered, SIGINT and SIGTERM set .requested instead of raising. An exception
    raised by the handler could land anywhere, e.g. after a point's 'running' was committed
    but before the loop added it to the points it puts back to pending, leaving it 'running'
    for good; the loops read the flag between steps instead (a second signal is harmless)."""

    def __init__(self):
        self.requested, self.old = False, {}

    def __enter__(self):
        self.old = {s: signal.signal(s, self._note) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)

    def _note(self, signum, frame):
        self.requested = True

    def sleep(self, seconds):
        """Sleeps for seconds, or until a stop is requested (noticed within WAKE)."""
        end = time.monotonic() + seconds
        while not self.requested and time.monotonic() < end:
            time.sleep(max(0.0, min(WAKE, end - time.monotonic())))


def metrics_of(report, describe):
    """The numbers of a gtsim --json report (and of the resolved config) as name -> value."""
    m = {}
    num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    for k, v in report.items():
        if num(v):  # batch and batch_per_cluster as run: "run_" (the point's own are parameters)
            m[("run_" + k) if k.startswith("batch") else k] = v
    for sec in ("roofline", "outputs"):
        for k, v in report.get(sec, {}).items():
            if num(v):
                m[sec + "." + k] = v
    for k, v in report.get("utilization", {}).items():
        m["util." + k] = v
    energy = report.get("energy") or {}  # null without an [energy] section (docs/energy.md)
    for k, v in energy.items():
        if num(v):
            m["energy." + k] = v
    for k, v in energy.get("units_j", {}).items():
        m["energy.unit." + k + "_j"] = v
    for k, v in energy.get("parts_j", {}).items():
        m["energy.part." + k + "_j"] = v
    gt = report.get("graphturbo")
    if gt:
        m["spills"], m["spill_bytes"] = gt["spills"], gt["spill_bytes"]
    m["chunk_bytes"] = report["context"]["chunk_bytes"]
    on = describe["derived"]["onchip_bytes"]
    m["onchip_bytes"] = on["chip_total"]
    return m


class Describer:
    """gtsim --describe --json of each (arch, --set) combination, once per sweep process."""

    def __init__(self, gtsim, cwd):
        self.gtsim, self.cwd, self.lock, self.cache = gtsim, cwd, threading.Lock(), {}

    def get(self, p):
        """(exit code, describe JSON or None, stderr)."""
        key = json.dumps([p["arch"], sorted(p["set"].items())])
        with self.lock:
            if key not in self.cache:
                r = subprocess.run([self.gtsim] + sspec.describe_args(p), cwd=self.cwd,
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True)
                d = json.loads(r.stdout) if r.returncode == 0 else None
                self.cache[key] = (r.returncode, d, r.stderr)
            return self.cache[key]


def config_hash(describe):
    return hashlib.sha256(json.dumps(describe["config"], sort_keys=True).encode()).hexdigest()[:16]


class Procs:
    """The gtsim processes running now, so that an interrupt can kill them."""

    def __init__(self):
        self.lock, self.procs, self.stopped = threading.Lock(), set(), False

    def start(self, cmd, cwd):
        with self.lock:
            if self.stopped:
                return None
            p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
            self.procs.add(p)
            return p

    def done(self, p):
        with self.lock:
            self.procs.discard(p)

    def stop(self):
        with self.lock:
            self.stopped = True
            for p in self.procs:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _gtsim_run(ctx, p, out):
    """Runs point p's gtsim into out; (exit code, stderr), or None when the sweep stopped."""
    cmd = [ctx["gtsim"]] + sspec.gtsim_args(p) + ["--json", "-o", out]
    if ctx.get("checks_inline"):  # every core has a run of its own: no second core for checks
        cmd.append("--checks-inline")
    proc = ctx["procs"].start(cmd, ctx["cwd"])
    if proc is None:
        return None
    try:
        _, err = proc.communicate(timeout=ctx["timeout"] or None)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        rc, err = TIMEOUT_EXIT, (err or "") + "\ngtsim-sweep: timed out after %g s" % ctx["timeout"]
    finally:
        ctx["procs"].done(proc)
    if ctx["procs"].stopped:
        return None
    return rc, err or ""


def execute(ctx, p):
    """Runs point p; its record, or None when the sweep was stopped meanwhile. ctx: gtsim,
    cwd (the spec's directory), timeout, backend, describer, procs, and optionally
    checks_inline (gtsim --checks-inline)."""
    pid = sspec.point_id(p)
    r = {"id": pid, "status": "failed", "exit_code": None, "error": None, "config_hash": None,
         "gtsim_version": None, "backend": ctx["backend"], "host": socket.gethostname(),
         "started": time.time(), "metrics": {}, "report": None}
    drc, desc, derr = ctx["describer"].get(p)
    if drc != 0:
        r["exit_code"], r["error"] = drc, derr[-ERROR_TAIL:]
    else:
        r["config_hash"] = config_hash(desc)
        with tempfile.TemporaryDirectory(prefix="gtsim-sweep.") as tmp:
            res = _gtsim_run(ctx, p, os.path.join(tmp, "report.json"))
            if res is None:
                return None
            r["exit_code"], err = res
            if r["exit_code"] == 0:
                with open(os.path.join(tmp, "report.json")) as f:
                    r["report"] = f.read()
                rep = json.loads(r["report"])
                r["status"], r["metrics"] = "ok", metrics_of(rep, desc)
                r["gtsim_version"] = rep["context"]["gtsim_version"]
            else:
                r["error"] = err[-ERROR_TAIL:]
    r["finished"] = time.time()
    r["seconds"] = r["finished"] - r["started"]
    return r


class Progress:
    """A progress bar with an ETA on stderr (one line per point when it is not a terminal)."""

    def __init__(self, total, already):
        self.total, self.done, self.ok, self.failed = total, 0, already.get("ok", 0), already.get("failed", 0)
        self.todo, self.t0, self.tty = total - self.ok - self.failed, time.time(), sys.stderr.isatty()

    def eta(self):
        if not self.done:
            return "?"
        s = int((time.time() - self.t0) / self.done * (self.todo - self.done))
        return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)

    def point(self, r, p):
        self.done += 1
        self.ok += r["status"] == "ok"
        self.failed += r["status"] == "failed"
        n = self.ok + self.failed
        if self.tty:
            w = 30
            bar = "#" * (w * n // max(self.total, 1))
            sys.stderr.write("\r\033[K[%-*s] %d/%d ok %d failed %d, ETA %s" % (
                w, bar, n, self.total, self.ok, self.failed, self.eta()))
        else:
            what = " ".join("%s=%s" % kv for kv in sspec.params(p))
            sys.stderr.write("[%d/%d] %-6s %.1f s  %s  (ETA %s)\n" % (
                n, self.total, r["status"], r["seconds"], what, self.eta()))
        sys.stderr.flush()

    def end(self):
        if self.tty:
            sys.stderr.write("\n")


def run_local(db, ctx, points, jobs, progress):
    """Runs points (dicts) on `jobs` threads, each a gtsim process, recording each result as
    it arrives. Returns normally, or raises Interrupted after putting the unfinished points
    back to pending. ctx as for execute."""
    byid = {sspec.point_id(p): p for p in points}
    running = set()
    queue, futs = list(byid), {}
    pool = cf.ThreadPoolExecutor(max_workers=jobs)
    with Stop() as stop:
        try:
            while (queue or futs) and not stop.requested:
                while queue and len(futs) < jobs and not stop.requested:
                    pid = queue.pop(0)
                    running.add(pid)
                    sdb.mark_running(db, pid, ctx["backend"], socket.gethostname())
                    futs[pool.submit(execute, ctx, byid[pid])] = pid
                done, _ = cf.wait(list(futs), timeout=WAKE, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    pid = futs.pop(f)
                    r = f.result()
                    if r is not None:
                        sdb.record(db, r)
                        running.discard(pid)
                        progress.point(r, byid[pid])
            if queue or futs:  # stopped
                ctx["procs"].stop()
                pool.shutdown(wait=True, cancel_futures=True)
                sdb.mark_pending(db, running)
                raise Interrupted()
        finally:
            pool.shutdown(wait=True)
