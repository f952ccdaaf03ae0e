#include "mlasim/validate/step_batches.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_file.h"
#include "mlasim/validate/step_analysis.h"

namespace mlasim::validate {
namespace {

constexpr int kMaxTokens = 1 << 30;  // per request; DecodeBatch::validate bounds the batch's total

DecodeBatch step_batch(const nlohmann::json& j, const std::string& where, const DecodeBatch& flags) {
  if (!j.is_object()) throw InputError(where, "must be an object {kv_lens: [...]} or {requests, context}");
  const JsonFields f(j, where, {"kv_lens", "qo_lens", "requests", "context"}, "step-batches entry");
  DecodeBatch b = flags;
  const auto max_requests = static_cast<size_t>(kMaxStepBatch);
  if (f.has("kv_lens")) {
    if (f.has("requests") || f.has("context"))
      throw InputError(where, "give kv_lens, or requests and context, not both");
    b.kv_lens = f.integers("kv_lens", 1, kMaxTokens, max_requests);
  } else if (f.has("requests") || f.has("context")) {
    const int requests = f.integer("requests", 0, 1, static_cast<int>(kMaxStepBatch));
    const int context = f.integer("context", 0, 1, kMaxTokens);
    if (requests == 0 || context == 0) throw InputError(where, "requests and context go together");
    b.kv_lens.assign(static_cast<size_t>(requests), context);
  } else {
    throw InputError(where, "needs kv_lens, or requests and context");
  }
  if (f.has("qo_lens")) {
    b.qo_lens = f.integers("qo_lens", 1, kMaxTokens, max_requests);
  } else {
    const int qlen = flags.uniform_qo_len();
    if (qlen < 1) throw InputError(f.name("qo_lens"), "is needed: the flags' query tokens differ per request");
    b.qo_lens.assign(b.kv_lens.size(), qlen);
  }
  try {
    b.validate();
  } catch (const InputError& e) {
    // DecodeBatch names a query length "qo_len"; here it is an entry's list.
    throw InputError(where + "." + (e.field() == "qo_len" ? std::string("qo_lens") : e.field()), e.message());
  }
  return b;
}

// The requests an entry asks for, as far as its JSON says (0 where it does not: its parse names the fault).
long long requests_asked(const nlohmann::json& entry) {
  if (!entry.is_object()) return 0;
  if (const auto kv = entry.find("kv_lens"); kv != entry.end() && kv->is_array())
    return static_cast<long long>(kv->size());
  if (const auto r = entry.find("requests"); r != entry.end() && r->is_number_integer())
    return std::max<long long>(0, r->get<long long>());
  return 0;
}

StepBatches step_batches_of(const nlohmann::json& j, const std::string& origin, const DecodeBatch& flags,
                            int trace_steps) {
  const JsonFields top(j, "", {"description", "steps"}, "step-batches");
  StepBatches out;
  out.origin = origin;
  out.description = top.text("description", "");
  const nlohmann::json& steps = top.at("steps");
  if (!steps.is_array() || steps.empty())
    throw InputError("steps", "must be a non-empty list, one batch per step of the trace");
  // Before an entry is expanded: the trace's count of steps, and what all of them ask for.
  if (const std::string why = trace_steps > 0 ? entries_per_step_mismatch(steps.size(), trace_steps) : ""; !why.empty())
    throw InputError("steps", why);
  long long requests = 0;  // stops past the limit: no sum can overflow
  for (size_t i = 0; i < steps.size() && requests <= kMaxStepBatchesRequests; ++i)
    requests += std::min(requests_asked(steps[i]), kMaxStepBatchesRequests + 1);
  if (requests > kMaxStepBatchesRequests)
    throw InputError("steps", fmt::format("ask for more than {} requests over the file", kMaxStepBatchesRequests));
  out.steps.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i)
    out.steps.push_back(step_batch(steps[i], "steps[" + std::to_string(i) + "]", flags));
  return out;
}

}  // namespace

std::string entries_per_step_mismatch(size_t entries, int trace_steps) {
  if (entries == static_cast<size_t>(trace_steps)) return "";
  return fmt::format(
      "{} entries, where the trace has {} step{} (one entry per step, in order, the skipped ones "
      "included)",
      entries, trace_steps, trace_steps == 1 ? "" : "s");
}

std::vector<int> first_equal_entries(const StepBatches& batches) {
  std::map<std::pair<std::vector<int>, std::vector<int>>, int> first;
  std::vector<int> out;
  out.reserve(batches.steps.size());
  for (size_t i = 0; i < batches.steps.size(); ++i) {
    const DecodeBatch& b = batches.steps[i];
    out.push_back(first.emplace(std::pair{b.kv_lens, b.qo_lens}, static_cast<int>(i)).first->second);
  }
  return out;
}

StepBatches step_batches_from_json(const std::string& text, const std::string& origin, const DecodeBatch& flags,
                                   int trace_steps) {
  if (flags.is_sparse() || !flags.merge_token.empty())
    throw InputError("step-batches", origin +
                                         ": is for dense batches; a sparse or two-scope batch takes its rows per "
                                         "request from the flags");
  const nlohmann::json j = parse_json_text(text, origin, "step-batches");
  if (!j.is_object()) throw InputError("step-batches", origin + ": must be an object {description, steps: [...]}");
  return parse_file_json(j, origin, "step-batches",
                         [&](const nlohmann::json& top) { return step_batches_of(top, origin, flags, trace_steps); });
}

StepBatches load_step_batches(const std::string& path, const DecodeBatch& flags, int trace_steps) {
  return step_batches_from_json(read_text_file(path, "step-batches"), path, flags, trace_steps);
}

}  // namespace mlasim::validate
