// get_mla_metadata_v1, fast mode (v1.2): the serial device planner restated on the host.
// Section numbers (H1.., P1..) refer to the aiter-v1 planner specification in docs/planner.md.
#include "mlasim/sim/aiter_v1_planner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"

namespace mlasim::sim {
namespace {

std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

KernelTraitsQuery traits_query(const AiterV1Args& a) {
  return KernelTraitsQuery{a.arch,        a.q_dtype,       a.kv_dtype,    a.num_heads_per_head_k,
                           a.num_heads_k, a.max_seqlen_qo, a.experimental};
}

// The per-(virtual)-batch quantities of spec 4.2.
struct BatchView {
  const AiterV1Args& a;
  int R;
  int uni;
  int qlen(int b) const {
    const int bo = b / R;
    return uni > 0 ? uni : a.seqlens_qo_indptr[bo + 1] - a.seqlens_qo_indptr[bo];
  }
  int qbeg(int b) const { return uni > 0 ? uni * b : a.seqlens_qo_indptr[b]; }
  int qend(int b) const { return uni > 0 ? uni * (b + 1) : a.seqlens_qo_indptr[b + 1]; }
  int kvlen(int b) const {
    const int bo = b / R;
    return a.seqlens_kv_indptr[bo + 1] - a.seqlens_kv_indptr[bo];
  }
};

// NS_eff of the adaptive budget rules (split-policies spec section 3); fp32 as on the GPU.
int adaptive_budget(const AiterV1Args& a, const KernelTraits& t, const BatchView& v, int B, int OV, int NS,
                    int64_t sum_blocks) {
  if (a.budget == SplitBudget::flat || a.max_split_per_batch >= 0) return NS;
  if (a.budget == SplitBudget::machine_width) {
    const float work = static_cast<float>(std::max<int64_t>(1, sum_blocks)) * static_cast<float>(std::max(1, NS));
    const long e = std::lrintf(a.split_coef * std::sqrt(work));
    return static_cast<int>(std::clamp<long>(e, 1, NS));
  }
  // One wave of 64 lanes: lane j sums requests j, j+64, ...; then a butterfly reduction.
  float lane[64] = {};
  for (int b = 0; b < B; ++b) {
    const int64_t nblk = cdiv(v.kvlen(b), a.kv_granularity);
    lane[b % 64] +=
        static_cast<float>(t.tiles_for(v.qlen(b))) * std::sqrt(static_cast<float>(std::max<int64_t>(1, nblk + OV)));
  }
  for (int offset = 32; offset > 0; offset /= 2)
    for (int j = 0; j < offset; ++j) lane[j] += lane[j + offset];
  const long e = std::lrintf(a.split_coef * lane[0]);
  return static_cast<int>(std::clamp<long>(e, 1, NS));
}

}  // namespace

void AiterV1Args::validate() const {
  if (num_cu <= 0) throw InputError("num_cu", "must be >= 1, got " + std::to_string(num_cu));
  if (!fast_mode || intra_batch_mode)
    throw InputError("fast_mode", "only fast_mode=true without intra_batch_mode (the v1.2 planner) is modelled");
  if (num_heads_k <= 0 || num_heads_k > num_cu)
    throw InputError("num_heads_k", "must be 1.." + std::to_string(num_cu) + ", got " + std::to_string(num_heads_k));
  if (num_heads_per_head_k <= 0)
    throw InputError("num_heads_per_head_k", "must be >= 1, got " + std::to_string(num_heads_per_head_k));
  if (max_split_per_batch == 0 || max_split_per_batch < -1)
    throw InputError("max_split_per_batch", "must be -1 (auto) or >= 1, got " + std::to_string(max_split_per_batch));
  if (!is_power_of_two(page_size))
    throw InputError("page_size", "must be a power of two (1, 2, 4, ...), got " + std::to_string(page_size));
  if (!is_power_of_two(kv_granularity))
    throw InputError("kv_granularity",
                     "must be a power of two (16, 32, 64, ...), got " + std::to_string(kv_granularity));
  if (max_seqlen_qo <= 0)
    throw InputError("max_seqlen_qo",
                     "must be >= 1 (pass the largest query length), got " + std::to_string(max_seqlen_qo));
  if (seqlens_kv_indptr.size() < 2)
    throw InputError("seqlens_kv_indptr", "the batch is empty: need at least 2 entries");
  const size_t B = seqlens_kv_indptr.size() - 1;
  if (seqlens_kv_indptr[0] != 0)
    throw InputError("seqlens_kv_indptr",
                     "must start at 0 (the serial planner assumes it), got " + std::to_string(seqlens_kv_indptr[0]));
  for (size_t i = 0; i < B; ++i)
    if (seqlens_kv_indptr[i + 1] <= seqlens_kv_indptr[i])
      throw InputError("seqlens_kv_indptr", "must increase strictly (every request needs >= 1 page); entry " +
                                                std::to_string(i + 1) + " is " +
                                                std::to_string(seqlens_kv_indptr[i + 1]));
  if (seqlens_qo_indptr.size() != B + 1)
    throw InputError("seqlens_qo_indptr", "must have " + std::to_string(B + 1) + " entries (batch + 1), got " +
                                              std::to_string(seqlens_qo_indptr.size()));
  if (seqlens_qo_indptr[0] != 0) throw InputError("seqlens_qo_indptr", "must start at 0");
  for (size_t i = 0; i < B; ++i) {
    const int q = seqlens_qo_indptr[i + 1] - seqlens_qo_indptr[i];
    if (q <= 0 || q > max_seqlen_qo)
      throw InputError("seqlens_qo_indptr", "request " + std::to_string(i) + " has " + std::to_string(q) +
                                                " query rows; each needs 1..max_seqlen_qo (" +
                                                std::to_string(max_seqlen_qo) + ")");
    if (uni_seqlen_qo > 0 && q != uni_seqlen_qo)
      throw InputError("uni_seqlen_qo", std::to_string(uni_seqlen_qo) + " disagrees with request " + std::to_string(i) +
                                            "'s " + std::to_string(q) + " query rows");
  }
  if (page_size > 1) {
    if (kv_last_page_lens.size() != B)
      throw InputError("kv_last_page_lens",
                       "must have " + std::to_string(B) + " entries, got " + std::to_string(kv_last_page_lens.size()));
    for (size_t i = 0; i < B; ++i)
      if (kv_last_page_lens[i] < 1 || kv_last_page_lens[i] > page_size)
        throw InputError("kv_last_page_lens", "entry " + std::to_string(i) + " must be 1..page_size (" +
                                                  std::to_string(page_size) + "), got " +
                                                  std::to_string(kv_last_page_lens[i]));
  }
  const KernelTraits t = aiter_kernel_traits(traits_query(*this));
  if (!t.supported) {
    const auto ok = supported_head_counts(traits_query(*this));
    throw InputError("heads", std::to_string(num_heads_per_head_k * num_heads_k) + " q heads are not supported on " +
                                  arch_name(arch) + " with " + std::string(dtype_name(q_dtype)) + "/" +
                                  std::string(dtype_name(kv_dtype)) + " and qlen " + std::to_string(max_seqlen_qo) +
                                  "; supported: " + list(ok));
  }
  if (uni_seqlen_qo <= 0 && t.qk_batch_ratio != 1)
    throw InputError("uni_seqlen_qo", "head folding (" + std::to_string(num_heads_per_head_k) +
                                          " heads) needs a uniform query length; AITER indexes out of range otherwise");
  if (uni_seqlen_qo <= 0 && t.qo_splits)
    throw InputError("uni_seqlen_qo",
                     "query splitting with non-uniform query lengths reads uninitialised memory "
                     "in AITER (its plan is not deterministic); pass a uniform query length");
}

BufferSizes aiter_v1_buffer_sizes(const AiterV1Args& a) {
  const Arch arch = a.arch;
  const int heads = a.num_heads_per_head_k * a.num_heads_k;
  const bool fp8 = a.q_dtype == DType::fp8 && a.kv_dtype == DType::fp8;
  const int occ = (a.experimental && arch == Arch::gfx950 && fp8 && heads * a.max_seqlen_qo == 64) ? 2 : 1;
  const int64_t MS = static_cast<int64_t>(a.num_cu) * occ;
  const int64_t tpb = sizing_tiles_per_batch(arch, a.q_dtype, a.kv_dtype, heads, a.max_seqlen_qo, a.experimental);
  const int64_t Bx = static_cast<int64_t>(a.seqlens_kv_indptr.size()) - 1;
  const int64_t tile_cnt = Bx * tpb;
  const int64_t max_work = (Bx + MS - 1) * tpb;
  if (max_work > kMaxWorksPerPlan)
    throw InputError("works", "aiter-v1 sizes work_info for " + std::to_string(max_work) + " works here, more than " +
                                  std::to_string(kMaxWorksPerPlan) +
                                  ", the most one plan may hold; use fewer requests or shorter query lengths");
  int64_t max_split_tiles = std::min(Bx + MS - 1, 2 * (MS - 1)) * tpb;
  if (a.max_split_per_batch > 0)
    max_split_tiles = std::max(max_split_tiles, tile_cnt + std::min<int64_t>(MS, int64_t{a.max_split_per_batch} * Bx));
  BufferSizes s;
  s.work_indptr = static_cast<int>(MS + 1);
  s.work_info_rows = static_cast<int>(max_work);
  s.reduce_indptr = static_cast<int>(tile_cnt + 1);
  s.reduce_final_map_rows = static_cast<int>(tile_cnt);
  s.reduce_partial_map = static_cast<int>(max_split_tiles);
  return s;
}

Plan plan_aiter_v1(const AiterV1Args& a) {
  a.validate();
  const KernelTraits t = aiter_kernel_traits(traits_query(a));

  // H1-H7.
  const int B0 = static_cast<int>(a.seqlens_kv_indptr.size()) - 1;
  const int R = t.qk_batch_ratio;
  const int B = B0 * R;
  const int NC = a.num_cu * t.cluster_multiplier / a.num_heads_k;
  int NS = a.max_split_per_batch < 0 ? NC : static_cast<int>(std::min<int64_t>(NC, int64_t{a.max_split_per_batch} * B));
  const int OV = std::max<int>(1, static_cast<int>(cdiv(16, a.page_size)));
  const int THR = a.max_seqlen_qo;
  const int G = a.kv_granularity;
  const bool QS = t.qo_splits;
  const BatchView v{a, R, a.uni_seqlen_qo};

  Plan plan;
  plan.kernel = KernelKind::persistent;
  plan.num_requests = B0;
  plan.num_heads = a.num_heads_per_head_k * a.num_heads_k;
  plan.buffers = aiter_v1_buffer_sizes(a);
  plan.derived = PlanDerived{B, t.heads_eff, NC, NS, R, OV, THR, a.uni_seqlen_qo};

  // G is a power of two (validated): granule counts use a shift, which keeps the fill loop free of divisions.
  const int log2_g = std::countr_zero(static_cast<unsigned>(G));
  auto granules = [&](int64_t pages) { return (pages + G - 1) >> log2_g; };

  // P1, P2.
  int64_t sum_blocks = 0;
  for (int b = 0; b < B; ++b) sum_blocks += (granules(v.kvlen(b)) + OV) * t.tiles_for(v.qlen(b));
  const int NS_eff = adaptive_budget(a, t, v, B, OV, NS, sum_blocks);
  const int64_t payload = cdiv(sum_blocks, NS_eff) + OV;
  plan.model = PlanModel{sum_blocks, payload, t.packed_qo_len_per_wg, QS, 0, 0};
  if (NS_eff != NS) plan.derived.num_splits = NS_eff;

  // Output buffers (AITER writes into caller-sized buffers; grow only if the planner would overrun them).
  plan.work_indptr.assign(static_cast<size_t>(std::max(plan.buffers.work_indptr, NC + 1)), kUnwritten);
  plan.works.reserve(static_cast<size_t>(plan.buffers.work_info_rows));
  plan.reduce_indptr.reserve(static_cast<size_t>(plan.buffers.reduce_indptr));
  plan.reduce_final_map.reserve(static_cast<size_t>(plan.buffers.reduce_final_map_rows));
  plan.reduce_partial_map.reserve(static_cast<size_t>(plan.buffers.reduce_partial_map));

  // P3.
  int b = 0, t_idx = 0, sub = 0;
  int64_t blk = 0;
  int nsplit = 0;
  int64_t kb = 0, ke = v.kvlen(0);
  int32_t pidx = 0;
  int ntile = 0;
  int32_t lri = 0;
  bool tail = false;
  plan.work_indptr[0] = 0;
  plan.reduce_indptr.push_back(0);

  // Per-batch values, refreshed when the fill moves to the next batch.
  int tiles_cur = t.tiles_for(v.qlen(0));
  int tsz_cur = t.tile_rows_for(v.qlen(0));
  int64_t tile_granules = granules(ke - kb);
  auto enter_batch = [&] {
    tiles_cur = t.tiles_for(v.qlen(b));
    tsz_cur = t.tile_rows_for(v.qlen(b));
    tile_granules = granules(ke - kb);
  };

  // make(kv_cap, closing) for the current (b, t_idx).
  auto make = [&](int64_t kv_cap, bool closing) {
    const int T = tiles_cur;
    const int size = tsz_cur;
    const int qs = v.qbeg(b) + t_idx * size;
    const int qe = std::min(qs + size, v.qend(b));
    const int64_t ks = kb + blk * G;
    int64_t kend, koff;
    if (a.page_size == 1) {
      int64_t bt = a.is_cp_round_robin ? 0 : T - 1 - t_idx;
      if (R != 1) bt = T - ((qs / R) % a.uni_seqlen_qo) - 1;
      bt = a.is_causal ? std::max<int64_t>(bt, 0) : 0;
      kend = std::min(ks + kv_cap * G, ke - bt);
      if (closing) {
        if ((0 < ke - kend && ke - kend < THR) || tail) kend = std::min(ke - bt, ke);
      } else if (ke - kend < THR) {
        tail = true;
        ++plan.model.tail_done_events;
        kend = std::min(ke, ke - bt);
      }
      koff = ke - kend;
    } else {
      kend = std::min(ks + kv_cap * G, ke);
      const int bo = b / R;
      koff = kend == ke ? 0 : (ke - kend - 1) * a.page_size + a.kv_last_page_lens[bo];
    }
    return WorkInfo{b, -1, qs, qe, static_cast<int32_t>(ks), static_cast<int32_t>(kend), static_cast<int32_t>(koff), 0};
  };

  for (int cid = 0; cid < NC; ++cid) {         // P4
    int64_t remain = payload;                  // P5
    while (b < B) {                            // P6
      const int64_t rb = tile_granules - blk;  // P7
      if (remain >= rb + OV || tail) {         // P8: the rest of the tile closes here
        WorkInfo w = make(rb, true);
        if (nsplit > 0) {  // P10
          const int size = tsz_cur;
          w.partial_qo_loc = pidx;
          plan.reduce_indptr.push_back(lri + nsplit + 1);
          plan.reduce_final_map.push_back({w.qo_start, w.qo_end});
          for (int s = 0; s <= nsplit; ++s) plan.reduce_partial_map.push_back(pidx - (nsplit - s) * size);
          pidx += size;
          lri += nsplit + 1;
        } else {
          w.partial_qo_loc = -1;
          plan.reduce_indptr.push_back(lri);
          plan.reduce_final_map.push_back({kUnwritten, kUnwritten});
        }
        plan.works.push_back(w);
        ++ntile;
        remain -= rb + OV;                                 // P11
        t_idx = (t_idx == tiles_cur - 1) ? 0 : t_idx + 1;  // P12
        if (!QS || t_idx == 0) {                           // P13
          ++b;
          sub = (sub + 1) % R;
          if (b < B) {
            if (sub == 0) {
              kb = ke;
              ke = kb + v.kvlen(b);
            }
            blk = 0;
            nsplit = 0;
            tail = false;
            enter_batch();
          }
        } else {
          blk = 0;
          nsplit = 0;
          tail = false;
        }
      } else {  // P14: fill this cluster with a fragment
        if (remain > OV) {
          const int64_t c = remain - OV;
          WorkInfo w = make(c, false);
          w.partial_qo_loc = pidx;
          if (!tail) {
            plan.works.push_back(w);
            pidx += tsz_cur;
            blk += c;
            ++nsplit;
          }
        }
        if (!tail) break;
      }
    }
    plan.work_indptr[cid + 1] = static_cast<int32_t>(plan.works.size());  // P15
  }

  // Tiles the clusters never reached (not seen in AITER's data; kept visible rather than hidden).
  if (b < B) {
    int left = 0;
    for (int bb = b; bb < B; ++bb) left += t.tiles_for(v.qlen(bb));
    plan.model.unassigned_tiles = left - t_idx;
  }

  // P16: the rest of reduce_indptr repeats the partial count; the final map keeps its unwritten rows.
  plan.set_num_tiles(ntile);
  const size_t indptr_len = std::max<size_t>(plan.buffers.reduce_indptr, plan.reduce_indptr.size());
  plan.reduce_indptr.resize(indptr_len, lri);
  const size_t final_rows = std::max<size_t>(plan.buffers.reduce_final_map_rows, plan.reduce_final_map.size());
  plan.reduce_final_map.resize(final_rows, {kUnwritten, kUnwritten});
  plan.rows_per_partial = t.tile_rows_for(a.max_seqlen_qo);
  return plan;
}

}  // namespace mlasim::sim
