#!/usr/bin/env python3
"""A hypothesis for the neighbours probe (docs/step.md §4), stated before the order probe ran
(data/measurements/h100/l2_order/PREDICTIONS.txt): the L2 as an LRU list of clean and dirty lines; the attention
evicts the oldest first at the rate it streams its KV, while the L2 writes dirty lines back in the background,
oldest first, at `c` MB/us; each dirty MB the attention evicts before it is written back costs `k` us; at most
`cap` MB stay dirty. Fitted to the neighbours probe's fills before the unsplit 16 x 4096 attention (H100).

  scripts/l2_order_model.py data/measurements/h100/l2_neighbours/run1/l2_carry.csv run2/l2_carry.csv [ORDER_CSV ...]

prints the fit, then the model and the measurement for every producer of the attention in the files given.
"""
import sys

from l2_neighbours_table import load as probe_times

L2_MB = 52.4  # the H100's L2
STREAM_MB_PER_US = 75.5 / 133.8  # the KV the unsplit 16 x 4096 attention streams, over its time
CELL_MB = 0.05


def lru_after(producer, cap):
    """The L2 after `producer` as (MB, dirty) segments, oldest first: clean lines of the attention before it, then
    what each op of the producer touched (a fill writes, a read reads, a copy interleaves both)."""
    segs = [[L2_MB, False]]
    for part in producer.split("+"):
        if part == "none":
            continue
        kind, mb = part.split(":")
        mb = float(mb)
        if kind == "fill":
            segs.append([mb, True])
        elif kind == "read":
            segs.append([mb, False])
        elif kind == "copy":
            for _ in range(50):
                segs += [[mb / 50, False], [mb / 50, True]]
        else:
            raise ValueError(part)
    drop = sum(m for m, _ in segs) - L2_MB  # only the newest L2_MB stay
    while drop > 1e-9:
        if segs[0][0] <= drop:
            drop -= segs.pop(0)[0]
        else:
            segs[0][0] -= drop
            drop = 0
    extra = sum(m for m, dirty in segs if dirty) - cap  # past the cap, the oldest dirty lines were written back
    for s in segs:
        if extra <= 0:
            break
        if s[1]:
            take = min(s[0], extra)
            extra -= take
            if take == s[0]:
                s[1] = False
            else:
                s[0] -= take
                segs.insert(segs.index(s), [take, False])
    return segs


def cost(producer, c, k, cap):
    """The attention's extra time after `producer` (us): k per dirty MB it evicts before the background write-back
    (c MB per us, oldest dirty first, from the attention's start) reaches it."""
    cells = []
    for mb, dirty in lru_after(producer, cap):
        cells += [dirty] * max(1, round(mb / CELL_MB))
    dirty_cells = [j for j, d in enumerate(cells) if d]
    next_clean, budget, hit = 0, 0.0, 0.0
    for i in range(len(cells)):  # the attention evicts cell i
        budget += c * CELL_MB / STREAM_MB_PER_US
        while budget >= CELL_MB and next_clean < len(dirty_cells):
            if dirty_cells[next_clean] > i:
                cells[dirty_cells[next_clean]] = False
                budget -= CELL_MB
            next_clean += 1
        if cells[i]:
            hit += CELL_MB
    return k * hit


def rows(paths):
    """Producer -> the unsplit 16 x 4096 attention's time after it (us), the mean over the files."""
    return {p: us for (p, f), us in probe_times(paths).items() if f == "attn:16:4096:aiter-v1"}


def fit(d):
    base = d["none"]
    fills = [p for p in d if p.startswith("fill:") and "+" not in p and float(p[5:]) >= 4]
    best = None
    for c in [x / 100 for x in range(10, 80, 3)]:
        for cap in (22, 24, 26, 28, 30, 34, 40, 52):
            hits = [cost(p, c, 1.0, cap) for p in fills]
            y = [d[p] - base for p in fills]
            sxx = sum(h * h for h in hits)
            k = sum(h * v for h, v in zip(hits, y)) / sxx if sxx else 0
            err = sum((k * h - v) ** 2 for h, v in zip(hits, y))
            if best is None or err < best[0]:
                best = (err, c, cap, k, len(fills))
    return best


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().split("\n\n")[1].strip())
    fit_rows = rows(sys.argv[1:3])
    err, c, cap, k, n = fit(fit_rows)
    print(f"fit on {n} fills: c {c} MB/us, cap {cap} MB, k {k:.4f} us/MB, rms {(err / n) ** .5:.3f} us")
    for path in [sys.argv[1:3]] + [[p] for p in sys.argv[3:]]:
        d = rows(path)
        print(path)
        for p in d:
            if p != "none" and all(part.split(":")[0] in ("fill", "read", "copy") for part in p.split("+")):
                print(f"  {p:28s} measured {d[p] - d['none']:+.2f}  model {cost(p, c, k, cap):+.2f}")


if __name__ == "__main__":
    main()
