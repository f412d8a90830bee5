"""Plots of a sweep database (docs/sweep.md "Plots"): a metric against a parameter, one line
per strategy; the speedup of one strategy over another on a grid of two parameters (heatmap);
the Pareto front of throughput against on-chip bytes. Only points that ran (status ok) are
drawn; a parameter that varies but is neither an axis, the series, the panel nor fixed by
--where is an error, never averaged away.
"""

import math

from . import files


class PlotError(Exception):
    """A plot that cannot be drawn as asked: the message says which option to change."""


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _key(v):
    """Sort key: numbers by value, then strings."""
    n = _num(v)
    return (0, n, "") if n is not None else (1, 0, str(v))


def value(row, name):
    """A parameter (arch, set:KEY, ...) or, failing that, a metric of a row."""
    if name in row["params"]:
        return row["params"][name]
    return row["metrics"].get(name)


def select(rows, where):
    """The rows that ran and match every NAME=VALUE of where."""
    out = [r for r in rows if r["status"] == "ok"]
    for w in where:
        name, sep, want = w.partition("=")
        if not sep:
            raise PlotError("--where takes NAME=VALUE, not %r" % w)
        known = {n for r in out for n in r["params"]}
        if name not in known:
            raise PlotError("--where %s: no parameter %r (parameters: %s)" % (w, name, ", ".join(sorted(known))))
        out = [r for r in out if r["params"].get(name) == want]
    if not out:
        raise PlotError("no point that ran matches %s" % (" ".join(where) or "(all)"))
    return out


def check_fixed(rows, used, names):
    """Raises unless every parameter of names but `used` has one value over rows."""
    for n in names:
        if n in used:
            continue
        vals = sorted({r["params"].get(n) for r in rows}, key=_key)
        if len(vals) > 1:
            raise PlotError("parameter %s varies (%s): fix it with --where %s=VALUE or make it an "
                            "axis, --series or --panel" % (n, ", ".join(map(str, vals)), n))


def _save(fig, out):
    files.write_via_temp(out, lambda tmp: fig.savefig(tmp, dpi=110))


def _log_axis(xs):
    return min(xs) > 0 and max(xs) / min(xs) >= 8


def lines(plt, rows, names, a, title):
    """a: x, y, series, panel, where, out."""
    rows = select(rows, a.where)
    check_fixed(rows, {a.x, a.series, a.panel}, names)
    panels = sorted({value(r, a.panel) for r in rows}, key=_key) if a.panel else [None]
    cols = min(len(panels), 2)
    nrows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5.6 * cols + 0.5, 3.9 * nrows + 0.4), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, pv in zip(axes.flat, panels):
        sub = [r for r in rows if pv is None or value(r, a.panel) == pv]
        for sv in sorted({value(r, a.series) for r in sub}, key=_key):
            pts = sorted(((_num(value(r, a.x)), value(r, a.y)) for r in sub if value(r, a.series) == sv),
                         key=lambda t: t[0])
            xs = [x for x, _ in pts]
            if None in xs:
                raise PlotError("--x %s: not numeric" % a.x)
            ax.plot(xs, [y for _, y in pts], marker="o", label=str(sv))
            if len(pts) > 1 and _log_axis(xs):
                ax.set_xscale("log", base=2)
        ax.set_xlabel(a.x)
        ax.set_ylabel(a.y)
        ax.grid(True, alpha=0.3)
        ax.set_title("%s = %s" % (a.panel, pv) if a.panel else title, fontsize=10)
        ax.legend(title=a.series, fontsize=8)
    if a.panel:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _save(fig, a.out)


def _cell_ratios(rows, a):
    base_k, _, base_v = a.baseline.partition("=")
    tgt_k, _, tgt_v = a.target.partition("=")
    if base_k != tgt_k or not base_v or not tgt_v:
        raise PlotError("--baseline and --target name the same parameter: strategy=tvm strategy=graphturbo:full")
    cells = {}
    for r in rows:
        v = r["params"].get(base_k)
        if v in (base_v, tgt_v):
            cells.setdefault((value(r, a.x), value(r, a.y)), {})[v] = r["metrics"][a.metric]
    return base_k, {k: (c[tgt_v] / c[base_v] if base_v in c and tgt_v in c and c[base_v] else None)
                    for k, c in cells.items()}


def heatmap(plt, rows, names, a, title):
    """a: x, y, metric, baseline, target, where, out: target's metric / baseline's per cell."""
    from matplotlib.colors import TwoSlopeNorm
    rows = select(rows, a.where)
    base_k, ratio = _cell_ratios(rows, a)
    check_fixed(rows, {a.x, a.y, base_k}, names)
    xs = sorted({k[0] for k in ratio}, key=_key)
    ys = sorted({k[1] for k in ratio}, key=_key)
    grid = [[ratio.get((x, y)) for x in xs] for y in ys]
    vals = [v for row in grid for v in row if v is not None]
    if not vals:
        raise PlotError("no cell has both %s and %s" % (a.baseline, a.target))
    lo, hi = min(vals + [1.0]), max(vals + [1.0])
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 1 - 1e-6), vmax=max(hi, 1 + 1e-6))
    fig, ax = plt.subplots(figsize=(1.0 * len(xs) + 3, 0.6 * len(ys) + 2))
    masked = [[v if v is not None else math.nan for v in row] for row in grid]
    im = ax.imshow(masked, cmap="RdBu", norm=norm, origin="lower", aspect="auto")
    for j, row in enumerate(grid):
        for i, v in enumerate(row):
            dark = v is not None and abs(float(norm(v)) - 0.5) > 0.3
            ax.text(i, j, "-" if v is None else "%.2fx" % v, ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(a.x)
    ax.set_ylabel(a.y)
    fig.colorbar(im, ax=ax, label="%s / %s" % (a.target.partition("=")[2], a.baseline.partition("=")[2]))
    ax.set_title("%s\n%s: %s over %s" % (title, a.metric, a.target, a.baseline), fontsize=9)
    fig.tight_layout()
    _save(fig, a.out)


def pareto_front(pts):
    """The points (x, y, ...) no other point beats: x no larger and y no smaller, one strictly."""
    front = []
    for p in sorted(pts, key=lambda t: (t[0], -t[1])):
        if not front or p[1] > front[-1][1]:
            front.append(p)
    return front


def pareto(plt, rows, names, a, title):
    """a: x (to minimise), y (to maximise), series, where, out. Returns the front's rows."""
    rows = select(rows, a.where)
    pts = [(r["metrics"].get(a.x), r["metrics"].get(a.y), r) for r in rows]
    if any(x is None or y is None for x, y, _ in pts):
        raise PlotError("--x %s and --y %s must be metrics of every point" % (a.x, a.y))
    front = pareto_front(pts)
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for sv in sorted({value(r, a.series) for _, _, r in pts}, key=_key):
        sel = [(x, y) for x, y, r in pts if value(r, a.series) == sv]
        ax.scatter([x for x, _ in sel], [y for _, y in sel], label=str(sv), alpha=0.75, s=24)
    ax.step([x for x, _, _ in front], [y for _, y, _ in front], where="post", color="black",
            lw=1.2, label="Pareto front")
    ax.scatter([x for x, _, _ in front], [y for _, y, _ in front], facecolors="none",
               edgecolors="black", s=70)
    if _log_axis([x for x, _, _ in pts]):
        ax.set_xscale("log", base=2)
    ax.set_xlabel(a.x)
    ax.set_ylabel(a.y)
    ax.grid(True, alpha=0.3)
    ax.legend(title=a.series, fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    _save(fig, a.out)
    return [r for _, _, r in front]
