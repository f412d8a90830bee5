"""The Slurm backend (docs/sweep.md "On Slurm"): the points to run go to one job array
(sbatch), --points-per-task points per array task, at most --array-size tasks at once; each
task runs its points with the same code as the local backend (run.execute) and writes one
result file per point into the database's work directory (DB.slurm/results/ID.json, atomic);
the collector — the `gtsim-sweep run` that submitted the job — merges them into the database
as they appear, and any later run merges what an earlier collector left, so a sweep resumes
across backends. The work directory must be on a file system the nodes share.
"""

import json
import os
import shutil
import subprocess
import sys
import time

from . import db as sdb
from . import files
from . import run as srun
from . import spec as sspec

POLL = 1.0  # seconds between looks at the results and the queue


class SlurmError(Exception):
    """sbatch or squeue failed: the message has their output."""


def workdir(dbpath):
    return os.path.abspath(dbpath) + ".slurm"


def collect(db, dbpath, progress=None, byid=None):
    """Merges the result files in the work directory into the database; returns their ids."""
    rdir = os.path.join(workdir(dbpath), "results")
    got = []
    for name in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = os.path.join(rdir, name)
        with open(path) as f:
            r = json.load(f)
        sdb.record(db, r)
        os.unlink(path)
        got.append(r["id"])
        if progress and byid and r["id"] in byid:
            progress.point(r, byid[r["id"]])
    return got


def _submit(jobdir, ctx, tasks, a):
    """Writes the job's files and submits the array; returns the job id."""
    os.makedirs(os.path.join(os.path.dirname(jobdir), "results"), exist_ok=True)
    os.makedirs(jobdir)
    with open(os.path.join(jobdir, "job.json"), "w") as f:
        json.dump({"gtsim": ctx["gtsim"], "cwd": ctx["cwd"], "timeout": ctx["timeout"],
                   "tasks": tasks}, f)
    script = os.path.join(jobdir, "task.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n# one array task of a gtsim-sweep (docs/sweep.md)\nexec %s %s worker %s "
                "\"$SLURM_ARRAY_TASK_ID\"\n" % (sys.executable, os.path.realpath(sys.argv[0]), jobdir))
    os.chmod(script, 0o755)
    array = "0-%d" % (len(tasks) - 1) + ("%%%d" % a.array_size if a.array_size else "")
    cmd = ["sbatch", "--parsable", "--job-name=gtsim-sweep", "--array=" + array,
           "--output=" + os.path.join(jobdir, "task-%a.out"), "--chdir=" + ctx["cwd"],
           "--ntasks=1", "--cpus-per-task=1"] + a.sbatch_arg + [script]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise SlurmError("cannot run sbatch: %s (is Slurm's client installed?)" % e.strerror)
    if r.returncode != 0:
        raise SlurmError("sbatch failed (exit %d): %s" % (r.returncode, r.stderr.strip()))
    return r.stdout.strip().split(";")[0]


def _queued(jobid):
    """Is any task of the job still pending or running?"""
    r = subprocess.run(["squeue", "-h", "-j", jobid, "-o", "%i"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0 and "Invalid job id" not in r.stderr:
        raise SlurmError("squeue failed (exit %d): %s" % (r.returncode, r.stderr.strip()))
    return r.returncode == 0 and r.stdout.strip() != ""


def _lost(db, jobdir, tasks, missing):
    """Points whose task ended without a result: failed, with the end of the task's output."""
    for t, ids in enumerate(tasks):
        for pid in (sspec.point_id(p) for p in ids):
            if pid not in missing:
                continue
            out = os.path.join(jobdir, "task-%d.out" % t)
            text = open(out, errors="replace").read()[-srun.ERROR_TAIL:] if os.path.exists(out) else ""
            sdb.record(db, {"id": pid, "status": "failed", "exit_code": -1, "config_hash": None,
                            "error": "slurm task %d ended without a result for this point\n%s" % (t, text),
                            "gtsim_version": None, "backend": "slurm", "host": None, "started": None,
                            "finished": time.time(), "seconds": None, "metrics": {}, "report": None})


def run(db, dbpath, ctx, points, a, progress):
    """Runs points as one job array and collects their results; raises run.Interrupted (after
    scancel, collecting what finished and putting the rest back to pending) on Ctrl-C."""
    if not points:
        return
    n = a.points_per_task
    tasks = [points[i:i + n] for i in range(0, len(points), n)]
    jobdir = os.path.join(workdir(dbpath), "job-%d" % int(time.time() * 1000))
    byid = {sspec.point_id(p): p for p in points}
    jobid = _submit(jobdir, ctx, tasks, a)
    sys.stderr.write("gtsim-sweep: slurm job %s: %d tasks of up to %d points\n" % (jobid, len(tasks), n))
    for pid in byid:
        sdb.mark_running(db, pid, "slurm", None)
    waiting = set(byid)
    with srun.Stop() as stop:
        while waiting and not stop.requested:
            queued = _queued(jobid)
            waiting -= set(collect(db, dbpath, progress, byid))
            if not queued:
                waiting -= set(collect(db, dbpath, progress, byid))
                _lost(db, jobdir, tasks, waiting)
                waiting = set()
            stop.sleep(POLL)
        if waiting:  # stopped
            subprocess.run(["scancel", jobid], capture_output=True)
            waiting -= set(collect(db, dbpath, progress, byid))
            sdb.mark_pending(db, waiting)
            raise srun.Interrupted()
    shutil.rmtree(jobdir, ignore_errors=True)


def worker(jobdir, task):
    """One array task: runs its points one after another, a result file each."""
    with open(os.path.join(jobdir, "job.json")) as f:
        job = json.load(f)
    ctx = {"gtsim": job["gtsim"], "cwd": job["cwd"], "timeout": job["timeout"], "backend": "slurm",
           "describer": srun.Describer(job["gtsim"], job["cwd"]), "procs": srun.Procs()}
    rdir = os.path.join(os.path.dirname(jobdir), "results")
    for p in job["tasks"][task]:
        r = srun.execute(ctx, p)

        def write(tmp, r=r):
            with open(tmp, "w") as f:
                json.dump(r, f)
        files.write_via_temp(os.path.join(rdir, r["id"] + ".json"), write)
    return 0
