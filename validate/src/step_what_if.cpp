#include "mlasim/validate/step_what_if.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <span>
#include <tuple>

#include "mlasim/model/input_error.h"
#include "mlasim/model/l2_prior_writes.h"
#include "mlasim/sim/attention_bytes.h"
#include "mlasim/sim/l2_carry.h"
#include "mlasim/sim/l2_writeback.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/sim/trace_device_time.h"
#include "mlasim/validate/step_selector.h"

namespace mlasim::validate {
namespace {

// What a fuse or remove edit changes for the kernels after it: the attention's stage 1 runs slower by what the ops
// before it wrote, and read after writing, into L2 (model/l2_prior_writes.h), where the profile has the law and the
// user gave the ops' bytes (--op-bytes); every other kernel after keeps its measured time.
constexpr const char* kOthersKept =
    "the other kernels after keep their measured times (their response to what these ops wrote and read in L2 is "
    "not modelled, docs/step.md §4)";

// What the ops before one stage 1 left in L2, or, where an op within the window before it has no bytes, that op's
// name: the law's cost of what they wrote and read (us; 0 without a law), and the MB still dirty, which the stage 1
// writes back (0 without a measured write-back).
struct PriorWrites {
  double law_us = 0;
  double dirty_mb = 0;
  std::string missing;  // the first op back from the stage 1 without bytes
  bool known() const { return missing.empty(); }
};

// The L2 terms a step's stage 1s take from the ops before them: the prior-writes law (model/l2_prior_writes.h) and
// the write-back of the dirty lines (sim/l2_writeback.h). Either may be unknown (all zero) on a profile. A step's
// stage 1 may take its class's own law in place of the GPU's (`step_law`, by the plan it runs).
struct L2Terms {
  L2PriorWrites law;
  sim::L2Writeback writeback;
  std::function<L2PriorWrites(size_t step)> step_law;
  L2PriorWrites law_of(size_t step) const { return step_law ? step_law(step) : law; }
  bool any() const { return law.known() || writeback.known(); }
  double window_mb(const L2PriorWrites& l) const { return std::max(l.known() ? l.cap_mb : 0.0, writeback.window_mb); }
};

bool is_attention(const StepKernel& k) { return k.kernel_class == "mla_stage1" || k.kernel_class == "mla_reduce"; }

// The ops before kernel `i` of a step, oldest first, back to the one that takes the traffic past `window_mb` or to
// the step's start (the step before is left out); an attention's kernel writes its outputs (or partials) as its
// works end, after their KV: in time order, its reads, then its writes. Returns the first op back without bytes
// (`ops` then incomplete), or "".
std::string ops_before(const DecodeStep& s, size_t i, double window_mb, std::vector<OpBytes>& ops) {
  ops.clear();
  double touched = 0;
  for (size_t j = i; j-- > 0 && touched <= window_mb;) {
    if (!s.kernels[j].bytes) return s.kernels[j].name;
    const OpBytes& b = *s.kernels[j].bytes;
    if (is_attention(s.kernels[j])) {
      ops.push_back({0, b.written_mb});  // pushed newest first
      ops.push_back({b.read_mb, 0});
    } else {
      ops.push_back(b);
    }
    touched += b.touched_mb();
  }
  std::reverse(ops.begin(), ops.end());
  return "";
}

// Each stage 1 of a step, in order, under `law`.
std::vector<PriorWrites> prior_writes_us(const DecodeStep& s, const L2Terms& l2, const L2PriorWrites& law) {
  std::vector<PriorWrites> out;
  std::vector<OpBytes> ops;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    if (s.kernels[i].kernel_class != "mla_stage1") continue;
    PriorWrites p;
    p.missing = ops_before(s, i, l2.window_mb(law), ops);
    if (p.known()) {
      p.law_us = l2_prior_writes_us(ops, law);
      if (l2.writeback.known()) p.dirty_mb = sim::l2_dirty_before_mb(ops, l2.writeback);
    }
    out.push_back(std::move(p));
  }
  return out;
}

// Each copy of a step (class `copy`), in order: what the ops before it wrote and read into L2 costs it under the
// copy's law for its size (model/l2_prior_writes.h; law_us), or the copy or the first op back within the law's window
// without bytes (missing).
std::vector<PriorWrites> copy_prior_writes_us(const DecodeStep& s, const CostParams& params) {
  std::vector<PriorWrites> out;
  std::vector<OpBytes> ops;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const StepKernel& k = s.kernels[i];
    if (k.kernel_class != "copy") continue;
    PriorWrites p;
    if (!k.bytes) {
      p.missing = k.name;
    } else {
      const L2PriorWrites law = l2_copy_prior_writes_of(params, k.bytes->read_mb);
      p.missing = ops_before(s, i, law.cap_mb, ops);
      if (p.known()) p.law_us = l2_prior_writes_us(ops, law);
    }
    out.push_back(std::move(p));
  }
  return out;
}

// The write-back cost (us) of `dirty_mb` for the stage 1 of step `step` under the plan it runs.
using WritebackCost = std::function<double(size_t step, double dirty_mb)>;

// How an edit changed the stage 1s: the L2 terms of the ops before each (prior_writes_us) before and after it.
struct PriorWritesChange {
  int changed = 0;      // stage 1s that took the change
  int unpaired = 0;     // stage 1s of steps whose count of them the edit changed (those left keep their time)
  int unknown = 0;      // kept their time: an op before them, before or after the edit, has no bytes
  std::string missing;  // the first such op's name
  double before_us = 0, after_us = 0;  // the law's, summed over the changed ones
  double dirty_before_mb = 0, dirty_after_mb = 0, wb_before_us = 0, wb_after_us = 0;  // the write-back's
  double delta_us = 0;                                                                // as applied
};

// Each stage 1 takes `law_weight` times the law's change, plus the write-back it pays now (`pays`, of the MB dirty
// after the edit) less the one it paid (`paid`, of those before it, times `paid_scale` of its step: a policy edit's
// ratio, which scaled the measured time with the rest; none: 1). Stage 1s are paired in order within a step.
PriorWritesChange apply_prior_writes(std::vector<DecodeStep>& edited,
                                     const std::vector<std::vector<PriorWrites>>& before, const L2Terms& l2,
                                     double law_weight, const WritebackCost& paid, const WritebackCost& pays,
                                     const std::function<double(size_t step)>& paid_scale = nullptr) {
  PriorWritesChange c;
  for (size_t i = 0; i < edited.size(); ++i) {
    const std::vector<PriorWrites> after = prior_writes_us(edited[i], l2, l2.law_of(i));
    if (after.size() != before[i].size()) {
      c.unpaired += static_cast<int>(before[i].size());
      continue;
    }
    const double scale = paid_scale ? paid_scale(i) : 1.0;
    size_t k = 0;
    for (StepKernel& kernel : edited[i].kernels) {
      if (kernel.kernel_class != "mla_stage1") continue;
      const PriorWrites &b = before[i][k], &a = after[k];
      if (!b.known() || !a.known()) {
        ++c.unknown;
        if (c.missing.empty()) c.missing = b.known() ? a.missing : b.missing;
      } else {
        const double wb_b = paid(i, b.dirty_mb), wb_a = pays(i, a.dirty_mb);
        const double was = kernel.exposed_us;
        kernel.exposed_us =
            std::max(0.0, kernel.exposed_us + law_weight * a.law_us - law_weight * b.law_us + wb_a - scale * wb_b);
        ++c.changed;
        c.before_us += b.law_us;
        c.after_us += a.law_us;
        c.dirty_before_mb += b.dirty_mb;
        c.dirty_after_mb += a.dirty_mb;
        c.wb_before_us += wb_b;
        c.wb_after_us += wb_a;
        c.delta_us += kernel.exposed_us - was;
      }
      ++k;
    }
  }
  return c;
}

// How an edit changed the copies after it: the copy law (copy_prior_writes_us) before and after it, the copies
// paired in order within a step.
struct CopyChange {
  int changed = 0;   // copies that took the change
  int unpaired = 0;  // copies of steps whose count of them the edit changed (a removal: those left keep their time)
  int unknown = 0;   // kept their time: the copy or an op before it has no bytes
  std::string missing;
  double before_us = 0, after_us = 0, delta_us = 0;
};

CopyChange apply_copy_prior_writes(std::vector<DecodeStep>& edited, const std::vector<std::vector<PriorWrites>>& before,
                                   const CostParams& params) {
  CopyChange c;
  for (size_t i = 0; i < edited.size(); ++i) {
    const std::vector<PriorWrites> after = copy_prior_writes_us(edited[i], params);
    if (after.size() != before[i].size()) {
      c.unpaired += static_cast<int>(before[i].size());
      continue;
    }
    size_t k = 0;
    for (StepKernel& kernel : edited[i].kernels) {
      if (kernel.kernel_class != "copy") continue;
      const PriorWrites &b = before[i][k], &a = after[k];
      ++k;
      if (!b.known() || !a.known()) {
        ++c.unknown;
        if (c.missing.empty()) c.missing = b.known() ? a.missing : b.missing;
        continue;
      }
      const double was = kernel.exposed_us;
      kernel.exposed_us = std::max(0.0, kernel.exposed_us + a.law_us - b.law_us);
      ++c.changed;
      c.before_us += b.law_us;
      c.after_us += a.law_us;
      c.delta_us += kernel.exposed_us - was;
    }
  }
  return c;
}

constexpr const char* kForms =
    "policy=SPEC, fuse=SEL[+SEL...][:us=T|:bytes=B[:written=W]], remove=SEL[+SEL...], gaps=T or metadata=IMPL";

[[noreturn]] void bad_edit(const std::string& text, const std::string& why) {
  throw InputError("edit", "'" + text + "': " + why + " (forms: " + kForms + "; SEL: a step class or re:REGEX)");
}

// The largest time (us) or byte count an edit takes: the bound a trace's own durations have (kernel_trace.h), so
// every edited step stays finite.
constexpr double kMaxEditValue = 1e12;

double positive_number(const std::string& text, const std::string& value, const char* what, bool allow_zero) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(v) || v < 0 || (!allow_zero && v == 0) || v > kMaxEditValue)
    bad_edit(text, std::string(what) + " must be a number " + (allow_zero ? ">= 0" : "> 0") +
                       " and at most 1e12, got '" + value + "'");
  return v;
}

std::vector<std::string> parse_selectors(const std::string& text, const std::string& list) {
  if (list.empty()) bad_edit(text, "names no kernels");
  const auto checked = [&](const std::string& selector) {
    const std::string field = selector.rfind("re:", 0) == 0 ? "re:" : "SEL";
    try {
      return check_step_selector(selector, field);
    } catch (const InputError& e) {
      bad_edit(text, field + " " + e.message());
    }
  };
  if (list.rfind("re:", 0) == 0) return {checked(list)};  // a regex stands alone: '+' is part of it
  std::vector<std::string> out;
  for (size_t begin = 0;;) {
    const size_t plus = list.find('+', begin);
    const std::string sel = list.substr(begin, plus == std::string::npos ? std::string::npos : plus - begin);
    if (sel.rfind("re:", 0) == 0) bad_edit(text, "a re:REGEX selector stands alone, not in a list of classes");
    out.push_back(checked(sel));
    if (plus == std::string::npos) return out;
    begin = plus + 1;
  }
}

// A kernel an edit puts in the step (a predicted reduce, a metadata build), with its bytes where the user's file
// names it.
StepKernel new_kernel(std::string name, std::string kernel_class, double us, double gap, const OpBytesRules* ops,
                      int requests) {
  StepKernel k{std::move(name), std::move(kernel_class), us, gap, std::nullopt};
  if (ops) k.bytes = ops->of(k, requests);
  return k;
}

double median_gap(const DecodeStep& s) {
  std::vector<double> gaps;
  for (size_t i = 1; i < s.kernels.size(); ++i) gaps.push_back(s.kernels[i].gap_us);
  if (gaps.empty()) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return gaps[gaps.size() / 2];
}

// The same plan twice, as a policy edit to another spec of the plan that ran gives it (kernel_us stands in for what
// the plan's fields compared here leave out).
bool same_plan(const sim::Evaluation& a, const sim::Evaluation& b) {
  const sim::Plan &p = *a.plan, &q = *b.plan;
  return p.kernel == q.kernel && p.cu_limit == q.cu_limit && p.works == q.works && p.work_indptr == q.work_indptr &&
         p.reduce_indptr == q.reduce_indptr && p.reduce_partial_map == q.reduce_partial_map &&
         a.prediction->metrics.kernel_us == b.prediction->metrics.kernel_us;
}

struct PolicyChange {
  sim::Metrics ran, next;
  // Each plan's kernels as a trace times them: kernel_us less what the campaigns' event timing adds
  // (sim/trace_device_time.h), since the trace's kernels are scaled by their ratio.
  double ran_us = 0, next_us = 0;
  sim::L2Dirty dirty_ran, dirty_next;  // what each plan leaves dirty in L2 (all zero: no carry-over measured)
  double carry_us = 0;                 // the next kernel's extra time under the new plan over the one that ran
  bool same = false;                   // the two are one plan (same_plan)
  // The share of the ratio's carry of the measured attention's excess over ran_us (the ran plan's class's
  // policy_offset_carry): 1, the measured attention times the ratio; 0, next_us.
  double offset_carry = 1;
  double ratio() const { return next_us / ran_us; }
  // A layer's new attention from its measured one: next_us plus offset_carry of the ratio's share of the excess,
  // (1 - k) next_us + k r measured.
  double attention(double measured_us) const {
    return (1 - offset_carry) * next_us + offset_carry * ratio() * measured_us;
  }
};

double device_us(const sim::Evaluation& e, const sim::WorkloadContext& ctx) {
  return sim::trace_device_us(e.prediction->metrics, ctx.params,
                              sim::plan_kernels(*e.plan, sim::kernel_batch(*e.plan, ctx.batch)));
}

PolicyChange policy_change(const sim::Evaluation& ran, const sim::Evaluation& next, const sim::WorkloadContext& ctx,
                           const sim::L2Carry& carry) {
  PolicyChange c{ran.prediction->metrics,
                 next.prediction->metrics,
                 device_us(ran, ctx),
                 device_us(next, ctx),
                 sim::l2_dirty(*ran.plan, ran.prediction->timeline, ctx.batch, carry),
                 sim::l2_dirty(*next.plan, next.prediction->timeline, ctx.batch, carry),
                 0.0};
  c.carry_us = sim::l2_carry_us(c.dirty_next, carry) - sim::l2_carry_us(c.dirty_ran, carry);
  c.same = same_plan(ran, next);
  if (const auto cls = parse_kernel_class(c.ran.kernel_class))
    c.offset_carry = ctx.params.resolved(*cls).policy_offset_carry;
  return c;
}

// Each layer's stage 1 and the reduce that follows it (before the next stage 1), scaled by the model's ratio (the
// part beyond the plan's predicted time in the share PolicyChange::offset_carry, the rest as predicted). The
// kernels between the two keep their places; a reduce the new plan does not need goes, with its launch gap; one it
// newly needs follows stage 1 after the step's median launch gap. The first kernel after each layer's attention
// takes the change of the L2 carry-over (sim/l2_carry.h): the dirty bytes it writes back, more of them after a
// plan with more partials. Returns the layers; `followers` counts the kernels that took the carry-over.
int apply_policy(DecodeStep& s, const PolicyChange& c, int& followers, const OpBytesRules* ops, int requests) {
  const bool next_reduces = c.next.num_partials > 0;
  const double stage1_share = c.next_us > 0 ? std::min(1.0, c.next.stage1_us / c.next_us) : 1.0;
  const double launch_gap = median_gap(s);
  std::vector<StepKernel> out;
  int layers = 0;
  bool carry_pending = false;  // the last attention's carry-over waits for the next kernel
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    if (s.kernels[i].kernel_class != "mla_stage1") {
      out.push_back(s.kernels[i]);
      if (carry_pending && c.carry_us != 0 && out.back().kernel_class != "mla_reduce") {
        out.back().exposed_us = std::max(0.0, out.back().exposed_us + c.carry_us);
        ++followers;
        carry_pending = false;
      }
      continue;
    }
    ++layers;
    carry_pending = true;
    size_t reduce_at = s.kernels.size();  // none
    for (size_t j = i + 1; j < s.kernels.size() && s.kernels[j].kernel_class != "mla_stage1"; ++j)
      if (s.kernels[j].kernel_class == "mla_reduce") {
        reduce_at = j;
        break;
      }
    const bool reduced = reduce_at < s.kernels.size();
    StepKernel stage1 = s.kernels[i];
    const double attention = c.attention(stage1.exposed_us + (reduced ? s.kernels[reduce_at].exposed_us : 0.0));
    stage1.exposed_us = next_reduces ? attention * stage1_share : attention;
    out.push_back(stage1);
    if (next_reduces && !reduced)
      out.push_back(
          new_kernel("mla_reduce (predicted)", "mla_reduce", attention - stage1.exposed_us, launch_gap, ops, requests));
    if (!reduced) continue;
    for (size_t m = i + 1; m < reduce_at; ++m) out.push_back(s.kernels[m]);
    if (next_reduces) {
      StepKernel reduce = s.kernels[reduce_at];
      reduce.exposed_us = attention - stage1.exposed_us;
      out.push_back(reduce);
    }
    i = reduce_at;
  }
  s.kernels = std::move(out);
  return layers;
}

// How a run of kernels that a fuse edit joins is timed: `cost` gets the run and gives the fused kernel's time.
int fuse_runs(DecodeStep& s, const StepSelector& match, const std::function<double(std::span<const StepKernel>)>& cost,
              const std::optional<OpBytes>& fused_bytes) {
  std::vector<StepKernel> out;
  int runs = 0;
  for (size_t i = 0; i < s.kernels.size();) {
    if (!match(s.kernels[i])) {
      out.push_back(s.kernels[i++]);
      continue;
    }
    size_t j = i;
    std::string cls = s.kernels[i].kernel_class;
    while (j < s.kernels.size() && match(s.kernels[j])) ++j;
    ++runs;
    const double us = cost(std::span<const StepKernel>(s.kernels).subspan(i, j - i));
    out.push_back({fmt::format("fused({} kernels from {})", j - i, s.kernels[i].name), cls, us, s.kernels[i].gap_us,
                   fused_bytes});
    i = j;
  }
  s.kernels = std::move(out);
  return runs;
}

// The op of a fused run that moves the most bytes (where the ops' bytes are known), and its measured time over the
// stream-kernel cost of its bytes: how this stack's kernel of that work streams, which the fused kernel, doing that
// work and less of the rest, is taken to share (docs/step.md §3).
struct StreamReference {
  std::string name;
  double mb = 0;
  double ratio = 0;
};

std::optional<StreamReference> stream_reference(std::span<const StepKernel> run, const CostParams& p) {
  const StepKernel* best = nullptr;
  for (const StepKernel& k : run)
    if (k.bytes && !is_attention(k) && k.bytes->touched_mb() > 0 && k.exposed_us > 0 &&
        (!best || k.bytes->touched_mb() > best->bytes->touched_mb()))
      best = &k;
  if (!best) return std::nullopt;
  const double stream = stream_kernel_time_us(p, best->bytes->touched_mb() * 1e6, best->bytes->written_mb * 1e6);
  return StreamReference{best->name, best->bytes->touched_mb(), best->exposed_us / stream};
}

// The step's metadata kernels become one build of `us` at the first one's place (none: at the step's start, the
// kernel that was first then waiting the step's median launch gap after it).
void replace_metadata(DecodeStep& s, const std::string& name, double us, const OpBytesRules* ops, int requests) {
  const double gap = median_gap(s);
  std::vector<StepKernel> out;
  bool placed = false;
  for (const StepKernel& k : s.kernels) {
    if (k.kernel_class != "metadata") {
      out.push_back(k);
      continue;
    }
    if (!placed) out.push_back(new_kernel(name, "metadata", us, k.gap_us, ops, requests));
    placed = true;
  }
  if (!placed) {
    if (!out.empty()) out.front().gap_us = gap;
    out.insert(out.begin(), new_kernel(name, "metadata", us, 0.0, ops, requests));
  }
  s.kernels = std::move(out);
}

int remove_kernels(DecodeStep& s, const StepSelector& match) {
  const size_t before = s.kernels.size();
  std::erase_if(s.kernels, match);
  if (!s.kernels.empty()) s.kernels.front().gap_us = 0;  // a step's first kernel has no gap before it
  return static_cast<int>(before - s.kernels.size());
}

// The workload a step ran: its entry of the step batches where the user gave them (--step-batches), else the flags'
// workload, resized to the step's batch when the trace gives one (the flags' requests repeated in order, or the first
// of them). A count of tokens becomes requests over the flags' query tokens per request. A two-scope batch keeps its
// own size: its requests are scope streams of tokens, which a launch grid does not count.
class StepWorkloads {
 public:
  StepWorkloads(const sim::WorkloadContext& flags, bool counts_tokens, std::string source, const StepBatches* batches)
      : flags_(flags),
        counts_tokens_(counts_tokens),
        source_(std::move(source)),
        batches_(batches),
        entry_key_(batches ? first_equal_entries(*batches) : std::vector<int>{}) {}
  // Whether a step takes the flags' batch: neither the step batches nor the trace give it one, or a two-scope batch
  // keeps the flags'.
  bool takes_flags_batch(const DecodeStep& s) const {
    return !batches_ && (s.batch <= 0 || !flags_.batch.merge_token.empty());
  }
  // Steps of one key run one workload: the key is the step's requests, or with step batches the first entry of its
  // batch.
  int key_of(const DecodeStep& s) const { return batches_ ? entry_key_.at(entry(s)) : requests_of(s); }
  // The batch of `key` as an edit's line names it: by the first step of those edited that ran it.
  std::string batch_name(int key, int first_step) const {
    if (!batches_) return fmt::format("batch {}", key);
    const DecodeBatch& b = batches_->steps.at(static_cast<size_t>(key));
    const auto [shortest, longest] = std::minmax_element(b.kv_lens.begin(), b.kv_lens.end());
    return *shortest == *longest ? fmt::format("step {}'s batch ({} x {})", first_step, b.size(), *shortest)
                                 : fmt::format("step {}'s batch ({} requests, {} to {} KV tokens)", first_step,
                                               b.size(), *shortest, *longest);
  }
  int requests_of(const DecodeStep& s) const {
    if (batches_) return batches_->steps.at(entry(s)).size();
    const int n = flags_.batch.size();
    if (takes_flags_batch(s)) return n;
    if (!counts_tokens_) return s.batch;
    const double per_request = static_cast<double>(flags_.batch.total_qo_tokens()) / n;
    return std::max(1, static_cast<int>(std::lround(s.batch / per_request)));
  }
  const sim::WorkloadContext& of(const DecodeStep& s) {
    if (batches_) {
      const int key = key_of(s);
      auto it = resized_.find(key);
      if (it == resized_.end()) {
        sim::WorkloadContext c = flags_;
        c.batch = batches_->steps[static_cast<size_t>(key)];
        it = resized_.emplace(key, std::move(c)).first;
      }
      return it->second;
    }
    const int requests = requests_of(s);
    if (requests == flags_.batch.size()) return flags_;
    auto it = resized_.find(requests);
    if (it == resized_.end()) it = resized_.emplace(requests, resized(requests)).first;
    return it->second;
  }
  // The model's evaluation of `spec` for the step's workload; an error at a batch the trace gave names the step.
  sim::Evaluation evaluate(const std::string& spec, const DecodeStep& s, const std::string& edit) {
    try {
      return sim::evaluate(spec, of(s));
    } catch (const InputError& e) {
      if (batches_) bad_edit(edit, fmt::format("step {} at its batch in {}: {}", s.index, batches_->origin, e.what()));
      if (requests_of(s) == flags_.batch.size()) throw;
      bad_edit(edit, fmt::format("step {} at {} requests ({}): {}", s.index, requests_of(s), source_, e.what()));
    }
  }

 private:
  sim::WorkloadContext resized(int requests) const {
    sim::WorkloadContext c = flags_;
    const auto cycle = [&](std::vector<int>& v) {
      if (v.empty()) return;
      const std::vector<int> from = v;
      v.resize(static_cast<size_t>(requests));
      for (size_t i = 0; i < v.size(); ++i) v[i] = from[i % from.size()];
    };
    cycle(c.batch.qo_lens);
    cycle(c.batch.kv_lens);
    cycle(c.batch.topk_lens);
    return c;
  }
  size_t entry(const DecodeStep& s) const { return static_cast<size_t>(s.index); }  // checked against the trace
  const sim::WorkloadContext& flags_;
  bool counts_tokens_;
  std::string source_;
  const StepBatches* batches_;
  std::vector<int> entry_key_;                   // each step batch's key: the first entry of that batch
  std::map<int, sim::WorkloadContext> resized_;  // by key
};

// None where nothing will weigh them (neither L2 term measured, or no ops' bytes): weigh_prior_writes then only
// says why.
std::vector<std::vector<PriorWrites>> prior_writes_of(const std::vector<DecodeStep>& steps, const L2Terms& l2,
                                                      const WhatIfContext& context) {
  std::vector<std::vector<PriorWrites>> out;
  if (!l2.any() || !context.op_bytes) return out;
  for (size_t i = 0; i < steps.size(); ++i) out.push_back(prior_writes_us(steps[i], l2, l2.law_of(i)));
  return out;
}

// A kernel's name as an edit's line quotes it: its first 60 characters.
std::string short_name(const std::string& name) { return name.size() <= 60 ? name : name.substr(0, 57) + "..."; }

std::string gpu_name(const WhatIfContext& context) {
  return context.workload ? context.workload->gpu.name : std::string("this GPU (no profile)");
}

// Why the L2 terms weigh nothing for an edit, or "" where they do.
std::string l2_not_weighed(const L2Terms& l2, const WhatIfContext& context) {
  if (!l2.any()) return fmt::format("no L2 prior-writes law or write-back measured on {}", gpu_name(context));
  if (!context.op_bytes) return "the ops' bytes are not given (--op-bytes)";
  return "";
}

// Applies the change of what the ops before each stage 1 wrote and read into L2 (after a fuse or remove edit), and
// says what it did, or why it did nothing. `law_note`: which law it weighed (a class's own, or the GPU's where the
// step's plan splits, which that law, fitted to an unsplit plan, did not measure).
std::string weigh_prior_writes(std::vector<DecodeStep>& edited, const std::vector<std::vector<PriorWrites>>& before,
                               const std::vector<std::vector<PriorWrites>>& copies_before, const L2Terms& l2,
                               const WritebackCost& writeback, const WhatIfContext& context,
                               const std::string& law_note) {
  const std::string why_not = l2_not_weighed(l2, context);
  if (!why_not.empty() && copies_before.empty())
    return fmt::format(
        "the kernels after keep their measured times ({}; their response to what these ops wrote and read in L2 is "
        "not modelled, docs/step.md §3)",
        why_not);
  const PriorWritesChange c =
      why_not.empty() ? apply_prior_writes(edited, before, l2, 1.0, writeback, writeback) : PriorWritesChange{};
  const double steps = static_cast<double>(edited.size());
  std::vector<std::string> parts;
  if (!why_not.empty())
    parts.push_back(fmt::format("the stage-1 kernels after keep their measured times ({})", why_not));
  if (c.changed > 0) {
    const double n = c.changed;
    const std::string law = l2.law_of(0).known()
                                ? fmt::format(
                                      "what the ops before each wrote and read into L2: {:.2f} -> {:.2f} us, "
                                      "l2_prior_writes, docs/step.md §3{}",
                                      c.before_us / n, c.after_us / n, law_note)
                                : fmt::format("no L2 prior-writes law measured on {}", gpu_name(context));
    const std::string wb =
        l2.writeback.known()
            ? fmt::format(
                  "dirty in L2 as each starts {:.1f} -> {:.1f} MB, its write-back {:.2f} -> {:.2f} us, "
                  "docs/step.md §6",
                  c.dirty_before_mb / n, c.dirty_after_mb / n, c.wb_before_us / n, c.wb_after_us / n)
            : fmt::format("no L2 write-back measured on {}", gpu_name(context));
    parts.push_back(fmt::format("the {} stage-1 kernels per step after them {:+.2f} us each ({}; {})", n / steps,
                                c.delta_us / n, law, wb));
  }
  if (c.unknown > 0)
    parts.push_back(fmt::format(
        "{} stage-1 kernels per step keep their measured times (an op less than {:.0f} MB of traffic before them "
        "has no bytes in {}: {})",
        c.unknown / steps, l2.window_mb(l2.law_of(0)), context.op_bytes->origin, short_name(c.missing)));
  if (c.unpaired > 0)
    parts.push_back(fmt::format(
        "{} stage-1 kernels per step before it are not weighed (the edit changed how many stage-1 kernels a step "
        "has; those left keep their measured times)",
        c.unpaired / steps));
  if (parts.empty()) parts.push_back("no stage-1 kernel follows them");
  if (!copies_before.empty()) {
    const CopyChange cc = apply_copy_prior_writes(edited, copies_before, context.workload->params);
    if (cc.changed > 0)
      parts.push_back(fmt::format(
          "the {} copies per step after them {:+.2f} us each (what the ops before each wrote and read into L2: "
          "{:.2f} -> {:.2f} us, l2_copy_prior_writes, docs/step.md §3)",
          cc.changed / steps, cc.delta_us / cc.changed, cc.before_us / cc.changed, cc.after_us / cc.changed));
    if (cc.unknown > 0)
      parts.push_back(fmt::format(
          "{} copies per step keep their measured times (the copy or an op within {:.0f} MB of traffic before it "
          "has no bytes in {}: {})",
          cc.unknown / steps, context.workload->params.l2_copy_prior_writes_cap_mb, context.op_bytes->origin,
          short_name(cc.missing)));
  }
  parts.push_back(kOthersKept);
  return fmt::format("{}", fmt::join(parts, "; "));
}

struct RatioBand {
  std::string kernel_class, missing;
  double p90_pct = 0;
  int pairs = 0;
};
// The ratio error (Gpu::ratio_error) of two plans: that of the larger p90 of their classes, or none where a class
// has none (`missing` names it).
RatioBand ratio_band(const Gpu& gpu, const sim::Metrics& a, const sim::Metrics& b) {
  RatioBand band;
  for (const std::string& cls : {a.kernel_class, b.kernel_class}) {
    const auto it = gpu.ratio_error.find(cls);
    if (it == gpu.ratio_error.end() || it->second.pairs < 1) return {cls, cls, 0, 0};
    if (band.kernel_class.empty() || it->second.p90_pct > band.p90_pct)
      band = {cls, "", it->second.p90_pct, it->second.pairs};
  }
  return band;
}

// The shapes of the batches the steps ran, as the band's basis weighs them.
struct StepShapes {
  int max_qo_len = 1;   // query tokens per request, the most of any step
  bool ragged = false;  // a step's requests differ in context
  int page_size = 64;
  bool contexts_from_flags = true;  // no step batches: every step's contexts are the flags'
};

// Why the steps get no band whatever their plans: the sessions behind ratio_error ran one query token per request.
// Empty: none.
std::string no_band_for(const StepShapes& shapes) {
  const int qlen = shapes.max_qo_len;
  return qlen > 1 ? fmt::format(
                        "the ratio error of two plans was measured at one query token per request, and these "
                        "steps run up to {}",
                        qlen)
                  : std::string();
}

// The policy edits' 90 % band of the edited steps: each step's attention as the last policy edit left it (later
// fuse or remove edits do not move it), where the step's plan is no longer the one that ran, times the p90 of the
// ratio error of the two (the one that ran against the one it runs now, however many policy edits lie between).
// Sets w.band_us and w.band_basis; `plans(step)` gives the step's two evaluations.
// Returns whether that part is known: false where a class has no ratio error or the steps run more than one query
// token per request; true, and zero, where every step runs the plan that ran.
template <typename Plans>
bool band_of_policy_edits(StepWhatIf& w, int flags_batch_steps, const sim::WorkloadContext& workload,
                          const StepShapes& shapes, const std::vector<double>& attention, Plans plans) {
  w.band_us.reset();
  w.band_per_step_us.assign(w.after.size(), 0.0);
  w.band_basis = no_band_for(shapes);
  if (!w.band_basis.empty()) return false;
  std::set<std::string> classes;
  for (size_t i = 0; i < w.after.size(); ++i) {
    const auto [ran, now] = plans(i);
    if (same_plan(*ran, *now)) continue;  // its attention as measured
    const RatioBand r = ratio_band(workload.gpu, ran->prediction->metrics, now->prediction->metrics);
    if (!r.missing.empty()) {
      w.band_basis = fmt::format("no ratio error of {} measured on {}", r.missing, workload.gpu.name);
      w.band_per_step_us.assign(w.after.size(), 0.0);
      return false;
    }
    w.band_per_step_us[i] = attention[i] * r.p90_pct / 100.0;
    classes.insert(fmt::format("{} {:.1f} % over {} pairs", r.kernel_class, r.p90_pct, r.pairs));
  }
  if (classes.empty()) {
    w.band_basis = "every step runs the plan that ran, its attention as measured";
    return true;
  }
  double band = 0;
  for (double b : w.band_per_step_us) band += b;
  w.band_us = band / static_cast<double>(w.after.size());
  w.band_basis = fmt::format(
      "the ratio of the plan that ran and the one each step runs now, within the p90 of its error over sessions no "
      "fit took as input on {} ({})",
      workload.gpu.name, fmt::join(classes, "; "));
  // Where the band is wider than said: the sessions ran uniform batches on pages of 64 (docs/step.md §3).
  if (shapes.ragged || shapes.page_size != 64)
    w.band_basis += "; measured on uniform batches on pages of 64, and wider at this shape (docs/step.md §3)";
  if (flags_batch_steps > 0)
    w.band_basis += fmt::format("; {} of {} steps take the flags' batch, which the band takes to be theirs",
                                flags_batch_steps, w.after.size());
  else if (shapes.contexts_from_flags)
    w.band_basis +=
        "; the steps' contexts are the flags', which the band takes to be theirs (--step-batches gives "
        "each step its own)";
  return true;
}

// Where the fuse (by bytes) and remove edits ran: per step, the runs fused and the kernels removed.
struct EditSites {
  std::vector<int> fuse, remove;
};

// The policy edits' part of the band: none ran, known (zero where every step runs the plan that ran), or unknown.
enum class PolicyPart { none, known, unknown };

// The fuse and remove edits' part of the 90 % band: per step, each site (a fused run, a removed kernel) times the p90
// of that kind's measured error per site (Gpu::edit_error), added to the policy edits' part. An unknown policy part
// leaves no band. The error was measured at one query token per request with the ops' bytes given (--op-bytes);
// elsewhere, and for kinds the profile has no error for, the edits go to w.unbanded_edits, with why.
void band_of_fuse_and_remove(StepWhatIf& w, const Gpu& gpu, const EditSites& sites, PolicyPart policy,
                             const StepShapes& shapes, bool op_bytes_given) {
  const std::string why_not =
      shapes.max_qo_len > 1
          ? fmt::format("measured at one query token per request, and these steps run up to {}", shapes.max_qo_len)
      : !op_bytes_given
          ? std::string("measured with the ops' bytes given (--op-bytes), which weigh the attention after")
          : std::string();
  std::vector<std::string> parts, missing;
  std::vector<double> per_step(w.after.size(), 0.0);
  for (const auto& [kind, count, site] :
       {std::tuple{"fuse", &sites.fuse, "fused runs"}, std::tuple{"remove", &sites.remove, "removed kernels"}}) {
    const int total = std::accumulate(count->begin(), count->end(), 0);
    if (total == 0) continue;
    const auto it = gpu.edit_error.find(kind);
    const std::string why = !why_not.empty()             ? "their error was " + why_not
                            : it == gpu.edit_error.end() ? fmt::format("no error of them measured on {}", gpu.name)
                                                         : std::string();
    if (!why.empty()) {
      missing.push_back(kind);
      w.unbanded_edits.push_back(fmt::format("the {} edits ({})", kind, why));
      continue;
    }
    for (size_t i = 0; i < per_step.size(); ++i) per_step[i] += (*count)[i] * it->second.p90_us;
    parts.push_back(fmt::format("{}: {:.2f} {} per step, {:.2f} us each, the p90 over {} edits", kind,
                                total / static_cast<double>(per_step.size()), site, it->second.p90_us,
                                it->second.edits));
  }
  if (parts.empty()) {
    if (policy == PolicyPart::none && !missing.empty())
      w.band_basis = !why_not.empty()
                         ? fmt::format("the {} edits' error was {}", fmt::join(missing, " and "), why_not)
                         : fmt::format("no error of {} edits measured on {}", fmt::join(missing, " or "), gpu.name);
    return;
  }
  if (policy == PolicyPart::unknown) return;  // the policy edits' part is not known, so neither is the sum
  if (policy == PolicyPart::none) w.band_per_step_us.assign(w.after.size(), 0.0);
  double band = 0;
  for (size_t i = 0; i < per_step.size(); ++i) band += (w.band_per_step_us[i] += per_step[i]);
  w.band_us = band / static_cast<double>(per_step.size());
  std::string edits = fmt::format(
      "the fuse and remove edits within the p90 of their error per site over the validation runs on {} ({})", gpu.name,
      fmt::join(parts, "; "));
  if (shapes.ragged || shapes.page_size != 64) edits += ", measured on uniform batches on pages of 64";
  w.band_basis = policy == PolicyPart::none ? edits : w.band_basis + "; plus " + edits;
}

}  // namespace

StepEdit parse_step_edit(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) bad_edit(text, "needs KIND=VALUE");
  const std::string kind = text.substr(0, eq), value = text.substr(eq + 1);
  StepEdit e;
  e.text = text;
  if (kind == "policy") {
    e.kind = StepEdit::Kind::policy;
    if (value.empty()) bad_edit(text, "policy= needs a policy spec");
    try {
      sim::make_policy(value);  // a spec that names no policy, or a knob it lacks, is this edit's error
    } catch (const InputError& err) {
      bad_edit(text, err.message());
    }
    e.policy = value;
  } else if (kind == "metadata") {
    e.kind = StepEdit::Kind::metadata;
    if (value.empty())
      bad_edit(text, "metadata= needs a planner implementation (host, device-serial, device-parallel)");
    e.policy = value;
  } else if (kind == "gaps") {
    e.kind = StepEdit::Kind::gaps;
    e.us = positive_number(text, value, "gaps", true);
  } else if (kind == "remove") {
    e.kind = StepEdit::Kind::remove;
    e.selectors = parse_selectors(text, value);
  } else if (kind == "fuse") {
    e.kind = StepEdit::Kind::fuse;
    std::string list = value;
    // Options peel off from the end: SEL:bytes=B:written=W.
    for (const char* option : {":written=", ":us=", ":bytes="}) {
      const size_t at = list.rfind(option);
      if (at == std::string::npos) continue;
      const std::string name(option);
      const double v = positive_number(text, list.substr(at + name.size()), option + 1, name == ":written=");
      (name == ":us=" ? e.us : name == ":bytes=" ? e.bytes : e.written) = v;
      list = list.substr(0, at);
    }
    if (e.us && e.bytes) bad_edit(text, "give the fused kernel's time (us=) or its bytes (bytes=), not both");
    if (!e.us && !e.bytes)
      bad_edit(text, "fuse needs the fused kernel's time (:us=T) or the bytes it moves (:bytes=B)");
    if (e.written && !e.bytes) bad_edit(text, "written= goes with bytes= (SEL:bytes=B:written=W)");
    if (e.written && *e.written > *e.bytes) bad_edit(text, "written= is part of bytes=, so at most B");
    e.selectors = parse_selectors(text, list);
  } else {
    bad_edit(text, "unknown edit '" + kind + "'");
  }
  return e;
}

MetadataBuild metadata_build(const sim::MetadataCostModel& model, const std::string& policy,
                             const sim::WorkloadContext& workload) {
  const sim::Evaluation e = sim::evaluate(policy, workload);
  MetadataBuild b;
  b.policy = policy;
  b.clusters = e.plan->num_clusters();
  b.works = e.plan->num_works();
  b.requests = e.plan->num_requests;
  for (const auto& impl : model.implementations) b.us.emplace_back(impl.name, sim::metadata_us(impl, *e.plan));
  return b;
}

double StepWhatIf::speedup() const {
  return after_summary.time_us > 0 ? before_summary.time_us / after_summary.time_us : 0.0;
}

std::optional<std::pair<double, double>> StepWhatIf::band_range() const {
  if (!band_us) return std::nullopt;
  return std::pair{std::max(0.0, after_summary.time_us - *band_us), after_summary.time_us + *band_us};
}

StepWhatIf apply_step_edits(const StepAnalysis& analysis, const std::vector<StepEdit>& edits,
                            const WhatIfContext& context) {
  StepWhatIf w;
  w.before = analysis.steps;
  w.after = analysis.steps;
  std::optional<StepWorkloads> workloads;
  int flags_batch_steps = 0;   // steps whose batch the trace does not give (they take the flags')
  std::vector<int> batch_key;  // each step's batch (StepWorkloads::key_of): the plans' caches go by it
  StepShapes shapes;
  if (context.step_batches) {
    if (!context.workload) throw InputError("step-batches", "needs the step's workload (GPU, heads, dtypes)");
    if (const std::string why = entries_per_step_mismatch(context.step_batches->steps.size(), analysis.total_steps);
        !why.empty())
      throw InputError("step-batches", context.step_batches->origin + ": steps: " + why);
  }
  if (context.workload) {
    workloads.emplace(*context.workload, analysis.batch_counts_tokens, analysis.batch_source, context.step_batches);
    for (const DecodeStep& s : w.before) {
      w.step_requests.push_back(workloads->requests_of(s));
      batch_key.push_back(workloads->key_of(s));
      flags_batch_steps += workloads->takes_flags_batch(s);
      const DecodeBatch& b = workloads->of(s).batch;
      w.step_kv_tokens.push_back(b.total_kv_tokens());
      w.tokens_per_step += static_cast<double>(b.total_qo_tokens());
      shapes.max_qo_len = std::max(shapes.max_qo_len, b.max_qo_len());
      shapes.ragged = shapes.ragged ||
                      std::adjacent_find(b.kv_lens.begin(), b.kv_lens.end(), std::not_equal_to<>()) != b.kv_lens.end();
    }
    shapes.page_size = context.workload->batch.page_size;
    shapes.contexts_from_flags = context.step_batches == nullptr;
    w.tokens_per_step /= static_cast<double>(std::max<size_t>(1, w.before.size()));
  }
  std::string running = context.ran_policy;  // the policy the edited step runs
  std::vector<double> policy_attention;      // each step's attention as the last policy edit left it
  EditSites sites{std::vector<int>(w.after.size(), 0), std::vector<int>(w.after.size(), 0)};
  // What the kernels read and write, where the user gave it: fuse and remove edits weigh it for the attention.
  L2Terms l2 = context.workload ? L2Terms{l2_prior_writes_of(context.workload->params),
                                          sim::l2_writeback_of(context.workload->params, context.workload->gpu),
                                          {}}
                                : L2Terms{};
  if (context.op_bytes)
    for (size_t i = 0; i < w.after.size(); ++i)
      for (StepKernel& k : w.after[i].kernels)
        k.bytes = context.op_bytes->of(k, w.step_requests.empty() ? w.after[i].batch : w.step_requests[i]);
  // Each policy's plan for each batch the steps ran, made once.
  std::map<std::pair<int, std::string>, sim::Evaluation> plan_cache;
  const auto plan_of = [&](const std::string& policy, size_t step, const std::string& edit) -> const sim::Evaluation& {
    auto it = plan_cache.find({batch_key[step], policy});
    if (it == plan_cache.end())
      it = plan_cache.emplace(std::pair{batch_key[step], policy}, workloads->evaluate(policy, w.before[step], edit))
               .first;
    return it->second;
  };
  // The prior-writes law of a step's stage 1 under the running policy's plan: its class's own, at the clusters the
  // plan streams on, where it has one (model/l2_prior_writes.h), else the GPU's; `own` says which.
  const auto running_law = [&](size_t step, const std::string& edit, bool* own) {
    const sim::Metrics& m = plan_of(running, step, edit).prediction->metrics;
    if (own) *own = false;
    const std::optional<KernelClassId> cls = parse_kernel_class(m.kernel_class);
    return cls ? l2_prior_writes_of(context.workload->params, *cls, m.active_clusters, m.num_partials > 0, own)
               : l2.law;
  };
  if (context.workload && workloads) l2.step_law = [&](size_t step) { return running_law(step, running, nullptr); };
  // The attention's own kernels, where the user's file does not give their bytes, move what the running plan does
  // (sim/attention_bytes.h): the ops before a stage 1 may reach back to the attention of the layer before. Assigned
  // when an edit first weighs the L2 terms, and again after each policy edit.
  std::optional<std::string> attention_bytes_of;  // the policy whose plan gave them
  const auto attention_bytes_from = [&](const std::string& policy, const std::string& edit) {
    if (!context.op_bytes || !workloads || !l2.any() || attention_bytes_of == policy) return;
    attention_bytes_of = policy;
    for (size_t i = 0; i < w.after.size(); ++i) {
      const sim::AttentionBytes b =
          sim::attention_bytes(*plan_of(policy, i, edit).plan, workloads->of(w.before[i]).batch);
      for (StepKernel& k : w.after[i].kernels) {
        const bool stage1 = k.kernel_class == "mla_stage1";
        if ((!stage1 && k.kernel_class != "mla_reduce") || context.op_bytes->of(k, w.step_requests[i])) continue;
        k.bytes =
            stage1 ? OpBytes{b.stage1_read_mb, b.stage1_written_mb} : OpBytes{b.reduce_read_mb, b.reduce_written_mb};
      }
    }
  };
  // The L2 terms of the ops before each stage 1 as the steps stand before edit `edit`, the attention's kernels with
  // the running plan's bytes.
  const auto prior_before = [&](const std::string& edit) {
    attention_bytes_from(running, edit);
    return prior_writes_of(w.after, l2, context);
  };
  // The copy law of each copy as the steps stand before edit `edit`; none where the profile has no copy law or the
  // ops' bytes are not given (the copies keep their measured times).
  const auto copies_before = [&](const std::string& edit) {
    std::vector<std::vector<PriorWrites>> out;
    if (!context.workload || !context.op_bytes || !l2_copy_prior_writes_of(context.workload->params, 1).known())
      return out;
    attention_bytes_from(running, edit);
    for (const DecodeStep& s : w.after) out.push_back(copy_prior_writes_us(s, context.workload->params));
    return out;
  };
  // The write-back of `dirty_mb` for a step's stage 1 under `policy`, played once per plan and MB (to 1e-3 MB).
  std::map<std::tuple<int, std::string, long long>, double> writebacks;
  const auto writeback_under = [&](const std::string& policy) -> WritebackCost {
    return [&, policy](size_t step, double dirty_mb) {
      if (!l2.writeback.known() || dirty_mb <= 0 || !workloads) return 0.0;
      const std::tuple key{batch_key[step], policy, std::llround(dirty_mb * 1e3)};
      auto it = writebacks.find(key);
      if (it == writebacks.end()) {
        const sim::WorkloadContext& ctx = workloads->of(w.before[step]);
        const sim::Evaluation& e = plan_of(policy, step, policy);  // its metrics: the clean play
        it = writebacks
                 .emplace(key, sim::l2_writeback_us(*e.plan, ctx.batch, ctx.gpu, ctx.params, e.prediction->metrics,
                                                    dirty_mb, l2.writeback))
                 .first;
      }
      return it->second;
    };
  };
  // Which law a fuse or remove edit weighed: the stage-1 class's own, at its plan's clusters, or the GPU's, which
  // was fitted to an unsplit plan (the line says when the step's plan splits).
  const auto law_note = [&](const std::string& edit) -> std::string {
    if (!context.op_bytes || !workloads) return "";
    const sim::Metrics& m = plan_of(running, 0, edit).prediction->metrics;
    bool own = false;
    running_law(0, edit, &own);
    if (own)
      return fmt::format("; the {} class's own law, on the {} clusters of its plan", m.kernel_class, m.active_clusters);
    if (!l2.law.known()) return "";
    return m.num_partials > 0
               ? fmt::format("; fitted to an unsplit plan, and {} splits here ({} partials)", running, m.num_partials)
               : "";
  };
  // A policy edit's stage 1s pay the write-back of what the ops before them left dirty under the new plan; the
  // measured ones paid it under the plan that ran, and the ratio scaled that with them (in the share the attention
  // carries, PolicyChange::offset_carry). Says what it did.
  const auto weigh_policy_writeback = [&](const std::string& next_policy, const auto& by_batch,
                                          const std::vector<std::vector<PriorWrites>>& prior_ran) -> std::string {
    std::string why_not = l2.writeback.known() ? l2_not_weighed(l2, context)
                                               : fmt::format("no L2 write-back measured on {}", gpu_name(context));
    if (!why_not.empty())
      return fmt::format("; the write-back of what the ops before each stage 1 left dirty in L2 is not weighed ({})",
                         why_not);
    const PriorWritesChange c = apply_prior_writes(w.after, prior_ran, l2, 0.0, writeback_under(running),
                                                   writeback_under(next_policy), [&](size_t i) {
                                                     const PolicyChange& pc = by_batch.at(batch_key[i]);
                                                     return pc.offset_carry * pc.ratio();
                                                   });
    const double steps = static_cast<double>(w.after.size());
    std::string out;
    if (c.changed > 0) {
      const double n = c.changed;
      out = fmt::format(
          "; {} stage-1 kernels per step {:+.2f} us each for the write-back of what the ops before them left dirty in "
          "L2 ({:.1f} MB under {}, {:.2f} us, scaled by the ratio -> {:.1f} MB under {}, {:.2f} us; docs/step.md §6)",
          n / steps, c.delta_us / n, c.dirty_before_mb / n, running, c.wb_before_us / n, c.dirty_after_mb / n,
          next_policy, c.wb_after_us / n);
    }
    if (c.unknown > 0)
      out += fmt::format(
          "; {} stage-1 kernels per step keep the ratio's time (an op less than {:.0f} MB of traffic before them has "
          "no bytes in {}: {})",
          c.unknown / steps, l2.window_mb(l2.law_of(0)), context.op_bytes->origin, short_name(c.missing));
    return out;
  };
  // What a fuse or remove edit puts into the band (Gpu::edit_error), for its line.
  const auto band_note = [&](const std::string& kind) -> std::string {
    if (!context.workload) return "";
    const Gpu& gpu = context.workload->gpu;
    const auto it = gpu.edit_error.find(kind);
    if (it == gpu.edit_error.end()) return fmt::format("; no error of {} edits measured on {}", kind, gpu.name);
    return fmt::format(
        "; such an edit's error per site was within {:.2f} us in 90 % of {} {} edits of the validation runs on {} "
        "(median {:.2f} us; docs/step.md §3)",
        it->second.p90_us, it->second.edits, kind, gpu.name, it->second.median_us);
  };
  for (const StepEdit& e : edits) {
    const double before_us = summarize(w.after).time_us;
    std::string did;
    if (e.kind == StepEdit::Kind::policy) {
      if (!context.workload) bad_edit(e.text, "a policy edit needs the step's workload");
      // Against the policy the step runs now (after an earlier policy edit, that edit's policy), for each batch the
      // steps ran.
      std::map<int, PolicyChange> by_batch;
      const sim::L2Carry carry = sim::l2_carry_of(context.workload->params);  // resized batches keep the params
      int layers = 0, followers = 0;
      const auto prior_ran = prior_before(e.text);
      std::map<int, size_t> first_of_batch;  // by key: the first edited step that ran it (its requests, its index)
      std::map<int, int> steps_of_batch;     // by key
      for (size_t i = 0; i < w.after.size(); ++i) {
        const int requests = w.step_requests[i];
        auto c = by_batch.find(batch_key[i]);
        if (c == by_batch.end()) {
          first_of_batch[batch_key[i]] = i;
          c = by_batch
                  .emplace(batch_key[i], policy_change(plan_of(running, i, e.text), plan_of(e.policy, i, e.text),
                                                       workloads->of(w.before[i]), carry))
                  .first;
          if (c->second.ran_us <= 0 || c->second.next_us <= 0)
            bad_edit(e.text, fmt::format("a plan with no kernel time beyond the event timing's overhead (kernel_us "
                                         "{:.2f} us for {}, {:.2f} us for {})",
                                         c->second.ran.kernel_us, running, c->second.next.kernel_us, e.policy));
        }
        ++steps_of_batch[batch_key[i]];
        layers += apply_policy(w.after[i], c->second, followers, context.op_bytes, requests);
      }
      if (layers == 0) bad_edit(e.text, "the trace has no MLA stage-1 kernel (class mla_stage1) to replace");
      const CostParams& p = context.workload->params;
      const bool events_known = p.events_overhead_us > 0 || p.events_kernel_overhead_us > 0;
      did = fmt::format("{} layers per step: predicted kernels{}", layers / static_cast<int>(w.after.size()),
                        events_known ? fmt::format(" (kernel_us less the event timing's {:.2f} us and {:.2f} us per "
                                                   "kernel after the first)",
                                                   p.events_overhead_us, p.events_kernel_overhead_us)
                                     : fmt::format(" (kernel_us: no event timing overhead measured on {})",
                                                   context.workload->gpu.name));
      std::string sep;
      const size_t first_figure = w.policy_changes.size();
      std::vector<int> figure_keys;  // the key of each figure this edit adds
      // Few batches are listed one by one; a log's batches, often one per step, by their range.
      constexpr size_t kListedBatches = 8;
      const bool listed = by_batch.size() <= kListedBatches;
      // The batches in the order their first edited step ran (a step's own batches), else by requests.
      std::vector<int> order;
      for (const auto& [key, c] : by_batch) order.push_back(key);
      if (context.step_batches)
        std::sort(order.begin(), order.end(),
                  [&](int x, int y) { return first_of_batch.at(x) < first_of_batch.at(y); });
      for (const int key : order) {
        const PolicyChange& c = by_batch.at(key);
        const size_t first = first_of_batch.at(key);
        const std::string batch = workloads->batch_name(key, w.before[first].index);
        if (listed) {
          did += fmt::format("{}{} {:.2f} us ({}) -> {:.2f} us ({}), ratio {:.3f}", sep,
                             by_batch.size() > 1 ? fmt::format(" at {}:", batch) : std::string(), c.ran_us, running,
                             c.next_us, e.policy, c.ratio());
          if (c.offset_carry != 1)
            did += fmt::format(
                " (the measured attention's excess over {:.2f} us carried at {:.2f} of the ratio, {}"
                ".policy_offset_carry)",
                c.ran_us, c.offset_carry, c.ran.kernel_class);
          if (carry.known())
            did += fmt::format(", L2 left dirty {:.1f} -> {:.1f} MB: the next kernel {:+.2f} us",
                               c.dirty_ran.end_dirty_mb, c.dirty_next.end_dirty_mb, c.carry_us);
        }
        sep = ";";
        w.policy_changes.push_back({e.text, running, e.policy, w.step_requests[first], batch, c.ran_us, c.next_us,
                                    c.offset_carry, c.ran.kernel_class, carry.known(), c.dirty_ran.end_dirty_mb,
                                    c.dirty_next.end_dirty_mb, c.dirty_ran.reread_missed_mb,
                                    c.dirty_next.reread_missed_mb, c.carry_us, "", 0.0, 0});
        figure_keys.push_back(key);
      }
      if (!listed) {
        const auto range = [&](auto of) {
          double lo = std::numeric_limits<double>::infinity(), hi = -lo;
          for (const auto& [key, c] : by_batch) lo = std::min(lo, of(c)), hi = std::max(hi, of(c));
          return std::pair{lo, hi};
        };
        // What moves the steps: the ratio of their kernels' times summed over them, not a mean of ratios.
        double ran_sum = 0, next_sum = 0;
        for (const auto& [key, c] : by_batch) {
          ran_sum += c.ran_us * steps_of_batch.at(key);
          next_sum += c.next_us * steps_of_batch.at(key);
        }
        const auto [ran_lo, ran_hi] = range([](const PolicyChange& c) { return c.ran_us; });
        const auto [next_lo, next_hi] = range([](const PolicyChange& c) { return c.next_us; });
        const auto [r_lo, r_hi] = range([](const PolicyChange& c) { return c.ratio(); });
        did += fmt::format(
            " over {} batches: {:.2f} to {:.2f} us ({}) -> {:.2f} to {:.2f} us ({}), ratio {:.3f} to {:.3f} ({:.3f} "
            "over the steps' kernels summed)",
            by_batch.size(), ran_lo, ran_hi, running, next_lo, next_hi, e.policy, r_lo, r_hi,
            ran_sum > 0 ? next_sum / ran_sum : 0.0);
        if (carry.known()) {
          const auto [c_lo, c_hi] = range([](const PolicyChange& c) { return c.carry_us; });
          did += fmt::format(", the next kernel {:+.2f} to {:+.2f} us for the L2 left dirty", c_lo, c_hi);
        }
        did += "; each batch's figures in --format json (policy_changes)";
      }
      if (!carry.known())
        did += fmt::format("; no L2 carry-over measured on {}: the kernel after attention keeps its time",
                           context.workload->gpu.name);
      else
        did += fmt::format("; {} kernels per step took the carry-over", followers / static_cast<int>(w.after.size()));
      attention_bytes_from(e.policy, e.text);  // the kernels now run the new plan, a predicted reduce among them
      did += weigh_policy_writeback(e.policy, by_batch, prior_ran);
      // The edit's figures: its two plans' ratio error, for tools and its line (each class once).
      const std::string no_band = no_band_for(shapes);
      std::set<std::string> ratio_lines;
      for (size_t k = first_figure; k < w.policy_changes.size(); ++k) {
        PolicyChangeFigures& f = w.policy_changes[k];
        const PolicyChange& c = by_batch.at(figure_keys[k - first_figure]);
        const RatioBand r = ratio_band(context.workload->gpu, c.ran, c.next);
        const bool banded = no_band.empty() && !c.same;
        f.kernel_class = r.kernel_class;
        f.ratio_p90_pct = banded ? r.p90_pct : 0.0;
        f.ratio_pairs = banded ? r.pairs : 0;
        ratio_lines.insert(
            !no_band.empty() ? "no band: " + no_band
            : c.same         ? std::string("the same plan as before, under another spec: no band")
            : r.missing.empty()
                ? fmt::format("the ratio of {} plans within {:.1f} % in 90 % of {} pairs from sessions "
                              "no fit took as input",
                              r.kernel_class, r.p90_pct, r.pairs)
                : fmt::format("no ratio error of {} measured on {}", r.missing, context.workload->gpu.name));
      }
      did += fmt::format("; {}", fmt::join(ratio_lines, "; "));
      // The attention the band is of: as this edit leaves it, before any later fuse or remove.
      policy_attention.assign(w.after.size(), 0.0);
      for (size_t i = 0; i < w.after.size(); ++i)
        for (const StepKernel& k : w.after[i].kernels)
          if (is_attention(k)) policy_attention[i] += k.exposed_us;
      running = e.policy;
    } else if (e.kind == StepEdit::Kind::metadata) {
      if (!context.workload || !context.metadata_cost) bad_edit(e.text, "a metadata edit needs the step's workload");
      const sim::MetadataCostModel::Implementation* impl = nullptr;
      try {
        impl = &context.metadata_cost->at(e.policy);
      } catch (const InputError& err) {
        bad_edit(e.text, err.message());
      }
      double traced = 0, built = 0;
      std::map<int, sim::Evaluation> plans;  // by the step's batch
      for (size_t i = 0; i < w.after.size(); ++i) {
        const int requests = w.step_requests[i];
        auto p = plans.find(batch_key[i]);
        if (p == plans.end()) p = plans.emplace(batch_key[i], workloads->evaluate(running, w.before[i], e.text)).first;
        const double us = sim::metadata_us(*impl, *p->second.plan);
        traced += w.after[i].class_us().at("metadata");
        built += us;
        replace_metadata(w.after[i], "metadata (" + impl->name + ", predicted)", us, context.op_bytes, requests);
      }
      const double n = static_cast<double>(w.after.size());
      const sim::Plan& plan = *plans.begin()->second.plan;
      did = plans.size() == 1
                ? fmt::format(
                      "the plan of {} ({} clusters, {} works, {} requests) built by {} in {:.2f} us per step "
                      "(metadata kernels before: {:.2f} us)",
                      running, plan.num_clusters(), plan.num_works(), plan.num_requests, impl->name, built / n,
                      traced / n)
                : fmt::format(
                      "the plans of {} for {} batches built by {} in {:.2f} us per step on average (metadata "
                      "kernels before: {:.2f} us)",
                      running, plans.size(), impl->name, built / n, traced / n);
    } else if (e.kind == StepEdit::Kind::fuse) {
      double fused_us = 0;
      std::string costed;  // how a kernel given by its bytes was timed
      if (e.bytes) {
        if (!context.workload) bad_edit(e.text, "bytes= needs a GPU profile");
        const CostParams& p = context.workload->params;
        const double written = e.written.value_or(0);
        fused_us = stream_kernel_time_us(p, *e.bytes, written);
        if (!has_stream_kernel(p))
          costed = fmt::format(" ({:.3g} MB at b_hbm {:.2f} TB/s; no stream kernel measured on this GPU)",
                               *e.bytes / 1e6, p.b_hbm_tbps);
        else if (written == 0)
          costed = fmt::format(" (a stream kernel: {:.2f} us + {:.3g} MB read at {:.2f} TB/s)", p.stream_kernel_us,
                               *e.bytes / 1e6, p.stream_kernel_tbps);
        else
          costed = fmt::format(
              " (a stream kernel: {:.2f} us + {:.3g} MB read at {:.2f} TB/s + {:.3g} MB written at "
              "{:.2f} TB/s)",
              p.stream_kernel_us, (*e.bytes - written) / 1e6, p.stream_kernel_tbps, written / 1e6,
              stream_write_tbps_of(p));
      }
      const StepSelector match(e.selectors);
      const std::optional<OpBytes> fused_bytes =
          e.bytes ? std::optional<OpBytes>({(*e.bytes - e.written.value_or(0)) / 1e6, e.written.value_or(0) / 1e6})
                  : std::nullopt;
      // A kernel given by its bytes, with the ops' bytes known and a measured stream kernel, streams as the run's
      // largest op did: each run's fused kernel takes that op's ratio of measured to stream cost.
      const bool scaled = e.bytes && context.op_bytes && has_stream_kernel(context.workload->params);
      int scaled_runs = 0;
      double ratio_sum = 0, fused_sum = 0;
      std::string reference;
      double reference_mb = 0;
      // A run costed as the validation runs' fuses were (its op's ratio) also takes off what they gained beyond
      // that cost and the L2 laws.
      const double offset = scaled ? context.workload->params.step_fuse_offset_us : 0.0;
      const auto cost = [&](std::span<const StepKernel> run) {
        double us = e.us.value_or(fused_us);
        if (scaled)
          if (const auto r = stream_reference(run, context.workload->params)) {
            us = std::max(0.0, us * r->ratio - offset);
            ratio_sum += r->ratio;
            if (scaled_runs++ == 0) reference = r->name, reference_mb = r->mb;
          }
        fused_sum += us;
        return us;
      };
      const auto prior = prior_before(e.text);
      const auto copies = copies_before(e.text);
      int runs = 0;
      for (size_t i = 0; i < w.after.size(); ++i) {
        const int fused = fuse_runs(w.after[i], match, cost, fused_bytes);
        runs += fused;
        if (e.bytes) sites.fuse[i] += fused;  // a kernel given by its time has the user's error, not ours
      }
      if (runs == 0) bad_edit(e.text, "matches no kernel of the trace");
      if (!e.bytes) w.unbanded_edits.push_back(e.text + " (a fused kernel of the time given)");
      if (scaled && scaled_runs == 0)
        costed += "; no op of the run has bytes (--op-bytes), so the stream kernel's cost stands";
      else if (scaled)
        costed += fmt::format(
            ", times {:.3f} on average over the trace's {} runs: the measured time of each run's op that moves the "
            "most bytes "
            "({}, {:.3g} MB) over a stream kernel's cost of its bytes{}",
            ratio_sum / scaled_runs, scaled_runs, short_name(reference), reference_mb,
            scaled_runs < runs ? fmt::format(" ({} runs without one keep the stream cost)", runs - scaled_runs)
                               : std::string());
      if (offset != 0 && scaled_runs > 0)
        costed += fmt::format(
            ", less {:.2f} us: what the validation runs' fuses gained beyond that and the L2 laws (the median per "
            "run, step_fuse_offset_us)",
            offset);
      did = fmt::format(
          "{} runs per step fused into one kernel of {:.2f} us each{}; {}", runs / static_cast<int>(w.after.size()),
          fused_sum / runs, costed,
          weigh_prior_writes(w.after, prior, copies, l2, writeback_under(running), context, law_note(e.text)));
      did += e.bytes ? band_note("fuse") : "; a fused kernel of the time given: its error is the time's";
    } else if (e.kind == StepEdit::Kind::remove) {
      const StepSelector match(e.selectors);
      const auto prior = prior_before(e.text);
      const auto copies = copies_before(e.text);
      int removed = 0;
      for (size_t i = 0; i < w.after.size(); ++i) {
        const int gone = remove_kernels(w.after[i], match);
        removed += gone;
        sites.remove[i] += gone;
      }
      if (removed == 0) bad_edit(e.text, "matches no kernel of the trace");
      did = fmt::format(
          "{} kernels per step removed; {}{}", removed / static_cast<int>(w.after.size()),
          weigh_prior_writes(w.after, prior, copies, l2, writeback_under(running), context, law_note(e.text)),
          band_note("remove"));
    } else {
      for (DecodeStep& s : w.after)
        for (size_t i = 1; i < s.kernels.size(); ++i) s.kernels[i].gap_us = *e.us;
      did = fmt::format("every gap between kernels set to {:.2f} us", *e.us);
    }
    if (e.kind == StepEdit::Kind::gaps || e.kind == StepEdit::Kind::metadata) w.unbanded_edits.push_back(e.text);
    for (const DecodeStep& s : w.after)
      if (s.kernels.empty()) bad_edit(e.text, "leaves a step without a kernel");
    w.notes.push_back(
        fmt::format("{}: {}; step {:.2f} -> {:.2f} us", e.text, did, before_us, summarize(w.after).time_us));
  }
  w.before_summary = summarize(w.before);
  w.after_summary = summarize(w.after);
  PolicyPart policy = PolicyPart::none;
  if (!w.policy_changes.empty())  // a policy edit ran
    policy =
        band_of_policy_edits(w, flags_batch_steps, *context.workload, shapes, policy_attention,
                             [&](size_t i) {
                               return std::pair{&plan_of(context.ran_policy, i, "band"), &plan_of(running, i, "band")};
                             })
            ? PolicyPart::known
            : PolicyPart::unknown;
  if (context.workload)
    band_of_fuse_and_remove(w, context.workload->gpu, sites, policy, shapes, context.op_bytes != nullptr);
  // How precisely the trace measures its mean step: each step about its own batch's mean (the plans' key, else the
  // launch grid's count).
  std::vector<double> times;
  std::vector<long long> keys;
  for (size_t i = 0; i < w.before.size(); ++i) {
    times.push_back(w.before[i].time_us());
    keys.push_back(batch_key.empty() ? w.before[i].batch : batch_key[i]);
  }
  w.measured_spread = step_spread(times, keys);
  return w;
}

}  // namespace mlasim::validate
