#include "mlasim/gui/sweep_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace mlasim::gui {
namespace {

// Kernel time of every (batch, context, policy) point of the sweep.
std::map<std::tuple<int, int, int>, double> times_of(const sim::SweepResult& r) {
  std::map<std::tuple<int, int, int>, double> t;
  for (size_t i = 0; i < r.points.size(); ++i)
    t[{r.points[i].batch, r.points[i].context, r.points[i].policy}] = r.metrics[i].kernel_us;
  return t;
}

template <typename F>
std::vector<int> distinct(const sim::SweepResult& r, F field) {
  std::vector<int> v;
  for (const auto& p : r.points) v.push_back(field(p));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::vector<int> log_spaced(int from, int to, int points) {
  std::vector<int> out;
  from = std::max(1, from);
  to = std::max(from, to);
  points = std::max(1, points);
  for (int i = 0; i < points; ++i) {
    const double f = points == 1 ? 0 : double(i) / (points - 1);
    const int v = static_cast<int>(std::lround(std::exp(std::log(from) + f * (std::log(to) - std::log(from)))));
    if (out.empty() || v > out.back()) out.push_back(v);
  }
  return out;
}

SweepLine sweep_line(const sim::SweepResult& r) {
  SweepLine line;
  const auto batches = distinct(r, [](const sim::SweepPoint& p) { return p.batch; });
  const auto contexts = distinct(r, [](const sim::SweepPoint& p) { return p.context; });
  line.along_batch = contexts.size() == 1 && batches.size() > 1;
  line.x = line.along_batch ? batches : contexts;
  const auto t = times_of(r);
  for (int x : line.x) {
    const int b = line.along_batch ? x : batches.front();
    const int c = line.along_batch ? contexts.front() : x;
    const auto a = t.find({b, c, 0});
    const auto bb = t.find({b, c, 1});
    line.a_us.push_back(a != t.end() ? a->second : NAN);
    line.b_us.push_back(bb != t.end() ? bb->second : NAN);
  }
  return line;
}

std::vector<double> line_crossovers(const SweepLine& line) {
  std::vector<double> out;
  for (size_t i = 1; i < line.x.size(); ++i) {
    const double d0 = line.a_us[i - 1] - line.b_us[i - 1];
    const double d1 = line.a_us[i] - line.b_us[i];
    if (std::isnan(d0) || std::isnan(d1) || d0 == 0 || (d0 > 0) == (d1 > 0)) continue;
    const double f = d0 / (d0 - d1);
    const double lx0 = std::log(line.x[i - 1]), lx1 = std::log(line.x[i]);
    out.push_back(std::exp(lx0 + f * (lx1 - lx0)));
  }
  return out;
}

double SpeedupGrid::speedup(size_t batch, size_t context) const {
  const double bt = b(batch, context);
  return bt > 0 ? a(batch, context) / bt : NAN;
}

SpeedupGrid speedup_grid(const sim::SweepResult& r) {
  SpeedupGrid g;
  g.batches = distinct(r, [](const sim::SweepPoint& p) { return p.batch; });
  g.contexts = distinct(r, [](const sim::SweepPoint& p) { return p.context; });
  const auto t = times_of(r);
  for (int b : g.batches)
    for (int c : g.contexts) {
      const auto a = t.find({b, c, 0});
      const auto bb = t.find({b, c, 1});
      g.a_us.push_back(a != t.end() ? a->second : NAN);
      g.b_us.push_back(bb != t.end() ? bb->second : NAN);
    }
  return g;
}

std::vector<CellEdge> crossover_edges(const SpeedupGrid& g) {
  std::vector<CellEdge> edges;
  // A cell's side: +1 where B is faster, -1 where slower, 0 for a tie or no value.
  const auto side = [&](size_t i, size_t j) {
    const double s = g.speedup(i, j);
    return std::isnan(s) || s == 1.0 ? 0 : s > 1.0 ? 1 : -1;
  };
  for (size_t i = 0; i < g.batches.size(); ++i)
    for (size_t j = 0; j < g.contexts.size(); ++j) {
      const int here = side(i, j);
      if (here == 0) continue;
      const double x = static_cast<double>(j), y = static_cast<double>(i);
      if (j + 1 < g.contexts.size() && side(i, j + 1) == -here) edges.push_back({x + 1, y, x + 1, y + 1});
      if (i + 1 < g.batches.size() && side(i + 1, j) == -here) edges.push_back({x, y + 1, x + 1, y + 1});
    }
  return edges;
}

}  // namespace mlasim::gui
