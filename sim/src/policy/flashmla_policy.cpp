// flashmla: FlashMLA's tile scheduler (split-policies spec 4.1; 4.2 as scheduler=2026), transplanted to any GPU.
// KV is counted in 64-token blocks with a fixed overhead of 5 blocks per request; the num_sm_parts parts are
// filled in order with equal payloads (the greedy fill AITER v1.2 was modelled on, without qo tiles or a tail
// rule). One persistent CTA per (64-row q block, part), linear id = part x q blocks + q block, walks its part's
// pieces. A request a part covers whole writes the output; pieces of split requests write partials that the
// combine kernel merges.
// The two schedulers give the same pieces for requests of >= 1 token; they differ in num_sm_parts (2026 clamps it
// to >= 1) and in the batch limit (2025 keeps the fill's state in shared memory and takes < 4096 requests).
// Units in the plan's model: sum_blocks and payload_blocks count 64-token blocks.
#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"
#include "plan_assembly.h"

namespace mlasim::sim {
namespace {

constexpr int kBlockTokens = 64;    // block_size_n: KV tokens per block
constexpr int kRowsPerBlock = 64;   // block_size_m: packed q rows per CTA
constexpr int kOverheadBlocks = 5;  // fixed_overhead_num_blocks

struct Piece {
  int request;
  int64_t begin_block, end_block;
};

// The scheduler's decisions: KV blocks per request, their total with the overheads, the payload per part, and
// each part's pieces.
struct Schedule {
  std::vector<int64_t> blocks;
  int64_t total = 0;
  int64_t payload = 0;
  std::vector<std::vector<Piece>> part_pieces;
};

// F3 and F4 over requests of `tokens[b]` KV tokens each: blocks, total and payload, then the parts filled in order.
Schedule schedule(const std::vector<int>& tokens, int parts) {
  Schedule s;
  const int B = static_cast<int>(tokens.size());
  for (int len : tokens) {
    s.blocks.push_back(cdiv(len, kBlockTokens));
    s.total += s.blocks.back() + kOverheadBlocks;
  }
  s.payload = cdiv(s.total, parts) + kOverheadBlocks;
  s.part_pieces.resize(static_cast<size_t>(parts));
  int b = 0;
  int64_t now = 0;
  for (int p = 0; p < parts && b < B; ++p) {
    int64_t remain = s.payload;
    while (b < B) {
      const int64_t rest = s.blocks[b] - now;
      if (remain >= rest + kOverheadBlocks) {
        s.part_pieces[p].push_back({b, now, s.blocks[b]});
        remain -= rest + kOverheadBlocks;
        ++b;
        now = 0;
      } else {
        if (remain - kOverheadBlocks > 0) {
          s.part_pieces[p].push_back({b, now, now + remain - kOverheadBlocks});
          now += remain - kOverheadBlocks;
        }
        break;
      }
    }
  }
  if (b < B) throw std::logic_error("flashmla: the fill left requests unassigned");
  return s;
}

class FlashMlaPolicy final : public SplitPolicy {
 public:
  explicit FlashMlaPolicy(const KnobValues& k)
      : SplitPolicy(k.spec()), parts_(k.integer_or_derived<int>("parts")), newest_(k.word("scheduler") == "2026") {}
  KernelKind kernel() const override { return KernelKind::persistent; }
  // Sparse batches: FlashMLA schedules every token over its request's top-k rows (topk_length when given),
  // whatever the context; rows past it are -1 sentinels the kernel masks.
  GatheredRows sparse_rows() const override { return GatheredRows::full_topk; }

 private:
  bool schedules_sparse_batches() const override { return true; }

  Plan build_plan(const PlanRequest& r) const override {
    if (r.batch.is_sparse()) return build_sparse_plan(r);
    const int sms = detail::usable_clusters(r);
    const DecodeBatch& batch = r.batch;
    const int B = batch.size();
    if (batch.page_size > kBlockTokens)
      throw InputError("page_size", "flashmla walks 64-token KV blocks; page size must be 1..64, got " +
                                        std::to_string(batch.page_size));
    const int s_q = batch.uniform_qo_len();
    if (s_q < 0) throw InputError("qo_len", "flashmla takes one query length (s_q) for the whole batch");
    if (!newest_ && B >= 4096)
      throw InputError("batch", "FlashMLA's original scheduler takes fewer than 4096 requests, got " +
                                    std::to_string(B) + " (scheduler=2026 has no limit)");
    const detail::TileShape shape = detail::packed_row_blocks(batch, kRowsPerBlock, name());
    const int m_blocks = static_cast<int>(cdiv(int64_t{s_q} * batch.q_heads, kRowsPerBlock));
    int parts = 0;
    if (parts_) {
      parts = *parts_;
      if (int64_t{parts} * m_blocks > sms)
        throw InputError("parts", "must be 1.." + std::to_string(sms / m_blocks) + " (" + std::to_string(sms) +
                                      " clusters / " + std::to_string(m_blocks) + " q blocks), got " +
                                      std::to_string(parts));
    } else {
      parts = sms / m_blocks;  // num_sm_parts = SMs / h_k / q blocks, with h_k = 1
      if (newest_) parts = std::max(parts, 1);
      if (parts == 0)
        throw InputError("clusters", "flashmla needs at least " + std::to_string(m_blocks) + " SMs for " +
                                         std::to_string(m_blocks) + " q blocks (num_sm_parts would be 0), got " +
                                         std::to_string(sms));
    }

    const Schedule sched = schedule(batch.kv_lens, parts);

    const int64_t pages_per_block = kBlockTokens / batch.page_size;
    detail::PlanAssembler a(batch, shape, name());
    for (int p = 0; p < parts; ++p)
      for (int m = 0; m < m_blocks; ++m)
        for (const Piece& piece : sched.part_pieces[p]) {
          const int64_t end = piece.end_block == sched.blocks[piece.request] ? batch.pages(piece.request)
                                                                             : piece.end_block * pages_per_block;
          a.add(p * m_blocks + m, a.tile_of_block(piece.request, m), piece.begin_block * pages_per_block, end);
        }
    Plan plan = a.finish(KernelKind::persistent, parts * m_blocks);
    plan.derived.num_splits = parts;
    plan.derived.fixed_over_head_num_blocks = kOverheadBlocks;
    plan.model.sum_blocks = sched.total;
    plan.model.payload_blocks = sched.payload;
    plan.model.packed_qo_len_per_wg = kRowsPerBlock;
    plan.model.qo_splits = m_blocks > shape.head_groups;
    return plan;
  }

  // FlashMLA's sparse decode (docs/reference/sparse-mla.md §3): the schedule is per request, over its top-k in
  // 64-row blocks with the same overhead and fill, and the grid (q blocks, s_q, parts) replicates it over the
  // request's query tokens, each reading its own kv_indices row. q blocks are 64 heads; fewer heads make one
  // block of those heads (FlashMLA itself pads them to 64, our kernels run them as they are); num_sm_parts = max(SMs /
  // s_q / q blocks, 1) (scheduler=2026), max((SMs / 2) / (cdiv(heads, 128) x s_q), 1) (2025). The plan is over the
  // per-token batch: token t of request r is virtual request r x s_q + t, one 64-head group per q block.
  Plan build_sparse_plan(const PlanRequest& r) const {
    const int sms = detail::usable_clusters(r);
    const DecodeBatch& sparse = r.batch;
    const int B = sparse.size();
    const int s_q = sparse.uniform_qo_len();
    if (s_q < 0) throw InputError("qo_len", "flashmla takes one query length (s_q) for the whole batch");
    const int heads = sparse.q_heads;
    if (heads > kRowsPerBlock && heads % kRowsPerBlock != 0)
      throw InputError("heads",
                       "flashmla's sparse decode runs 64-head blocks; more than 64 heads must be a multiple "
                       "of 64, got " +
                           std::to_string(heads));
    const int m_blocks = static_cast<int>(cdiv(heads, kRowsPerBlock));
    if (int64_t{s_q} * m_blocks > sms)
      throw InputError("clusters", "flashmla's sparse grid needs " + std::to_string(int64_t{s_q} * m_blocks) +
                                       " SMs for one part (s_q x q blocks), got " + std::to_string(sms));
    int parts = 0;
    if (parts_) {
      parts = *parts_;
      const int most = sms / (s_q * m_blocks);
      if (parts > most)
        throw InputError("parts", "must be 1.." + std::to_string(most) + " (" + std::to_string(sms) +
                                      " clusters / s_q / q blocks), got " + std::to_string(parts));
    } else {
      parts = newest_ ? std::max(sms / s_q / m_blocks, 1)
                      : std::max((sms / 2) / (static_cast<int>(cdiv(heads, 128)) * s_q), 1);
    }

    std::vector<int> topk(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) topk[b] = sparse.topk_of(b);
    const Schedule sched = schedule(topk, parts);

    const DecodeBatch tokens = gathered_batch(sparse, GatheredRows::full_topk);
    const detail::TileShape shape{m_blocks, m_blocks > 1 ? kRowsPerBlock : heads, 0};
    detail::PlanAssembler a(tokens, shape, name());
    for (int p = 0; p < parts; ++p)
      for (int t = 0; t < s_q; ++t)
        for (int m = 0; m < m_blocks; ++m)
          for (const Piece& piece : sched.part_pieces[p]) {
            const int token = piece.request * s_q + t;
            const int64_t end = piece.end_block == sched.blocks[piece.request] ? int64_t{tokens.kv_lens[token]}
                                                                               : piece.end_block * kBlockTokens;
            a.add((p * s_q + t) * m_blocks + m, a.tile_of_block(token, m), piece.begin_block * kBlockTokens, end);
          }
    Plan plan = a.finish(KernelKind::persistent, parts * s_q * m_blocks);
    plan.derived.num_splits = parts;
    plan.derived.fixed_over_head_num_blocks = kOverheadBlocks;
    plan.model.sum_blocks = sched.total;
    plan.model.payload_blocks = sched.payload;
    plan.model.packed_qo_len_per_wg = kRowsPerBlock;
    return plan;
  }

  std::optional<int> parts_;  // nullopt: num_sm_parts from the SM count
  bool newest_;
};

}  // namespace

std::unique_ptr<SplitPolicy> make_flashmla(const KnobValues& k) { return std::make_unique<FlashMlaPolicy>(k); }

}  // namespace mlasim::sim
