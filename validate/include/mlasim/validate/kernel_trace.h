#pragma once
// A GPU kernel trace as profilers write it, for the decode-step what-if (step_analysis.h, docs/step.md):
// torch.profiler's Chrome-trace JSON (and Perfetto's JSON export of one), or rocprofv3's kernel-trace CSV; either
// may be gzip-compressed. Only the device side is kept: each kernel (copies and fills too) with its start and end,
// and, where the trace marks decode steps (torch.profiler's ProfilerStep#N, or else a range named `decode_step`), the
// step whose host-side range launched it, and its launch grid in blocks (workgroups) where the trace records one.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim::validate {

struct TraceKernel {
  std::string name;
  double start_us = 0;
  double end_us = 0;
  long long stream = 0;
  int marked_step = -1;  // index of the marked step that launched it; -1: no marker covers its launch
  // Blocks (CUDA) or workgroups (HIP) along x, y, z: torch.profiler's args.grid, or rocprofv3's Grid_Size_* over
  // Workgroup_Size_* (it counts work-items). All 0 when the trace does not say.
  std::array<long long, 3> grid{0, 0, 0};
};

struct KernelTrace {
  std::string origin;                // the file, for messages
  std::string format;                // "chrome-trace" or "rocprof"
  std::vector<TraceKernel> kernels;  // sorted by start
  int marked_steps = 0;              // step markers found (0: the trace marks none)
};

// Parses a trace's text (already decompressed), detecting the format: JSON with traceEvents, or a CSV header with
// Kernel_Name, Start_Timestamp and End_Timestamp. Throws InputError("trace", "<origin>: ...") naming the field and
// event or line for anything malformed, and for a trace without a single kernel.
KernelTrace parse_kernel_trace(std::string_view text, const std::string& origin);

// Reads `path` (gzip-compressed when it starts with gzip's magic bytes) and parses it.
KernelTrace read_kernel_trace(const std::string& path);

}  // namespace mlasim::validate
