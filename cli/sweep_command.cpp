// mlasim sweep: predictions over batch x context x clusters x GPU for several policies, on all cores.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <memory>

#include "commands.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/sim/report.h"
#include "mlasim/sim/sweep.h"
#include "output.h"
#include "progress_bar.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct SweepOptions {
  WorkloadOptions shape;  // only the shape flags are registered
  std::string gpus = "mi355x";
  std::string batches;
  std::string contexts;
  std::string clusters = "0";
  std::vector<std::string> policies;
  std::string out;
  std::string format = "csv";
  bool quiet = false;
};

void run_sweep_command(const SweepOptions& o) {
  const auto writer = sim::make_report_writer(o.format);
  if (o.out.empty()) throw InputError("out", "needs a file to write the sweep to");
  sim::SweepGrid grid;
  for (const std::string& name : parse_name_list(o.gpus, "gpu")) grid.gpus.push_back(load_gpu(name));
  grid.batches = parse_int_list(o.batches, "batch");
  grid.contexts = parse_int_list(o.contexts, "context");
  grid.clusters = parse_int_list(o.clusters, "clusters", 0);
  grid.policies = o.policies;
  // The shape flags go through the same checks as every other command's workload.
  if (o.shape.gives_topk_lens())
    throw InputError("topk-lens", "names one batch's requests; a sweep varies the batch, give --topk instead");
  sim::Workload shape = o.shape.workload(std::nullopt);
  // One request long enough for its query tokens: the shape's qlen, dtypes and heads, not a batch of the grid.
  shape.batch = sim::BatchSpec::uniform(1, std::max(1, shape.qlen));
  const DecodeBatch one = shape.make_batch();
  grid.shape = one;
  grid.qo_len = one.qo_lens.front();
  sim::validate_sweep(grid);
  check_writable(o.out);

  ProgressBar bar(!o.quiet);
  const auto start = std::chrono::steady_clock::now();
  const sim::SweepResult r = sim::run_sweep(grid, [&bar](size_t done, size_t total) { bar.update(done, total); });
  bar.finish(r.points.size(), r.points.size());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  write_file_atomically(o.out, writer->table(sim::report_rows(grid, r)));
  if (!o.quiet)
    std::fprintf(stderr, "%zu predictions in %.3f s (%.0f per second) -> %s\n", r.points.size(), seconds,
                 static_cast<double>(r.points.size()) / std::max(seconds, 1e-9), o.out.c_str());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "predict every batch x context x clusters x GPU configuration under each policy (all cores)");
  cmd->add_option("--batch", opts->batches, "requests per batch, comma list, e.g. 1,4,16,64")->required();
  cmd->add_option("--context", opts->contexts, "KV tokens per request, comma list")->required();
  cmd->add_option("--clusters", opts->clusters, "clusters available, comma list (0 = every CU)")->capture_default_str();
  cmd->add_option("--gpu", opts->gpus, "GPU profiles, comma list")->capture_default_str();
  cmd->add_option("--policy", opts->policies, "policy spec; repeat for several")->required();
  opts->shape.add_shape_to(*cmd);
  cmd->add_option("--out", opts->out, "output file (written whole, or not at all)")->required();
  cmd->add_option("--format", opts->format, "csv, json or text")->capture_default_str();
  cmd->add_flag("--quiet", opts->quiet, "no progress bar or summary on stderr");
  cmd->callback([opts] { run_sweep_command(*opts); });
}

}  // namespace mlasim::cli
