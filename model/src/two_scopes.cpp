#include "mlasim/model/two_scopes.h"

#include <algorithm>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/input_error.h"

namespace mlasim {

int TwoScopes::window_rows(int64_t position) const { return static_cast<int>(std::min<int64_t>(position + 1, window)); }

int TwoScopes::extra_rows(int64_t position) const {
  if (compress_ratio == 0) return 0;
  // Compressed rows committed so far: one per full group of compress_ratio tokens up to and including this one.
  const int64_t committed = (position + 1) / compress_ratio;
  return static_cast<int>(extra_topk > 0 ? std::min<int64_t>(committed, extra_topk) : committed);
}

void TwoScopes::validate() const {
  if (window < 0 || window > kMaxWindow)
    throw InputError("window", "must be 0 (no two scopes) or 1.." + std::to_string(kMaxWindow) +
                                   " rows of the sliding window, got " + std::to_string(window));
  if (compress_ratio != 0 && (compress_ratio < 2 || compress_ratio > kMaxCompressRatio))
    throw InputError("compress_ratio", "must be 0 (no compressed scope) or 2.." + std::to_string(kMaxCompressRatio) +
                                           " tokens per compressed row, got " + std::to_string(compress_ratio));
  if (extra_topk < 0 || extra_topk > DecodeBatch::kMaxTopk)
    throw InputError("extra_topk", "must be 0 (every compressed row) or 1.." + std::to_string(DecodeBatch::kMaxTopk) +
                                       ", got " + std::to_string(extra_topk));
  if (!on() && (compress_ratio != 0 || extra_topk != 0 || run != Run::one_pass))
    throw InputError("window", "compress_ratio, extra_topk and the scope run need the sliding window (window >= 1)");
  if (compress_ratio == 0 && extra_topk != 0)
    throw InputError("extra_topk", "selects compressed rows: it needs a compress_ratio, got " +
                                       std::to_string(extra_topk) + " with none");
}

TwoScopes TwoScopes::preset(std::string_view layer) {
  if (layer == "csa") return {128, 4, 1024, Run::one_pass};
  if (layer == "hca") return {128, 128, 0, Run::one_pass};
  if (layer == "swa") return {128, 0, 0, Run::one_pass};
  throw InputError("dsv4", "must be csa, hca or swa (DeepSeek-V4's layer kinds), got '" + std::string(layer) + "'");
}

std::string_view scope_run_name(TwoScopes::Run run) { return run == TwoScopes::Run::merged ? "merged" : "one-pass"; }

TwoScopes::Run parse_scope_run(std::string_view text, const std::string& field) {
  if (text == "one-pass") return TwoScopes::Run::one_pass;
  if (text == "merged") return TwoScopes::Run::merged;
  throw InputError(field, "must be one-pass or merged, got '" + std::string(text) + "'");
}

std::string describe_scopes(const TwoScopes& s) {
  std::string out = "window " + std::to_string(s.window);
  if (s.compress_ratio > 0)
    out += " + compressed 1/" + std::to_string(s.compress_ratio) +
           (s.extra_topk > 0 ? " (top " + std::to_string(s.extra_topk) + ")" : " (all)");
  return out + (s.run == TwoScopes::Run::merged ? ", merged" : ", one pass");
}

}  // namespace mlasim
