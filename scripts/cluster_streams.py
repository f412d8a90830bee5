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

Usage: gtsim --arch configs/stcp920.cfg workloads/M.gtg --sched S --batch B --emit P.gtasm
       scripts/cluster_streams.py [--exact] P.gtasm
"""
import re
import sys

OPERAND = re.compile(r'\b(dst|src|a|b|c|idx|region|cluster|\w+_tile|tile)=("[^"]*"|\S+)')
OFFSET = re.compile(r'\b(\w+_off|off|offset)=\S+')
LOOKAHEAD = 200
FIELD = re.compile(r'(\w+)=("[^"]*"|\S+)')
REGIONS = {'dst', 'src', 'a', 'b', 'c', 'idx', 'region', 'init'}
OFFSETS = {'dst_off': 'dst', 'src_off': 'src', 'a_off': 'a', 'b_off': 'b', 'c_off': 'c',
           'idx_off': 'idx', 'offset': 'region'}  # an offset, and the region it is into


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


def exact(a, b):
    """(instructions of b that repeat a exactly before the first mismatch, the mismatch's kind:
    'ok' when b is a whole)"""
    maps = ({}, {}, {}, {})  # regions a->b, b->a, tiles a->b, b->a
    shift = {}
    for n, ((oa, fa), (ob, fb)) in enumerate(zip(a, b)):
        names = set(fa) - set(OFFSETS) - {'cluster'}
        if oa != ob or names != set(fb) - set(OFFSETS) - {'cluster'}:
            return n, 'fields'
        for k in names:
            va, vb = fa[k], fb[k]
            if k in REGIONS or k == 'tile' or k.endswith('_tile'):
                fwd, back = maps[0:2] if k in REGIONS else maps[2:4]
                if fwd.setdefault(va, vb) != vb or back.setdefault(vb, va) != va:
                    return n, 'map ' + k
            elif va != vb:
                return n, 'value ' + k
        for k, reg in OFFSETS.items():
            if k in fa or k in fb:
                d = int(fb.get(k, 0)) - int(fa.get(k, 0))
                if shift.setdefault((fa.get(reg), fb.get(reg)), d) != d:
                    return n, 'shift ' + k
    return min(len(a), len(b)), 'ok' if len(a) == len(b) else 'length'


def pairs(qs):
    """(cluster 0's queue, the same queue of a later cluster) for every later cluster's queue"""
    for name, insts in qs.items():
        m = re.match(r'c(\d+)\.(.*)', name)
        if m and m.group(1) != '0' and ('c0.' + m.group(2)) in qs:
            yield qs['c0.' + m.group(2)], insts


def main():
    args = sys.argv[1:]
    strict = args[:1] == ['--exact']
    if len(args) != 1 + strict:
        sys.exit(__doc__)
    qs = queues(args[-1], record if strict else key)
    total = sum(len(v) for v in qs.values())
    pct = lambda x: f"{x} ({100.0 * x / total if total else 0.0:.1f}%)"
    if not strict:
        repeated = sum(aligned(a, b) for a, b in pairs(qs))
        print(f"{total} instructions, {pct(repeated)} of them repeat cluster 0's")
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
