#!/usr/bin/env python3
"""The SM clock each work ran at, from measured timelines whose kernels counted their SM's own cycles (the
`sm_cycles` argument of a work event, docs/validation.md §7.5): cycles over the work's duration on the global
clock. A power limit that acts within a kernel shows as a lower clock where more SMs compute at once.

  scripts/sm_clock_table.py TIMELINE_DIR_OR_FILE... [--by-timeline]

Prints the works' clock by how many SMs ran stage-1 works beside them (the mean over the work's duration), and
with --by-timeline each timeline's first wave (works that start within 2 us of the kernel's first) against the
works that start later. A timeline without cycles is named and skipped; none with cycles exits 2.
"""
import glob
import gzip
import json
import os
import statistics
import sys


def fail(message):
    print(f"sm_clock_table: {message}", file=sys.stderr)
    sys.exit(2)


def timeline_files(args):
    files = []
    for a in args:
        if os.path.isdir(a):
            files += sorted(glob.glob(os.path.join(a, "*.json.gz")) + glob.glob(os.path.join(a, "*.json")))
        elif os.path.isfile(a):
            files.append(a)
        else:
            fail(f"timeline: no file or folder {a}")
    if not files:
        fail("timeline: no timeline file (*.json or *.json.gz) in " + " ".join(args))
    return files


def load(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"timeline: {path}: not a readable timeline ({e})")


def works_of(trace):
    """(begin_us, end_us, sm, cycles) of each stage-1 workgroup that counted cycles."""
    out = []
    for e in trace.get("traceEvents", []):
        if e.get("cat") != "work":
            continue
        cycles = e.get("args", {}).get("sm_cycles", 0)
        if cycles and e.get("dur", 0) > 0:
            out.append((e["ts"], e["ts"] + e["dur"], e.get("tid"), cycles))
    return out


def busy_beside(works):
    """Per work, the mean number of SMs running a stage-1 work over its duration (itself included)."""
    edges = sorted({t for b, e, _, _ in works for t in (b, e)})
    # SMs busy in each interval between consecutive edges.
    busy = []
    for lo, hi in zip(edges, edges[1:]):
        mid = 0.5 * (lo + hi)
        busy.append(sum(1 for b, e, _, _ in works if b <= mid < e))
    out = []
    for b, e, _, _ in works:
        total = 0.0
        for (lo, hi), n in zip(zip(edges, edges[1:]), busy):
            if hi <= b or lo >= e:
                continue
            total += (min(hi, e) - max(lo, b)) * n
        out.append(total / (e - b))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    for f in flags:
        if f not in ("--by-timeline",):
            fail(f"{f}: unknown flag (allowed: --by-timeline)")
    if not args:
        fail("timeline: give one or more timeline files or folders")
    bins = {}
    rows = []
    skipped = 0
    for path in timeline_files(args):
        trace = load(path)
        works = works_of(trace)
        if not works:
            skipped += 1
            continue
        facts = trace.get("otherData", {}).get("mlasim", {})
        w = facts.get("workload", {})
        name = f"{w.get('batch', {}).get('count', '?')}x{w.get('batch', {}).get('context', '?')} " \
               f"h{w.get('heads', '?')} {facts.get('policy', '?')}"
        mhz = [c / (e - b) for b, e, _, c in works]
        for n, f in zip(busy_beside(works), mhz):
            key = min(int(n // 16) * 16, 128)
            bins.setdefault(key, []).append(f)
        start = min(b for b, _, _, _ in works)
        first = [f for (b, _, _, _), f in zip(works, mhz) if b - start < 2.0]
        later = [f for (b, _, _, _), f in zip(works, mhz) if b - start >= 2.0]
        rows.append((name, len(works), statistics.median(first), statistics.median(later) if later else None,
                     len(later)))
    if not rows:
        fail("timeline: no work event carries sm_cycles (recorded before the kernels counted their SM's cycles)")
    if skipped:
        print(f"{skipped} timelines without sm_cycles skipped")
    print("| SMs running stage-1 works beside it (mean over the work) | works | median clock (MHz) | p10 | p90 |")
    print("|---|---|---|---|---|")
    for key in sorted(bins):
        v = sorted(bins[key])
        p10 = v[int(0.1 * (len(v) - 1))]
        p90 = v[int(0.9 * (len(v) - 1))]
        label = f"{key}+" if key == 128 else f"{key} to {key + 15}"
        print(f"| {label} | {len(v)} | {statistics.median(v):.0f} | {p10:.0f} | {p90:.0f} |")
    if "--by-timeline" in flags:
        print("\n| timeline | workgroups | first wave: median clock (MHz) | later works: median clock (MHz), count |")
        print("|---|---|---|---|")
        for name, n, first, later, n_later in rows:
            later_text = f"{later:.0f} ({n_later})" if later is not None else "none"
            print(f"| {name} | {n} | {first:.0f} | {later_text} |")


if __name__ == "__main__":
    main()
