"""The sweep spec (docs/sweep.md): a TOML file whose [grid] lists the values of every axis
(configs, --set keys, models, batches, strategies, GraphTurbo levels, other gtsim options)
and whose [[point]] tables list single points; the sweep is the grid's cartesian product
followed by the listed points, in that order, without duplicates.

A point is a plain dict: arch, model, strategy (strings), batch and batch_per_cluster (ints,
absent when not given), "set" and "option" (dicts of key -> value as text). Its id is the
SHA-1 of its canonical JSON, so the same point has the same id in every sweep and database.
"""

import hashlib
import itertools
import json
import math
import os
import tomllib


class SpecError(Exception):
    """A bad spec: the message names the file and the key."""


STRATEGIES = ("tvm", "astitch", "graphturbo")
LEVELS = ("gb", "lb", "instances", "full")
TOP_KEYS = {"name", "description", "grid", "point", "timeout"}
GRID_KEYS = {"arch", "model", "batch", "batch_per_cluster", "strategy", "level", "set", "option"}
# gtsim options a spec may not give through [grid.option]: the sweep sets them itself
RESERVED = {"arch", "set", "batch", "batch-per-cluster", "sched", "compare", "json", "csv", "o",
            "trace", "perfetto", "emit", "describe", "dump-after", "dump-schedule", "stats",
            "convert", "disasm", "config-doc", "isa-doc", "help", "version"}


def fmt(v):
    """A value as gtsim reads it: ints without a point, floats with 12 significant digits."""
    if isinstance(v, bool):
        raise TypeError("boolean")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%d" % v if v.is_integer() and abs(v) < 1e15 else "%.12g" % v
    return str(v)


def _range(where, r):
    """{from, to, step} (linear), {from, to, factor} (geometric) or {from, to, count[, log]}."""
    unknown = set(r) - {"from", "to", "step", "factor", "count", "log"}
    if unknown or "from" not in r or "to" not in r:
        raise SpecError("%s: a range is {from, to, step|factor|count [, log]}; got keys %s"
                        % (where, ", ".join(sorted(r))))
    a, b = r["from"], r["to"]
    ints = isinstance(a, int) and isinstance(b, int)
    modes = [k for k in ("step", "factor", "count") if k in r]
    if len(modes) != 1:
        raise SpecError("%s: a range needs exactly one of step, factor, count" % where)
    if modes[0] == "step":
        s = r["step"]
        if not s > 0 or b < a:
            raise SpecError("%s: step must be > 0 and from <= to" % where)
        n = int(math.floor((b - a) / s + 1e-9)) + 1
        vals = [a + i * s for i in range(n)]
        ints = ints and isinstance(s, int)
    elif modes[0] == "factor":
        f = r["factor"]
        if not f > 1 or not a > 0 or b < a:
            raise SpecError("%s: factor must be > 1, from > 0 and from <= to" % where)
        vals, v = [], a
        while v <= b * (1 + 1e-9):
            vals.append(v)
            v = v * f
        ints = ints and isinstance(f, int)
    else:
        n = r["count"]
        if not isinstance(n, int) or n < 2 or b < a or (r.get("log") and not a > 0):
            raise SpecError("%s: count must be an integer >= 2, from <= to (> 0 with log)" % where)
        if r.get("log"):
            vals = [a * (b / a) ** (i / (n - 1)) for i in range(n)]
        else:
            vals = [a + (b - a) * i / (n - 1) for i in range(n)]
    if ints:
        vals = [int(round(v)) for v in vals]
    else:
        vals = [float("%.12g" % v) for v in vals]
    return list(dict.fromkeys(vals))


def values(where, v):
    """An axis: a scalar, a list of scalars, or a range table; returned as a list."""
    if isinstance(v, dict):
        return _range(where, v)
    vs = v if isinstance(v, list) else [v]
    if not vs:
        raise SpecError("%s: an empty list" % where)
    for x in vs:
        if isinstance(x, (dict, list)) or isinstance(x, bool):
            raise SpecError("%s: values are numbers or strings, not %r" % (where, x))
    return vs


def _flatten(where, d, prefix=""):
    """[grid.set] keys: "core.npu.lb_kib" quoted, or TOML's dotted form as nested tables."""
    out = {}
    for k, v in d.items():
        key = prefix + k
        if isinstance(v, dict) and "from" not in v:
            out.update(_flatten(where, v, key + "."))
        else:
            out[key] = v
    return out


def _strategies(where, strategies, levels, level_option):
    """The strategies times the GraphTurbo levels (a level applies to plain graphturbo; plain
    graphturbo is graphturbo:full, gtsim's default level, unless an option axis sets it)."""
    out = []
    for s in strategies:
        base, _, lvl = str(s).partition(":")
        if base not in STRATEGIES or (lvl and (base != "graphturbo" or lvl not in LEVELS)):
            raise SpecError("%s: unknown strategy %r (tvm, astitch, graphturbo[:%s])"
                            % (where, s, "|".join(LEVELS)))
        if base == "graphturbo" and not lvl and levels:
            out += ["graphturbo:" + lv for lv in levels]
        elif base == "graphturbo" and not lvl and not level_option:
            out.append("graphturbo:full")
        else:
            out.append(str(s))
    return list(dict.fromkeys(out))


def _axes(where, t, need):
    """The axes of a [grid] or [[point]] table as (name, values) in a fixed order."""
    unknown = set(t) - GRID_KEYS
    if unknown:
        raise SpecError("%s: unknown key %s (known: %s)" % (where, ", ".join(sorted(unknown)),
                                                           ", ".join(sorted(GRID_KEYS))))
    for k in need:
        if k not in t:
            raise SpecError("%s: missing %s" % (where, k))
    levels = [str(x) for x in values(where + ".level", t["level"])] if "level" in t else []
    for lv in levels:
        if lv not in LEVELS:
            raise SpecError("%s.level: unknown level %r (%s)" % (where, lv, ", ".join(LEVELS)))
    axes = [("arch", [str(x) for x in values(where + ".arch", t["arch"])]),
            ("model", [str(x) for x in values(where + ".model", t["model"])])]
    for k in ("batch", "batch_per_cluster"):
        if k in t:
            vs = values(where + "." + k, t[k])
            if any(not isinstance(x, int) or x < 1 for x in vs):
                raise SpecError("%s.%s: integers >= 1" % (where, k))
            axes.append((k, vs))
    level_option = any(k.lstrip("-") == "gt-level" for k in t.get("option", {}))
    axes.append(("strategy", _strategies(where + ".strategy", values(where + ".strategy", t["strategy"]),
                                         levels, level_option)))
    for sec in ("set", "option"):
        d = t.get(sec, {})
        if not isinstance(d, dict):
            raise SpecError("%s.%s: a table of key = values" % (where, sec))
        for k, v in _flatten(where, d).items():
            if sec == "option" and k.lstrip("-") in RESERVED:
                raise SpecError("%s.option: %r is set by the sweep itself" % (where, k))
            axes.append((sec + ":" + (k.lstrip("-") if sec == "option" else k),
                         [fmt(x) for x in values("%s.%s.%s" % (where, sec, k), v)]))
    return axes


def _point(axes, combo):
    p = {"set": {}, "option": {}}
    for (name, _), v in zip(axes, combo):
        sec, _, key = name.partition(":")
        if key:
            p[sec][key] = v
        else:
            p[name] = v
    return p


def point_id(p):
    return hashlib.sha1(json.dumps(p, sort_keys=True).encode()).hexdigest()[:16]


def load(path):
    """The spec at path: {"name", "path", "dir", "text", "timeout", "points": [...]}."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        t = tomllib.loads(raw.decode("utf-8"))
    except OSError as e:
        raise SpecError("%s: cannot read: %s" % (path, e.strerror))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SpecError("%s: not a TOML file: %s" % (path, e))
    unknown = set(t) - TOP_KEYS
    if unknown:
        raise SpecError("%s: unknown key %s (known: %s)" % (path, ", ".join(sorted(unknown)),
                                                           ", ".join(sorted(TOP_KEYS))))
    if "grid" not in t and "point" not in t:
        raise SpecError("%s: no [grid] and no [[point]]: nothing to sweep" % path)
    points = []
    if "grid" in t:
        axes = _axes(path + ": grid", t["grid"], ("arch", "model", "strategy"))
        points += [_point(axes, c) for c in itertools.product(*[v for _, v in axes])]
    for i, pt in enumerate(t.get("point", [])):
        axes = _axes("%s: point[%d]" % (path, i), pt, ("arch", "model", "strategy"))
        points += [_point(axes, c) for c in itertools.product(*[v for _, v in axes])]
    seen, uniq = set(), []
    for p in points:
        if point_id(p) not in seen:
            seen.add(point_id(p))
            uniq.append(p)
    timeout = t.get("timeout", 0)
    if not isinstance(timeout, (int, float)) or timeout < 0:
        raise SpecError("%s: timeout is seconds per point (0: none)" % path)
    name = t.get("name") or os.path.splitext(os.path.basename(path))[0]
    return {"name": str(name), "path": os.path.abspath(path), "dir": os.path.dirname(os.path.abspath(path)),
            "text": raw.decode("utf-8"), "timeout": timeout, "points": uniq}


def gtsim_args(p):
    """The gtsim command line of point p (without the binary and the output options)."""
    a = ["--arch", p["arch"], p["model"], "--sched", p["strategy"]]
    if "batch" in p:
        a += ["--batch", str(p["batch"])]
    if "batch_per_cluster" in p:
        a += ["--batch-per-cluster", str(p["batch_per_cluster"])]
    for k, v in p["set"].items():
        a += ["--set", "%s=%s" % (k, v)]
    for k, v in p["option"].items():
        a += ["--" + k] + ([] if v == "" else [v])
    return a


def describe_args(p):
    """The gtsim command line that resolves point p's config (for its hash and on-chip bytes)."""
    a = ["--arch", p["arch"], "--describe", "--json"]
    for k, v in p["set"].items():
        a += ["--set", "%s=%s" % (k, v)]
    return a


def params(p):
    """Point p as flat (name, value) pairs: arch, model, batch, ..., set:KEY, option:NAME."""
    out = [(k, p[k]) for k in ("arch", "model", "batch", "batch_per_cluster", "strategy") if k in p]
    out += [("set:" + k, v) for k, v in p["set"].items()]
    out += [("option:" + k, v) for k, v in p["option"].items()]
    return out
