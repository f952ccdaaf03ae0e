#include "mlasim/model/l2_prior_writes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlasim {

L2PriorWrites l2_prior_writes_of(const CostParams& p) {
  const L2PriorWrites law{p.l2_prior_writes_us_per_mb, p.l2_prior_writes_rho_mb, p.l2_prior_writes_gamma,
                          p.l2_prior_writes_max_us, p.l2_prior_writes_cap_mb};
  return law.known() ? law : L2PriorWrites{};
}

L2PriorWrites l2_prior_writes_of(const CostParams& p, KernelClassId cls, int active_clusters, bool split, bool* own) {
  const KernelClassParams c = p.resolved(cls);
  const L2PriorWrites law{c.prior_writes_us_per_mb_per_cluster * std::max(active_clusters, 0), c.prior_writes_rho_mb,
                          c.prior_writes_gamma, std::numeric_limits<double>::infinity(), c.prior_writes_cap_mb};
  const bool class_law = !split && law.known();
  if (own) *own = class_law;
  return class_law ? law : l2_prior_writes_of(p);
}

L2PriorWrites l2_copy_prior_writes_of(const CostParams& p, double copy_mb) {
  const L2PriorWrites law{p.l2_copy_prior_writes_us_per_mb_per_copy_mb * std::max(copy_mb, 0.0),
                          p.l2_copy_prior_writes_rho_mb, p.l2_copy_prior_writes_gamma,
                          std::numeric_limits<double>::infinity(), p.l2_copy_prior_writes_cap_mb};
  return law.known() ? law : L2PriorWrites{};
}

double l2_prior_writes_us(std::span<const OpBytes> ops, const L2PriorWrites& law) {
  if (!law.known()) return 0;
  double total = 0, after = 0;  // `after` weighs writes by gamma, where the walk's touched MB counts every MB
  for_each_chunk_back(ops, law.cap_mb, [&](double r, double w, double touched) {
    if (w > 0 && touched + w <= law.cap_mb) total += w * law.us_per_mb * std::exp(after / law.rho_mb);
    after += r + law.gamma * w;
  });
  return std::min(law.max_us, total);
}

}  // namespace mlasim
