#!/usr/bin/env python3
"""cluster_streams.py — how much of a program the clusters repeat: the share of instructions in
the queues of clusters 1, 2, ... that are, in order, the instructions of cluster 0's queue of
the same name but for their region, tile and offset operands (and an alloc's cluster).

An upper bound on what emitting a kernel's streams once for all clusters could save: it does not
check that the regions correspond one to one. The streams are aligned greedily: on a mismatch
the nearer of the two resumptions within 200 instructions is taken, else both move on one.

With --exact: the instructions in queues of clusters 1, 2, ... that are exactly cluster 0's
queue of the same name, whole, but for one one-to-one map of region ids, one of tile ids (an
alloc's cluster aside), and, per pair of regions, one constant shift of every offset into it:
what a program segment "cluster 0's records with these substitutions" could carry as it is
emitted today. Also the exact prefixes (how far each queue repeats before its first mismatch),
and the queues by the kind of that mismatch.

With --segments: the instructions of clusters 1, 2, ... covered by runs of at least SEGMENT
instructions that are, each with maps and shifts of its own, an exact run of cluster 0's queue of
the same name, the runs taken in order along both queues: what segments over parts of queues
could carry, where cluster 0 does one-off work the others do not (the run's DDR weights, shared
tensors). A later cluster's instruction that starts no run is its own; the next run is sought at
cluster 0's next instructions of the same shape (opcode, field names and the values that are not
regions, tiles or offsets), at most CANDIDATES of them.

Usage: gtsim --arch configs/stcp920.cfg workloads/M.gtg --sched S --batch B --emit P.gtasm
       scripts/cluster_streams.py [--exact | --segments] P.gtasm
"""
import bisect
import re
import sys

OPERAND = re.compile(r'\b(dst|src|a|b|c|idx|region|cluster|\w+_tile|tile)=("[^"]*"|\S+)')
OFFSET = re.compile(r'\b(\w+_off|off|offset)=\S+')
LOOKAHEAD = 200
FIELD = re.compile(r'(\w+)=("[^"]*"|\S+)')
REGIONS = {'dst', 'src', 'a', 'b', 'c', 'idx', 'region'}
TILES = {'tile', 'init', 'final'}  # and every name ending in _tile
OFFSETS = {'dst_off': 'dst', 'src_off': 'src', 'offset': 'region'}  # an offset, its region
# the offsets each opcode has (isa.def): an offset left out of the assembly is 0, and it is
# compared (by its region's shift) whenever its region is given
OP_OFFSETS = {'mov': ('dst_off', 'src_off'), 'vec': ('dst_off',), 'alloc': ('offset',)}


def queues(path, convert):
    """{queue name: [convert(text) of each of its instructions]} of a .gtasm listing"""
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith('.queue'):
                cur = out.setdefault(line.split()[1], [])
            elif cur is not None and line.startswith('  '):
                cur.append(convert(line.strip()))
    return out


def key(text):
    """an instruction without its region, tile and offset operands"""
    text = OPERAND.sub(lambda m: m.group(1) + '=_', text)
    return OFFSET.sub(lambda m: m.group(1) + '=_', text)


def record(text):
    """(opcode, {field: value}) of an instruction"""
    return text.split()[0], dict(FIELD.findall(text))


def aligned(a, b):
    """Instructions of b matched in order with equal ones of a."""
    i = j = same = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            same, i, j = same + 1, i + 1, j + 1
            continue
        da = next((d for d in range(1, LOOKAHEAD) if i + d < len(a) and a[i + d] == b[j]), None)
        db = next((d for d in range(1, LOOKAHEAD) if j + d < len(b) and b[j + d] == a[i]), None)
        if da is None and db is None:
            i, j = i + 1, j + 1
        elif db is None or (da is not None and da <= db):
            i += da
        else:
            j += db
    return same


def compared(fields):
    """the field names a repeat compares: all but the offsets (shifted) and an alloc's cluster"""
    return set(fields) - set(OFFSETS) - {'cluster'}


def is_id(k):
    """whether field k names a region or a tile (mapped one to one, not compared)"""
    return k in REGIONS or k in TILES or k.endswith('_tile')


def run(a, i, b, j, limit=None):
    """(how many instructions from b[j] repeat a[i] on exactly, under one map of regions, one of
    tiles and one shift per region pair, all starting empty; the first mismatch's kind, or
    'end' when a queue or the limit ends the run)"""
    maps = ({}, {}, {}, {})  # regions a->b, b->a, tiles a->b, b->a
    shift = {}
    n = 0
    while i + n < len(a) and j + n < len(b) and (limit is None or n < limit):
        (oa, fa), (ob, fb) = a[i + n], b[j + n]
        names = compared(fa)
        if oa != ob or names != compared(fb):
            return n, 'fields'
        for k in names:
            va, vb = fa[k], fb[k]
            if is_id(k):
                fwd, back = maps[0:2] if k in REGIONS else maps[2:4]
                if fwd.setdefault(va, vb) != vb or back.setdefault(vb, va) != va:
                    return n, 'map ' + k
            elif va != vb:
                return n, 'value ' + k
        for k in OP_OFFSETS.get(oa, ()):
            reg = OFFSETS[k]
            if reg in fa:
                d = int(fb.get(k, 0)) - int(fa.get(k, 0))
                if shift.setdefault((fa.get(reg), fb.get(reg)), d) != d:
                    return n, 'shift ' + k
        n += 1
    return n, 'end'


def exact(a, b):
    """(instructions of b that repeat a exactly before the first mismatch, the mismatch's kind:
    'ok' when b is a whole)"""
    n, kind = run(a, 0, b, 0)
    if kind != 'end':
        return n, kind
    return n, 'ok' if len(a) == len(b) else 'length'


SEGMENT = 8
CANDIDATES = 8


def shape(rec):
    """what a run's start must share: the opcode, the field names and the values that are not
    regions, tiles or offsets"""
    op, f = rec
    return (op,) + tuple(sorted((k, '' if is_id(k) else f[k]) for k in compared(f)))


def segments(a, b):
    """(instructions of b covered by runs of at least SEGMENT that repeat a's, in order; the
    runs)"""
    at = {}  # shape -> a's positions, ascending
    for p, rec in enumerate(a):
        at.setdefault(shape(rec), []).append(p)
    i = j = covered = runs = 0
    while j < len(b):
        pos = at.get(shape(b[j]), [])
        k = bisect.bisect_left(pos, i)
        start = next((p for p in pos[k:k + CANDIDATES]
                      if run(a, p, b, j, SEGMENT)[0] >= SEGMENT), None)
        if start is None:
            j += 1  # b's own instruction
            continue
        n = run(a, start, b, j)[0]
        covered, runs, i, j = covered + n, runs + 1, start + n, j + n
    return covered, runs


def pairs(qs):
    """(cluster 0's queue, the same queue of a later cluster) for every later cluster's queue"""
    for name, insts in qs.items():
        m = re.match(r'c(\d+)\.(.*)', name)
        if m and m.group(1) != '0' and ('c0.' + m.group(2)) in qs:
            yield qs['c0.' + m.group(2)], insts


def main():
    args = sys.argv[1:]
    mode = args[0] if args[:1] in (['--exact'], ['--segments']) else None
    if len(args) != 1 + (mode is not None):
        sys.exit(__doc__)
    qs = queues(args[-1], record if mode else key)
    total = sum(len(v) for v in qs.values())
    pct = lambda x: f"{x} ({100.0 * x / total if total else 0.0:.1f}%)"
    if mode is None:
        repeated = sum(aligned(a, b) for a, b in pairs(qs))
        print(f"{total} instructions, {pct(repeated)} of them repeat cluster 0's")
        return
    if mode == '--segments':
        covered = runs = 0
        for a, b in pairs(qs):
            n, r = segments(a, b)
            covered, runs = covered + n, runs + r
        mean = covered / runs if runs else 0.0
        print(f"{total} instructions; in runs of at least {SEGMENT} that repeat cluster 0's "
              f"exactly: {pct(covered)}, {runs} runs of {mean:.1f} on average")
        return
    whole = prefix = 0
    kinds = {}
    for a, b in pairs(qs):
        n, kind = exact(a, b)
        prefix += n
        whole += len(b) if kind == 'ok' else 0
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"{total} instructions; in queues that repeat cluster 0's exactly: {pct(whole)}; "
          f"in exact prefixes: {pct(prefix)}; queues by first mismatch: "
          + ', '.join(f'{k} {v}' for k, v in sorted(kinds.items())))


if __name__ == '__main__':
    main()
