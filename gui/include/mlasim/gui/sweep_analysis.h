#pragma once
// What the sweep view draws, read out of a sim::SweepResult of two policies (A = 0, B = 1): kernel time along one
// axis, B's speedup over batch x context, and where B and A cross.
#include <vector>

#include "mlasim/sim/sweep.h"

namespace mlasim::gui {

// `points` integers from `from` to `to`, evenly spaced in log, without repeats (fewer when the range is narrow).
std::vector<int> log_spaced(int from, int to, int points);

// Kernel times of A and B along batch (if the sweep has one context) or along context.
struct SweepLine {
  bool along_batch = false;
  std::vector<int> x;
  std::vector<double> a_us, b_us;
};
SweepLine sweep_line(const sim::SweepResult& r);

// Where the A and B curves cross, interpolated linearly in log x: the x values.
std::vector<double> line_crossovers(const SweepLine& line);

// B's speedup (A time / B time) per (batch, context) cell; row-major over batches.
struct SpeedupGrid {
  std::vector<int> batches, contexts;
  std::vector<double> a_us, b_us;
  double speedup(size_t batch, size_t context) const;
  double a(size_t batch, size_t context) const { return a_us[batch * contexts.size() + context]; }
  double b(size_t batch, size_t context) const { return b_us[batch * contexts.size() + context]; }
};
SpeedupGrid speedup_grid(const sim::SweepResult& r);

// The crossover as cell edges between neighbours on opposite sides of speedup 1, in cell units: x = context
// index, y = batch index, the cell (i, j) spanning [j, j+1] x [i, i+1].
struct CellEdge {
  double x0, y0, x1, y1;
};
std::vector<CellEdge> crossover_edges(const SpeedupGrid& g);

}  // namespace mlasim::gui
