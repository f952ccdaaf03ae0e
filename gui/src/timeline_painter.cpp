#include "mlasim/gui/timeline_painter.h"

#include <QFontMetrics>
#include <QVector>
#include <algorithm>
#include <array>
#include <cmath>

#include "mlasim/gui/text_format.h"

namespace mlasim::gui {
namespace {

// Tableau 10: distinct at a glance, and still distinct for the common colour-vision deficiencies.
constexpr std::array<QRgb, 10> kPalette = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                           0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};

QColor mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                          static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                          static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

// A step of 1, 2 or 5 x 10^k that puts ticks at least `min_px` apart.
double tick_step(double span_us, double width_px, double min_px) {
  const double raw = span_us * min_px / std::max(1.0, width_px);
  const double decade = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-9))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

// Collects one row's boxes as pixel rectangles, merging runs of sub-pixel boxes (level of detail), into
// per-colour buckets so each colour costs one drawRects call. A bucket (key) is a request's final or split-fragment
// fill, then a measured work's error step (body or fixed part, lit or faded), then the measured reduce.
class RectBatcher {
 public:
  RectBatcher(int num_requests, int selected)
      : num_requests_(static_cast<size_t>(std::max(1, num_requests))),
        buckets_(num_requests_ * 2 + 4 * kErrorSteps + 1),
        selected_(selected) {}

  size_t request_key(int request, bool partial) const {
    return static_cast<size_t>(std::max(0, request)) % num_requests_ * 2 + (partial ? 1 : 0);
  }
  // Drawn after every request and body key, the fixed parts land on top of their works.
  size_t error_key(double error_pct, bool fixed_part, bool faded_box) const {
    return num_requests_ * 2 + static_cast<size_t>(((fixed_part ? 2 : 0) + (faded_box ? 1 : 0)) * kErrorSteps) +
           static_cast<size_t>(error_step(error_pct));
  }
  size_t reduce_key() const { return buckets_.size() - 1; }
  bool fades(int request) const { return selected_ >= 0 && request != selected_; }

  void start_row(int y, int height) {
    flush();
    y_ = y;
    h_ = height;
  }

  // Adds a box spanning device x [x0, x1). Returns the pixel the current run of sub-pixel boxes covers up to
  // (exclusive) when this box was narrower than a pixel, else -1: boxes ending before it cannot change the picture.
  int add(double x0, double x1, size_t key, bool selected) {
    const bool narrow = x1 - x0 < 1.0;
    // Wide boxes round both edges (neighbours meet exactly); a narrow one covers every pixel it touches.
    // x is clamped to the plot, so never negative: truncation is floor, and +0.5 then truncation rounds (both
    // without the libm calls floor and lround cost on baseline x86-64, once per box).
    const int ix0 = static_cast<int>(narrow ? x0 : x0 + 0.5);
    int ix1 = narrow ? static_cast<int>(x1) + 1 : static_cast<int>(x1 + 0.5);
    if (narrow && pending_ && ix0 <= pending_x1_) {  // a sub-pixel box touching the run: widen the run
      pending_x1_ = std::max(pending_x1_, ix1);
      return pending_x1_;
    }
    flush();
    if (ix1 - ix0 >= 4) --ix1;  // a one-pixel gap keeps neighbouring boxes of one request apart
    pending_ = true;
    pending_x0_ = ix0;
    pending_x1_ = ix1;
    pending_key_ = key;
    pending_selected_ = selected;
    return narrow ? pending_x1_ : -1;
  }

  void flush() {
    if (!pending_) return;
    const QRect r(pending_x0_, y_, pending_x1_ - pending_x0_, h_);
    buckets_[pending_key_].push_back(r);
    if (pending_selected_) selected_rects_.push_back(r);
    pending_ = false;
  }

  // Fills every bucket; split fragments get the lighter fill plus a hatch in the request's colour.
  void draw(QPainter& p, const QColor& background, bool hatch_partials, bool outline_selected, const QColor& ink) {
    flush();
    p.setPen(Qt::NoPen);
    for (size_t key = 0; key < buckets_.size(); ++key) {
      const auto& rects = buckets_[key];
      if (rects.isEmpty()) continue;
      if (key >= num_requests_ * 2) {
        p.setBrush(measured_fill(key, background));
        p.drawRects(rects.constData(), static_cast<int>(rects.size()));
        continue;
      }
      const int request = static_cast<int>(key / 2);
      const bool partial = key % 2 == 1;
      QColor fill = partial ? partial_fill(request) : request_color(request);
      QColor hatch = request_color(request);
      if (fades(request)) {
        fill = faded(fill, background);
        hatch = faded(hatch, background);
      }
      p.setBrush(fill);
      p.drawRects(rects.constData(), static_cast<int>(rects.size()));
      if (partial && hatch_partials) {
        p.setBrush(QBrush(hatch, Qt::BDiagPattern));
        p.drawRects(rects.constData(), static_cast<int>(rects.size()));
      }
    }
    if (outline_selected && !selected_rects_.isEmpty()) {
      p.setBrush(Qt::NoBrush);
      p.setPen(QPen(ink, 1));
      for (const QRect& r : selected_rects_) p.drawRect(r.adjusted(0, 0, -1, -1));
    }
  }

 private:
  QColor measured_fill(size_t key, const QColor& background) const {
    if (key == reduce_key()) return measured_reduce_color();
    const int index = static_cast<int>(key - num_requests_ * 2);
    const int step = index % kErrorSteps;
    const int variant = index / kErrorSteps;  // fixed part * 2 + faded
    const double error_pct = (step - kErrorSteps / 2) * kErrorStepPct;
    const QColor fill = variant >= 2 ? error_fixed_color(error_pct) : error_color(error_pct);
    return variant % 2 ? faded(fill, background) : fill;
  }

  size_t num_requests_;
  std::vector<QVector<QRect>> buckets_;
  QVector<QRect> selected_rects_;
  int selected_;
  int y_ = 0, h_ = 1;
  bool pending_ = false;
  int pending_x0_ = 0, pending_x1_ = 0;
  size_t pending_key_ = 0;
  bool pending_selected_ = false;
};

// Adds the boxes of `row` that the viewport shows through `add_box` (which returns RectBatcher::add's result),
// jumping over the boxes that end inside pixels already covered (level of detail).
template <class AddBox>
void add_visible_boxes(const TimelineLane& lane, int row, double t0, double t1, double x_offset, double us_per_px,
                       AddBox add_box) {
  const auto& boxes = lane.timeline().rows[static_cast<size_t>(row)];
  size_t i = lane.skip_ended(row, 0, [&](double end) { return end <= t0; });
  while (i < boxes.size() && boxes[i].begin_us <= t1) {
    const int covered = add_box(boxes[i]);
    ++i;
    if (covered < 0 || i == boxes.size()) continue;
    // Most jumps are short, so a few steps come first and a binary search only after them.
    const double covered_us = (covered - x_offset) * us_per_px;
    for (int probe = 0; probe < 8 && i < boxes.size() && boxes[i].end_us < covered_us; ++probe) ++i;
    if (i < boxes.size() && boxes[i].end_us < covered_us)
      i = lane.skip_ended(row, i, [&](double end) { return end < covered_us; });
  }
}

// The error scale beside a measured lane's title, right-aligned in `area`: "too fast -50 %" [steps] "+50 % too
// slow" (the steps alone where the words would take most of the plot's width). Returns the width it took.
int paint_error_legend(QPainter& p, const QRectF& area, const TimelineStyle& style) {
  const QFontMetrics fm(style.font);
  const QString left = QStringLiteral("duration error: too fast −50 %");
  const QString right = QStringLiteral("+50 % too slow");
  constexpr int kStepWidth = 6;
  const int strip = kErrorSteps * kStepWidth;
  const int gap = 5;
  const int words = fm.horizontalAdvance(left) + fm.horizontalAdvance(right) + 2 * gap;
  const bool text = style.text && strip + words < 0.6 * area.width();
  const int width = (text ? words : 0) + strip;
  double x = area.right() - width;
  const double strip_top = area.top() + (area.height() - 10) / 2;
  if (text) {
    p.setPen(style.ink);
    p.drawText(QRectF(x, area.top(), fm.horizontalAdvance(left), area.height()), Qt::AlignVCenter, left);
    x += fm.horizontalAdvance(left) + gap;
  }
  for (int step = 0; step < kErrorSteps; ++step)
    p.fillRect(QRectF(x + step * kStepWidth, strip_top, kStepWidth, 10),
               error_color((step - kErrorSteps / 2) * kErrorStepPct));
  x += strip + gap;
  if (text) p.drawText(QRectF(x, area.top(), fm.horizontalAdvance(right) + 1, area.height()), Qt::AlignVCenter, right);
  return width;
}

}  // namespace

QColor request_color(int request) {
  if (request >= 0 && request < static_cast<int>(kPalette.size()))
    return QColor(kPalette[static_cast<size_t>(request)]);
  // Golden-angle hues never repeat, and alternating saturation and value keeps near hues apart.
  const double hue = std::fmod(request * 137.50776405, 360.0) / 360.0;
  const double sat = request % 2 ? 0.55 : 0.75;
  const double val = request % 3 == 0 ? 0.70 : 0.88;
  return QColor::fromHsvF(static_cast<float>(hue), static_cast<float>(sat), static_cast<float>(val));
}

QColor partial_fill(int request) { return mix(request_color(request), Qt::white, 0.55); }

QColor faded(const QColor& c, const QColor& background) { return mix(c, background, 0.8); }

int error_step(double error_pct) {
  if (std::isnan(error_pct)) return kErrorSteps / 2;  // no error known
  const double clamped = std::clamp(error_pct, -kErrorScalePct, kErrorScalePct);
  return static_cast<int>(std::lround(clamped / kErrorStepPct)) + kErrorSteps / 2;
}

QColor error_color(double error_pct) {
  // ColorBrewer's RdBu ends (readable for the common colour-vision deficiencies); a pale grey middle, not white,
  // keeps well-predicted works visible on the white plot.
  static const QColor too_fast(0x21, 0x66, 0xac), right(0xd9, 0xd9, 0xd9), too_slow(0xb2, 0x18, 0x2b);
  const int offset = error_step(error_pct) - kErrorSteps / 2;
  const double t = std::abs(offset) / static_cast<double>(kErrorSteps / 2);
  return mix(right, offset < 0 ? too_fast : too_slow, t);
}

QColor error_fixed_color(double error_pct) { return mix(error_color(error_pct), Qt::black, 0.45); }

QColor measured_reduce_color() { return QColor(0x7f, 0x7f, 0x86); }

TimelineLayout::TimelineLayout(const TimelineScene& scene, const TimelineStyle& style, const TimelineViewport& viewport)
    : scene_(scene), style_(style), viewport_(viewport) {
  int y = 0;
  for (const auto& lane : scene.lanes) {
    LaneY l;
    l.title = y;
    l.rows = y + style.title_height;
    l.reduce = l.rows + lane.num_rows() * style.row_height + style.reduce_gap;
    y = l.reduce + std::clamp(lane.num_reduce_lines(), 1, kMaxReduceLines) * style.reduce_row_height + style.lane_gap;
    lanes_.push_back(l);
  }
  content_height_ = y;
}

QRectF TimelineLayout::plot_rect() const {
  const double left = style_.header_width;
  const double right = std::max(left + 1, double(viewport_.size.width() - style_.right_margin));
  return QRectF(left, style_.axis_height, right - left, std::max(0, viewport_.size.height() - style_.axis_height));
}

double TimelineLayout::x_of(double t_us) const {
  const QRectF plot = plot_rect();
  const double span = std::max(1e-9, viewport_.t1_us - viewport_.t0_us);
  return plot.left() + (t_us - viewport_.t0_us) / span * plot.width();
}

double TimelineLayout::t_of(double x) const {
  const QRectF plot = plot_rect();
  return viewport_.t0_us + (x - plot.left()) / std::max(1.0, plot.width()) * (viewport_.t1_us - viewport_.t0_us);
}

double TimelineLayout::title_top(int lane) const {
  return style_.axis_height + lanes_[static_cast<size_t>(lane)].title - viewport_.scroll_y;
}

double TimelineLayout::row_top(int lane, int row) const {
  return style_.axis_height + lanes_[static_cast<size_t>(lane)].rows + row * style_.row_height - viewport_.scroll_y;
}

double TimelineLayout::reduce_top(int lane, int line) const {
  return style_.axis_height + lanes_[static_cast<size_t>(lane)].reduce + line * reduce_line_height(lane) -
         viewport_.scroll_y;
}

int TimelineLayout::reduce_lane_height(int lane) const {
  const int lines = scene_.lanes[static_cast<size_t>(lane)].num_reduce_lines();
  return std::clamp(lines, 1, kMaxReduceLines) * style_.reduce_row_height;
}

double TimelineLayout::reduce_line_height(int lane) const {
  const int lines = scene_.lanes[static_cast<size_t>(lane)].num_reduce_lines();
  return static_cast<double>(reduce_lane_height(lane)) / std::max(1, lines);
}

std::optional<TimelineLayout::Hit> TimelineLayout::hit_test(QPointF point) const {
  const QRectF plot = plot_rect();
  if (point.x() < plot.left() || point.x() > plot.right() || point.y() < plot.top()) return std::nullopt;
  const double t = t_of(point.x());
  const double slack_us = 2.0 * (viewport_.t1_us - viewport_.t0_us) / std::max(1.0, plot.width());
  // The box containing t, else one narrower than 3 px within 2 px of it.
  const auto pick = [&](double begin, double end) {
    if (t >= begin && t < end) return 0.0;
    const bool thin = (end - begin) < 1.5 * slack_us;
    const double d = t < begin ? begin - t : t - end;
    return thin && d <= slack_us ? d : -1.0;
  };
  for (size_t l = 0; l < scene_.lanes.size(); ++l) {
    const TimelineLane& lane = scene_.lanes[l];
    const int lane_i = static_cast<int>(l);
    const double rows_top = row_top(lane_i, 0);
    const double row = std::floor((point.y() - rows_top) / style_.row_height);
    if (row >= 0 && row < lane.num_rows()) {
      const auto& boxes = lane.timeline().rows[static_cast<size_t>(row)];
      const int row_i = static_cast<int>(row);
      std::optional<Hit> best;
      double best_d = 1e300;
      // Where boxes overlap (measured), the one that began last is drawn on top and wins a tie.
      for (size_t i = lane.skip_ended(row_i, 0, [&](double end) { return end + slack_us <= t; });
           i < boxes.size() && boxes[i].begin_us - slack_us <= t; ++i) {
        const double d = pick(boxes[i].begin_us, boxes[i].end_us);
        if (d >= 0 && d <= best_d && (d < best_d || lane.kind == LaneKind::measured)) {
          best_d = d;
          best = Hit{lane_i, false, row_i, static_cast<int>(i)};
        }
      }
      return best;
    }
    const double line = std::floor((point.y() - reduce_top(lane_i, 0)) / reduce_line_height(lane_i));
    if (line >= 0 && line < lane.num_reduce_lines()) {
      const auto& reduce = lane.timeline().reduce;
      std::optional<Hit> best;
      double best_d = 1e300;
      for (int i : lane.reduce_lines[static_cast<size_t>(line)]) {
        const double d = pick(reduce[static_cast<size_t>(i)].begin_us, reduce[static_cast<size_t>(i)].end_us);
        if (d >= 0 && d < best_d) {
          best_d = d;
          best = Hit{lane_i, true, static_cast<int>(line), i};
        }
      }
      return best;
    }
  }
  return std::nullopt;
}

void TimelinePainter::paint(QPainter& p, const TimelineScene& scene, const TimelineViewport& viewport,
                            const TimelineStyle& style) {
  const TimelineLayout layout(scene, style, viewport);
  const QRectF plot = layout.plot_rect();
  const int width = viewport.size.width();
  const int height = viewport.size.height();
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setRenderHint(QPainter::TextAntialiasing, true);
  p.setFont(style.font);
  p.fillRect(QRect(0, 0, width, height), style.background);

  const double step = tick_step(viewport.t1_us - viewport.t0_us, plot.width(), 90);
  const double first_tick = std::ceil(viewport.t0_us / step) * step;

  // Content (scrolls under the axis): grid, boxes, stage markers, row labels.
  p.setClipRect(QRectF(0, style.axis_height, width, std::max(0, height - style.axis_height)));
  p.setPen(style.grid);
  for (double t = first_tick; t <= viewport.t1_us; t += step) {
    const int x = static_cast<int>(std::lround(layout.x_of(t)));
    p.drawLine(x, style.axis_height, x, height);
  }

  const double visible_top = style.axis_height;
  const double visible_bottom = height;
  RectBatcher batcher(scene.num_requests, style.selected_request);
  const double x_scale = plot.width() / std::max(1e-12, viewport.t1_us - viewport.t0_us);
  const double x_offset = plot.left() - viewport.t0_us * x_scale;
  const double us_per_px = 1.0 / x_scale;
  const auto clamp_x = [&](double t) { return std::clamp(t * x_scale + x_offset, plot.left(), plot.right()); };
  for (size_t l = 0; l < scene.lanes.size(); ++l) {
    const TimelineLane& lane = scene.lanes[l];
    const int lane_i = static_cast<int>(l);
    const sim::Timeline& tl = lane.timeline();
    const double rows_top = layout.row_top(lane_i, 0);
    const int first_row = std::max(0, static_cast<int>(std::floor((visible_top - rows_top) / style.row_height)));
    const int last_row =
        std::min(lane.num_rows() - 1, static_cast<int>(std::floor((visible_bottom - rows_top) / style.row_height)));
    for (int row = first_row; row <= last_row; ++row) {
      const int top = static_cast<int>(std::lround(layout.row_top(lane_i, row)));
      batcher.start_row(top, style.row_height);
      if (lane.kind == LaneKind::predicted) {
        add_visible_boxes(
            lane, row, viewport.t0_us, viewport.t1_us, x_offset, us_per_px, [&](const sim::TimelineBox& b) {
              return batcher.add(clamp_x(b.begin_us), clamp_x(b.end_us), batcher.request_key(b.request, b.partial),
                                 b.request == style.selected_request);
            });
        continue;
      }
      // Measured: each work in its error's colour, then, over it, its fixed part darker.
      const MeasuredLaneFacts& facts = *lane.measured;
      add_visible_boxes(lane, row, viewport.t0_us, viewport.t1_us, x_offset, us_per_px, [&](const sim::TimelineBox& b) {
        return batcher.add(clamp_x(b.begin_us), clamp_x(b.end_us),
                           batcher.error_key(facts.duration_error_pct(b.work), false, batcher.fades(b.request)),
                           b.request == style.selected_request);
      });
      batcher.start_row(top, style.row_height);
      add_visible_boxes(lane, row, viewport.t0_us, viewport.t1_us, x_offset, us_per_px, [&](const sim::TimelineBox& b) {
        if (b.stream_us <= b.begin_us) return -1;
        return batcher.add(clamp_x(b.begin_us), clamp_x(b.stream_us),
                           batcher.error_key(facts.duration_error_pct(b.work), true, batcher.fades(b.request)), false);
      });
    }
    for (int line = 0; line < lane.num_reduce_lines(); ++line) {
      // Thin lines (many reduce blocks) still get a pixel each; later lines draw over earlier ones.
      const int top = static_cast<int>(std::lround(layout.reduce_top(lane_i, line)));
      const int bottom = std::max(top + 1, static_cast<int>(std::lround(layout.reduce_top(lane_i, line + 1))));
      if (bottom < visible_top || top > visible_bottom) continue;
      batcher.start_row(top, bottom - top);
      for (int i : lane.reduce_lines[static_cast<size_t>(line)]) {
        const sim::ReduceBox& r = tl.reduce[static_cast<size_t>(i)];
        if (r.end_us <= viewport.t0_us || r.begin_us > viewport.t1_us) continue;
        // The scope merge of a two-scope run is grey like a measured reduce: it belongs to a token, not a stream.
        const size_t key = lane.kind == LaneKind::measured || r.scope_merge ? batcher.reduce_key()
                                                                            : batcher.request_key(r.request, false);
        batcher.add(clamp_x(r.begin_us), clamp_x(r.end_us), key, false);
      }
    }
  }
  batcher.draw(p, style.background, style.hatch, std::min(style.row_height, style.reduce_row_height) >= 4, style.ink);

  // The end of stage 1 (where the reduce begins), dashed through each lane.
  for (size_t l = 0; l < scene.lanes.size(); ++l) {
    const TimelineLane& lane = scene.lanes[l];
    const double x = layout.x_of(lane.timeline().stage1_us);
    if (x < plot.left() || x > plot.right()) continue;
    const int lane_i = static_cast<int>(l);
    p.setPen(QPen(style.stage_marker, 1, Qt::DashLine));
    const int xi = static_cast<int>(std::lround(x));
    p.drawLine(xi, static_cast<int>(layout.row_top(lane_i, 0)), xi,
               static_cast<int>(layout.reduce_top(lane_i, 0) + layout.reduce_lane_height(lane_i)));
  }

  // Header column and lane titles.
  p.fillRect(QRectF(0, style.axis_height, style.header_width, height - style.axis_height), style.header_background);
  const QFontMetrics fm(style.font);
  for (size_t l = 0; l < scene.lanes.size(); ++l) {
    const TimelineLane& lane = scene.lanes[l];
    const int lane_i = static_cast<int>(l);
    const QRectF title(0, layout.title_top(lane_i), width, style.title_height);
    if (title.bottom() >= visible_top && title.top() <= visible_bottom) {
      p.fillRect(title, style.header_background);
      const QRectF plot_title(plot.left(), title.top(), plot.width(), title.height());
      const int legend = lane.kind == LaneKind::measured ? paint_error_legend(p, plot_title, style) + 12 : 0;
      if (style.text) {
        p.setPen(style.ink);
        QFont bold = style.font;
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(title.adjusted(6, 0, -6, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   QFontMetrics(bold).elidedText(
                       lane.title, Qt::ElideRight,
                       static_cast<int>(legend > 0 ? plot_title.right() - legend : title.width()) - 12));
        p.setFont(style.font);
      }
    }
    if (!style.text) continue;
    p.setPen(style.ink);
    // Row labels every 2^k rows, at least a text line apart.
    // Grid plans have several rows (slots) per CU; labels then name the CU at its first slot.
    const int per_cu = std::max(1, lane.timeline().rows_per_cu);
    int every = per_cu;
    while (every * style.row_height < fm.height()) every *= 2;
    for (int row = 0; row < lane.num_rows(); row += every) {
      const double y = layout.row_top(lane_i, row);
      if (y < visible_top - fm.height() || y > visible_bottom) continue;
      // Measured rows are the CUs that ran work, by id: the label names the CU, not the row.
      const int cu = lane.measured ? lane.measured->row_cu[static_cast<size_t>(row)] : row / per_cu;
      p.drawText(QRectF(0, y - fm.height() / 2.0 + style.row_height / 2.0, style.header_width - 8, fm.height()),
                 Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("CU %1").arg(cu));
    }
    const double reduce_y = layout.reduce_top(lane_i, 0);
    const double reduce_h = layout.reduce_lane_height(lane_i);
    if (reduce_y + reduce_h >= visible_top && reduce_y <= visible_bottom)
      p.drawText(QRectF(0, reduce_y + reduce_h / 2 - fm.height() / 2.0, style.header_width - 8, fm.height()),
                 Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("reduce (%1)").arg(lane.timeline().reduce.size()));
  }

  // The time axis, drawn last so the rows scroll under it.
  p.setClipping(false);
  p.fillRect(QRectF(0, 0, width, style.axis_height), style.header_background);
  p.setPen(style.ink);
  p.drawLine(QPointF(plot.left(), style.axis_height - 1), QPointF(plot.right(), style.axis_height - 1));
  for (double t = first_tick; t <= viewport.t1_us; t += step) {
    const int x = static_cast<int>(std::lround(layout.x_of(t)));
    p.drawLine(x, style.axis_height - 5, x, style.axis_height - 1);
    if (style.text) p.drawText(QRectF(x - 45, 0, 90, style.axis_height - 6), Qt::AlignCenter, format_tick_us(t, step));
  }
  if (style.text)
    p.drawText(QRectF(6, 0, style.header_width - 12, style.axis_height - 2), Qt::AlignVCenter | Qt::AlignLeft,
               QStringLiteral("time (µs)"));
  p.restore();
}

}  // namespace mlasim::gui
