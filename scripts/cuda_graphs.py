"""CUDA-graph capture and profiled replays, shared by the GPU probes and the step validation (docs/step.md §4, §6).

A measured variant is a body of kernels captured once in a CUDA graph, as a serving engine replays its decode step.
Variants measured side by side are replayed in rotation, one further along the list each cycle, so that drift of
clocks and temperature spreads over all of them and no variant always follows the same one; every replay sits in a
torch.profiler range named after it, and the kernels of a replay are the trace's kernels inside its range.
"""
import bisect
import json
import os

import torch


def capture(body, warmup=2, replays=1):
    """`body` captured in a CUDA graph after `warmup` calls off the capture stream (Triton compiles and cuBLAS picks
    its kernels there, not inside the capture), then replayed `replays` times."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    for _ in range(replays):
        graph.replay()
    torch.cuda.synchronize()
    return graph


def replay_us(graph):
    """One replay of `graph`, waited for, timed by CUDA events around it (us). Whatever the stream holds before it
    keeps the GPU busy while the host launches the replay."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    graph.replay()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1000


def rotation(names, cycle):
    """The order of cycle `cycle`: the list started one further along each cycle."""
    k = cycle % len(names)
    return names[k:] + names[:k]


def profile_rotating(graphs, cycles, label, path):
    """Replays every graph of `graphs` (name -> CUDAGraph) once per cycle in rotation, each replay in a profiler range
    `label(name)` and waited for before the next (one step at a time, as a server waits for its sampled tokens).
    Returns the Chrome trace (a dict); `path` is where the profiler writes it meanwhile (removed after)."""
    names = list(graphs)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for c in range(cycles):
            for n in rotation(names, c):
                with torch.profiler.record_function(label(n)):
                    graphs[n].replay()
                    torch.cuda.synchronize()
    prof.export_chrome_trace(path)
    with open(path) as fh:
        trace = json.load(fh)
    os.remove(path)
    return trace


class Ranges:
    """The profiler ranges of a trace whose names start with `prefix`: which one an event falls in."""

    def __init__(self, events, prefix):
        self.spans = sorted((e["ts"], e["ts"] + e["dur"], e["name"][len(prefix):]) for e in events
                            if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                            and e.get("name", "").startswith(prefix))
        self.starts = [s[0] for s in self.spans]

    def index(self, ts):
        """The index of the range that holds time `ts`, or -1."""
        i = bisect.bisect_right(self.starts, ts) - 1
        return i if i >= 0 and ts <= self.spans[i][1] else -1

    def name(self, i):
        return self.spans[i][2]

    def counts(self):
        """Ranges per name."""
        out = {}
        for _, _, n in self.spans:
            out[n] = out.get(n, 0) + 1
        return out
