#include "mlasim/gui/text_format.h"

#include <cmath>

namespace mlasim::gui {

QString format_us(double us) {
  const double a = std::abs(us);
  const int decimals = a < 10 ? 2 : a < 1000 ? 1 : 0;
  return QString::number(us, 'f', decimals) + QStringLiteral(" µs");
}

QString format_tick_us(double t_us, double step_us) {
  const int decimals = step_us >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step_us) - 1e-9));
  return QString::number(t_us, 'f', std::clamp(decimals, 0, 6));
}

QString lane_summary(const sim::Metrics& m, int rows) {
  return QStringLiteral("kernel %1 (stage 1 %2 + reduce %3) · %4/%5 CUs busy · %6 works, %7 partials")
      .arg(format_us(m.kernel_us), QString::number(m.stage1_us, 'f', 1), QString::number(m.reduce_us, 'f', 1))
      .arg(m.active_clusters)
      .arg(rows)
      .arg(m.num_works)
      .arg(m.num_partials);
}

QString measured_lane_title(const TimelineLane& lane) {
  const validate::MeasuredTimeline& m = *lane.measured->timeline;
  const sim::Timeline& tl = lane.timeline();
  QString title = QStringLiteral("measured  %1").arg(QString::fromStdString(m.kernel));
  if (!m.device.empty()) title += QStringLiteral(" on %1").arg(QString::fromStdString(m.device));
  title += QStringLiteral("   stage 1 %1 + reduce %2 · %3 CUs with work · %4 works")
               .arg(format_us(tl.stage1_us), format_us(tl.reduce_us))
               .arg(tl.rows.size())
               .arg(lane.measured->check->comparison.works.size());
  if (m.kernel_us > 0) title += QStringLiteral(" · kernel %1 without stamps").arg(format_us(m.kernel_us));
  return title;
}

QString uplift_text(double speedup) {
  if (!(speedup > 0)) return {};
  const double pct = (speedup - 1) * 100;
  if (std::abs(pct) < 0.05) return QStringLiteral("B vs A: the same kernel time");
  return QStringLiteral("B vs A: %1x %2 in kernel time (%3%4%)")
      .arg(QString::number(speedup >= 1 ? speedup : 1 / speedup, 'f', 2), QString(speedup >= 1 ? "faster" : "slower"),
           QString(pct >= 0 ? "+" : ""), QString::number(pct, 'f', 1));
}

namespace {

QString signed_number(double value, int decimals) {
  return QString(value >= 0 ? "+" : "") + QString::number(value, 'f', decimals);
}

QString measured_tooltip(const TimelineLane& lane, const TimelineLayout::Hit& hit) {
  const sim::Timeline& tl = lane.timeline();
  if (hit.reduce) {
    const sim::ReduceBox& r = tl.reduce[static_cast<size_t>(hit.index)];
    return QStringLiteral("measured · reduce block %1 on CU %2\n%3 → %4 (%5)")
        .arg(r.block)
        .arg(r.cu)
        .arg(format_us(r.begin_us), format_us(r.end_us), format_us(r.end_us - r.begin_us));
  }
  const sim::TimelineBox& b = tl.rows[static_cast<size_t>(hit.row)][static_cast<size_t>(hit.index)];
  QString tip =
      QStringLiteral(
          "measured · CU %1 · work %2\nrequest %3, %4\nkv pages [%5, %6) = %7 pages\n"
          "measured %8 → %9 (%10; fixed part to %11)")
          .arg(lane.measured->row_cu[static_cast<size_t>(hit.row)])
          .arg(b.work)
          .arg(b.request)
          .arg(b.partial ? QStringLiteral("partial") : QStringLiteral("final output"))
          .arg(b.kv_start)
          .arg(b.kv_end)
          .arg(b.kv_end - b.kv_start)
          .arg(format_us(b.begin_us), format_us(b.end_us), format_us(b.end_us - b.begin_us), format_us(b.stream_us));
  if (const validate::WorkComparison* c = lane.measured->comparison(b.work)) {
    const double error = c->duration_error_pct();
    tip += QStringLiteral("\npredicted %1 → %2 (%3)\nduration error %4 % (%5), start error %6 µs")
               .arg(format_us(c->predicted_begin_us), format_us(c->predicted_end_us),
                    format_us(c->predicted_end_us - c->predicted_begin_us), signed_number(error, 1),
                    error >= 0 ? QStringLiteral("predicted too slow") : QStringLiteral("predicted too fast"),
                    signed_number(c->start_error_us(), 2));
  }
  return tip;
}

}  // namespace

QString box_tooltip(const TimelineScene& scene, const TimelineLayout::Hit& hit) {
  const TimelineLane& lane = scene.lanes[static_cast<size_t>(hit.lane)];
  if (lane.kind == LaneKind::measured) return measured_tooltip(lane, hit);
  const sim::Timeline& tl = lane.timeline();
  if (hit.reduce) {
    const sim::ReduceBox& r = tl.reduce[static_cast<size_t>(hit.index)];
    if (r.scope_merge)
      return QStringLiteral(
                 "%1 · scope merge of query token %2 (head %3)\n%4 scope streams joined by LSE, the sink "
                 "folded, on CU %5\n%6 → %7 (%8)")
          .arg(lane.name)
          .arg(r.tile)
          .arg(r.head)
          .arg(r.partials)
          .arg(r.cu)
          .arg(format_us(r.begin_us), format_us(r.end_us), format_us(r.end_us - r.begin_us));
    return QStringLiteral(
               "%1 · reduce tile %2 of request %3 (head %4)\n%5 partials merged (%6) on CU %7, block %8\n"
               "%9 → %10 (%11)")
        .arg(lane.name)
        .arg(r.tile)
        .arg(r.request)
        .arg(r.head)
        .arg(r.partials)
        .arg(QString(r.massive ? "LDS pass" : "simple"))
        .arg(r.cu)
        .arg(r.block)
        .arg(format_us(r.begin_us), format_us(r.end_us), format_us(r.end_us - r.begin_us));
  }
  const sim::TimelineBox& b = tl.rows[static_cast<size_t>(hit.row)][static_cast<size_t>(hit.index)];
  const sim::WorkInfo& w = lane.plan->works[static_cast<size_t>(b.work)];
  const int per_cu = std::max(1, tl.rows_per_cu);
  const QString where = per_cu > 1 ? QStringLiteral("CU %1 slot %2").arg(hit.row / per_cu).arg(hit.row % per_cu)
                                   : QStringLiteral("CU %1").arg(hit.row);
  return QStringLiteral(
             "%1 · %2 · work %3\nrequest %4 (batch_idx %5), %6\nqo rows [%7, %8), kv pages [%9, %10) = %11 pages\n"
             "%12 → %13 (%14; fixed part to %15)")
      .arg(lane.name, where)
      .arg(b.work)
      .arg(b.request)
      .arg(w.batch_idx)
      .arg(w.is_partial() ? QStringLiteral("partial row %1").arg(w.partial_qo_loc) : QStringLiteral("final output"))
      .arg(w.qo_start)
      .arg(w.qo_end)
      .arg(w.kv_start)
      .arg(w.kv_end)
      .arg(w.kv_pages())
      .arg(format_us(b.begin_us), format_us(b.end_us), format_us(b.end_us - b.begin_us), format_us(b.stream_us));
}

QString validation_tooltip(const validate::PreparedRow& row, const ValidationPoint& point) {
  const validate::MeasurementRow& r = row.row;
  const QString context =
      r.context ? QString::number(*r.context) : QStringLiteral("ragged (mean %1)").arg(point.mean_context, 0, 'f', 0);
  const double err = point.error_pct();
  return QStringLiteral(
             "line %1: %2\nbatch %3, context %4, %5 heads, qlen %6\n%7/%8, page %9, clusters %10, %11\n"
             "measured %12, predicted %13 (%14%15 %)")
      .arg(r.line)
      .arg(QString::fromStdString(r.policy))
      .arg(r.batch)
      .arg(context)
      .arg(r.heads)
      .arg(r.qo_len)
      .arg(QString::fromStdString(std::string(dtype_name(r.q_dtype))),
           QString::fromStdString(std::string(dtype_name(r.kv_dtype))))
      .arg(r.page_size)
      .arg(r.clusters == 0 ? QStringLiteral("all") : QString::number(r.clusters))
      .arg(QString::fromStdString(point.kernel_class), format_us(point.measured_us), format_us(point.predicted_us),
           QString(err >= 0 ? "+" : ""), QString::number(err, 'f', 1));
}

}  // namespace mlasim::gui
