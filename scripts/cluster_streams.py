#!/usr/bin/env python3
"""cluster_streams.py — how much of a program the clusters repeat: the share of instructions in
the queues of clusters 1, 2, ... that are, in order, the instructions of cluster 0's queue of
the same name but for their region, tile and offset operands (and an alloc's cluster).

An upper bound on what emitting a kernel's streams once for all clusters could save: it does not
check that the regions correspond one to one. The streams are aligned greedily: on a mismatch
the nearer of the two resumptions within 200 instructions is taken, else both move on one.

Usage: gtsim --arch configs/stcp920.cfg workloads/M.gtg --sched S --batch B --emit P.gtasm
       scripts/cluster_streams.py P.gtasm
"""
import re
import sys

OPERAND = re.compile(r'\b(dst|src|a|b|c|idx|region|cluster|\w+_tile|tile)=("[^"]*"|\S+)')
OFFSET = re.compile(r'\b(\w+_off|off|offset)=\S+')
LOOKAHEAD = 200


def streams(path):
    """{queue name: [key of each instruction without its region, tile and offset operands]}"""
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith('.queue'):
                cur = out.setdefault(line.split()[1], [])
            elif cur is not None and line.startswith('  '):
                key = OPERAND.sub(lambda m: m.group(1) + '=_', line.strip())
                cur.append(OFFSET.sub(lambda m: m.group(1) + '=_', key))
    return out


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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    qs = streams(sys.argv[1])
    total = sum(len(v) for v in qs.values())
    repeated = 0
    for name, insts in qs.items():
        m = re.match(r'c(\d+)\.(.*)', name)
        if m and m.group(1) != '0' and ('c0.' + m.group(2)) in qs:
            repeated += aligned(qs['c0.' + m.group(2)], insts)
    share = 100.0 * repeated / total if total else 0.0
    print(f"{total} instructions, {repeated} of them ({share:.1f}%) repeat cluster 0's")


if __name__ == '__main__':
    main()
