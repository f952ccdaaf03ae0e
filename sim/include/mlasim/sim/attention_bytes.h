#pragma once
// What an attention run moves through L2, in MB (1e6 bytes), from its plan: the KV its stage 1 reads, the outputs
// and partials it writes, the partials the reduce reads back and the outputs it writes. The step what-if counts the
// attention among the ops before the next one (docs/step.md §3), the L2 carry-over plays it work by work (l2_carry.h).
#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

struct AttentionBytes {
  double stage1_read_mb = 0, stage1_written_mb = 0;
  double reduce_read_mb = 0, reduce_written_mb = 0;  // 0 where the plan has no partials
};

// The heads one work row carries: the plan's effective heads (a folded plan's groups), or the batch's.
int attention_row_heads(const Plan& plan, const DecodeBatch& batch);
// Bytes one work writes: a partial (fp32 output and its LSE per row and head) or the bf16 output.
double work_output_bytes(const WorkInfo& w, int heads);
// KV bytes one work streams.
double work_kv_bytes(const WorkInfo& w, const DecodeBatch& batch);

AttentionBytes attention_bytes(const Plan& plan, const DecodeBatch& batch);

}  // namespace mlasim::sim
