#include "workload_options.h"

#include <charconv>

#include "mlasim/model/input_error.h"

namespace mlasim::cli {

std::vector<int> parse_int_list(const std::string& text, const std::string& field, int min_value) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    int v = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < min_value)
      throw InputError(field, "must be a comma list of integers >= " + std::to_string(min_value) + ", got '" +
                                  item + "' in '" + text + "'");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

void WorkloadOptions::add_to(CLI::App& app) {
  app.add_option("--gpu", gpu, "GPU profile name (mi355x, mi350x, mi325x, mi300x, mi308x, h100, h200) or FILE.json")
      ->capture_default_str();
  app.add_option("--batch", batch, "requests in the batch (with --context)")->capture_default_str();
  app.add_option("--context", context, "KV tokens per request (with --batch)")->capture_default_str();
  app.add_option("--kv-lens", kv_lens, "KV tokens per request, comma list (overrides --batch/--context)");
  app.add_option("--qo-lens", qo_lens, "query tokens per request, comma list (non-uniform MTP)");
  app.add_option("--clusters", clusters, "clusters (CUs) available to the plan (default: all)");
  add_shape_to(app);
}

void WorkloadOptions::add_shape_to(CLI::App& app) {
  app.add_option("--qo-len", qo_len, "query tokens per request (1 = plain decode, >1 = MTP)")->capture_default_str();
  app.add_option("--heads", heads, "q heads")->capture_default_str();
  app.add_option("--kv-heads", kv_heads, "kv heads (MLA: 1)")->capture_default_str();
  app.add_option("--q-dtype", q_dtype, "fp8 or bf16")->capture_default_str();
  app.add_option("--kv-dtype", kv_dtype, "fp8 or bf16")->capture_default_str();
  app.add_option("--page-size", page_size, "tokens per KV page (power of two)")->capture_default_str();
  app.add_option("--kv-granularity", kv_granularity, "planner granule in pages (power of two; default max(page size, 16))");
  app.add_flag("--causal,!--no-causal", causal, "causal masking for qlen > 1 (default on)");
}

DecodeBatch WorkloadOptions::make_batch() const {
  DecodeBatch b;
  if (!kv_lens.empty()) {
    b.kv_lens = parse_int_list(kv_lens, "kv-lens");
  } else {
    if (batch < 1) throw InputError("batch", "must be >= 1, got " + std::to_string(batch));
    if (context < 1) throw InputError("context", "must be >= 1 token, got " + std::to_string(context));
    b.kv_lens.assign(static_cast<size_t>(batch), context);
  }
  if (!qo_lens.empty()) {
    b.qo_lens = parse_int_list(qo_lens, "qo-lens");
    if (b.qo_lens.size() != b.kv_lens.size())
      throw InputError("qo-lens", "has " + std::to_string(b.qo_lens.size()) + " entries for " +
                                      std::to_string(b.kv_lens.size()) + " requests");
  } else {
    if (qo_len < 1) throw InputError("qo-len", "must be >= 1, got " + std::to_string(qo_len));
    b.qo_lens.assign(b.kv_lens.size(), qo_len);
  }
  b.q_heads = heads;
  b.kv_heads = kv_heads;
  b.q_dtype = parse_dtype(q_dtype, "q-dtype");
  b.kv_dtype = parse_dtype(kv_dtype, "kv-dtype");
  b.page_size = page_size;
  b.kv_granularity = kv_granularity > 0 ? kv_granularity : std::max(page_size, 16);
  if (kv_granularity < 0)
    throw InputError("kv-granularity", "must be a power of two, got " + std::to_string(kv_granularity));
  b.causal = causal;
  b.validate();
  return b;
}

Gpu WorkloadOptions::load() const {
  Gpu g = load_gpu(gpu);
  if (clusters < 0 || clusters > g.num_cu)
    throw InputError("clusters", "must be 1.." + std::to_string(g.num_cu) + " on " + g.name + ", got " +
                                     std::to_string(clusters));
  return g;
}

}  // namespace mlasim::cli
