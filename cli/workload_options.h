#pragma once
// The workload flags every command shares (--gpu, --batch/--context or --kv-lens, heads, dtypes, ...).
#include <CLI/CLI.hpp>
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"

namespace mlasim::cli {

struct WorkloadOptions {
  std::string gpu = "mi355x";
  int batch = 4;
  int context = 100000;
  std::string kv_lens;  // comma list; overrides --batch/--context
  std::string qo_lens;  // comma list; overrides --qo-len
  int qo_len = 1;
  int heads = 16;
  int kv_heads = 1;
  std::string q_dtype = "fp8";
  std::string kv_dtype = "fp8";
  int page_size = 1;
  int kv_granularity = 0;  // 0: max(page_size, 16), as vLLM and ATOM pass it
  bool causal = true;
  int clusters = 0;        // 0: every CU of the GPU

  void add_to(CLI::App& app);
  // Only the shape flags (qo-len, heads, dtypes, page size, granularity, causal): for commands that take the
  // batch, context, GPU and clusters as lists of their own (sweep).
  void add_shape_to(CLI::App& app);
  DecodeBatch make_batch() const;
  Gpu load() const;
};

// Parses "1,2,3" into positive integers; throws InputError naming `field`.
std::vector<int> parse_int_list(const std::string& text, const std::string& field, int min_value = 1);

}  // namespace mlasim::cli
