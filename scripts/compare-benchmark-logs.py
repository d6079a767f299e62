#!/usr/bin/env python3
"""Compares the GPU rows of two builds' benchmark logs from one run
(scripts/before-after-benchmarks.sh): NAME.before.ROUND.log against
NAME.after.ROUND.log.

For every GPU row (a line that names "GPU" and gives a time in ms) it prints
the best time of each build over its rounds, after / before, and the spread
of each build's rounds (largest / smallest), which is the run's own noise.
A row is flagged when after / before differs from 1 by more than the bound
(default 3%) and by more than both builds' spreads.

    python3 scripts/compare-benchmark-logs.py DIR [--bound 0.03] [--all]
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import re
import sys

ROW = re.compile(r"^(?P<label>.*?\S)\s{2,}(?P<ms>[0-9]+\.[0-9]+)(?:\s+ms\b|\s{2,}|$)")
PREFILTER = re.compile(r"^\s*(?P<label>GPU .*?|ITK CUDA .*?):.*median (?P<ms>[0-9.]+) ms")
SECTION = re.compile(r"^== (?P<case>\S+)")


def rows(path: pathlib.Path) -> dict:
    """label -> ms of the GPU rows of one log (labels made unique by order)."""
    found: dict = {}
    seen: collections.Counter = collections.Counter()
    case = ""
    for line in path.read_text(errors="replace").splitlines():
        section = SECTION.match(line)
        if section:
            case = section.group("case")
            continue
        match = PREFILTER.match(line) or ROW.match(line)
        if not match or "GPU" not in match.group("label"):
            continue
        label = (case + " " if PREFILTER.match(line) else "") + " ".join(match.group("label").split())
        seen[label] += 1
        key = label if seen[label] == 1 else f"{label} #{seen[label]}"
        found[key] = float(match.group("ms"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--bound", type=float, default=0.03)
    parser.add_argument("--all", action="store_true", help="print every row, not only the summary and flags")
    args = parser.parse_args()
    names = sorted({p.name.split(".")[0] for p in args.folder.glob("*.before.*.log")})
    flagged = 0
    total = 0
    for name in names:
        runs = {which: [rows(p) for p in sorted(args.folder.glob(f"{name}.{which}.*.log"))] for which in ("before", "after")}
        if not runs["before"] or not runs["after"]:
            continue
        labels = [k for k in runs["before"][0] if all(k in r for w in runs.values() for r in w)]
        ratios = []
        print(f"== {name}: {len(labels)} GPU rows, {len(runs['before'])} rounds per build")
        for label in labels:
            before = [r[label] for r in runs["before"]]
            after = [r[label] for r in runs["after"]]
            ratio = min(after) / min(before)
            spread = max(max(before) / min(before), max(after) / min(after)) - 1.0
            ratios.append(ratio)
            total += 1
            flag = abs(ratio - 1.0) > args.bound and abs(ratio - 1.0) > spread
            flagged += flag
            if args.all or flag:
                print(f"  {'FLAG ' if flag else '     '}{label[:90]:90s} before {min(before):9.3f} ms  after "
                      f"{min(after):9.3f} ms  x{ratio:.3f}  (rounds spread {100 * spread:.1f}%)")
        if ratios:
            ratios.sort()
            print(f"  after / before: median x{ratios[len(ratios) // 2]:.3f}, range x{ratios[0]:.3f} to x{ratios[-1]:.3f}")
    print(f"{total} GPU rows compared; {flagged} beyond {100 * args.bound:.0f}% and beyond their rounds' spread")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
