"""The sweep database (SQLite, docs/sweep.md "The database"): one row per point with its
parameters, status, exit code, error, the resolved config's hash and the gtsim version; one row
per (point, metric); the report JSON of every point that ran. Every change is one transaction,
so a sweep killed at any moment leaves a consistent database, and the next run resumes it.
"""

import json
import sqlite3
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS sweep (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS points (
  id TEXT PRIMARY KEY,          -- SHA-1 of the point's canonical JSON (spec.point_id)
  idx INTEGER NOT NULL,         -- its position in the spec
  spec TEXT NOT NULL,           -- canonical JSON of the point
  status TEXT NOT NULL,         -- pending, running, ok, failed
  attempts INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER,            -- gtsim's exit status (-N: killed by signal N; 124: timeout)
  error TEXT,                   -- the end of gtsim's stderr when it failed
  config_hash TEXT,             -- SHA-256 of the resolved config (gtsim --describe --json)
  gtsim_version TEXT,
  backend TEXT, host TEXT,
  started REAL, finished REAL, seconds REAL
);
CREATE TABLE IF NOT EXISTS params (id TEXT, name TEXT, value TEXT, PRIMARY KEY (id, name));
CREATE TABLE IF NOT EXISTS metrics (id TEXT, name TEXT, value REAL, PRIMARY KEY (id, name));
CREATE TABLE IF NOT EXISTS reports (id TEXT PRIMARY KEY, json TEXT);
"""

PARAM_ORDER = ("arch", "model", "batch", "batch_per_cluster", "strategy")


def open_db(path):
    db = sqlite3.connect(path, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    return db


def add_points(db, spec, points, pid, params):
    """Records the spec and inserts its points that are not in the database yet (pending)."""
    with db:
        db.execute("INSERT OR REPLACE INTO sweep VALUES ('spec', ?)", (spec["text"],))
        db.execute("INSERT OR REPLACE INTO sweep VALUES ('spec_path', ?)", (spec["path"],))
        db.execute("INSERT OR IGNORE INTO sweep VALUES ('created', ?)", (repr(time.time()),))
        for i, p in enumerate(points):
            cur = db.execute("INSERT OR IGNORE INTO points (id, idx, spec, status) VALUES (?, ?, ?, 'pending')",
                             (pid(p), i, json.dumps(p, sort_keys=True)))
            if cur.rowcount:
                db.executemany("INSERT OR REPLACE INTO params VALUES (?, ?, ?)",
                               [(pid(p), k, str(v)) for k, v in params(p)])
            else:
                db.execute("UPDATE points SET idx = ? WHERE id = ?", (i, pid(p)))


def todo(db, ids, retry_failed):
    """The ids (of `ids`, in order) still to run: pending, or left running by a run that was
    stopped, or failed when retry_failed."""
    want = {"pending", "running"} | ({"failed"} if retry_failed else set())
    status = dict(db.execute("SELECT id, status FROM points"))
    return [i for i in ids if status.get(i) in want]


def mark_running(db, pid, backend, host):
    with db:
        db.execute("UPDATE points SET status = 'running', attempts = attempts + 1, backend = ?, "
                   "host = ?, started = ? WHERE id = ?", (backend, host, time.time(), pid))


def mark_pending(db, ids):
    with db:
        db.executemany("UPDATE points SET status = 'pending' WHERE id = ? AND status = 'running'",
                       [(i,) for i in ids])


def record(db, r):
    """Stores one result (run.execute's record) in one transaction."""
    with db:
        db.execute("UPDATE points SET status = ?, exit_code = ?, error = ?, config_hash = ?, "
                   "gtsim_version = ?, backend = ?, host = ?, started = ?, finished = ?, seconds = ? "
                   "WHERE id = ?",
                   (r["status"], r["exit_code"], r["error"], r["config_hash"], r["gtsim_version"],
                    r["backend"], r["host"], r["started"], r["finished"], r["seconds"], r["id"]))
        db.execute("DELETE FROM metrics WHERE id = ?", (r["id"],))
        db.executemany("INSERT INTO metrics VALUES (?, ?, ?)",
                       [(r["id"], k, v) for k, v in sorted(r["metrics"].items())])
        if r.get("report") is not None:
            db.execute("INSERT OR REPLACE INTO reports VALUES (?, ?)", (r["id"], r["report"]))


def counts(db, ids=None):
    rows = db.execute("SELECT id, status FROM points").fetchall()
    c = {"pending": 0, "running": 0, "ok": 0, "failed": 0}
    for i, s in rows:
        if ids is None or i in ids:
            c[s] = c.get(s, 0) + 1
    return c


def table(db):
    """Every point as a dict: id, idx, status, ..., its parameters and metrics, in spec order."""
    cols = ["id", "idx", "status", "attempts", "exit_code", "error", "config_hash", "gtsim_version",
            "backend", "host", "seconds"]
    rows = {r[0]: dict(zip(cols, r)) for r in
            db.execute("SELECT %s FROM points ORDER BY idx" % ", ".join(cols))}
    params, metrics = {}, {}
    for i, k, v in db.execute("SELECT id, name, value FROM params"):
        params.setdefault(i, {})[k] = v
    for i, k, v in db.execute("SELECT id, name, value FROM metrics"):
        metrics.setdefault(i, {})[k] = v
    out = []
    for i, r in rows.items():
        r["params"] = params.get(i, {})
        r["metrics"] = metrics.get(i, {})
        out.append(r)
    return out


def param_names(rows):
    """The parameter names of rows, the fixed ones first, then set:, then option:."""
    names = set()
    for r in rows:
        names |= set(r["params"])
    fixed = [n for n in PARAM_ORDER if n in names]
    return fixed + sorted(n for n in names if n not in fixed)
