#include "mlasim/sim/reduce_graph.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/range/iterator_range.hpp>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace mlasim::sim {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// Vertex numbering: works [0, W), tiles [W, W+T), one output per tile [W+T, W+2T), one per final work after.
struct Layout {
  int works, tiles;
  int tile(int t) const { return works + t; }
  int tile_output(int t) const { return works + tiles + t; }
  int final_output(int k) const { return works + 2 * tiles + k; }
};

}  // namespace

CriticalPath reduce_critical_path(const ReduceGraphInput& in) {
  const int W = static_cast<int>(in.work_us.size());
  const int T = static_cast<int>(in.tile_us.size());
  if (in.previous_work.size() != in.work_us.size() || in.work_tile.size() != in.work_us.size())
    throw std::invalid_argument("reduce_critical_path: work spans differ in length");
  const Layout L{W, T};

  std::vector<int> next_work(static_cast<size_t>(W), -1);
  for (int w = 0; w < W; ++w) {
    const int p = in.previous_work[w];
    if (p >= W || p == w) throw std::invalid_argument("reduce_critical_path: bad previous_work");
    if (p >= 0) next_work[p] = w;
  }

  // Edges come out sorted by source (works in order, then tiles), as the CSR constructor wants them.
  std::vector<std::pair<int, int>> edges;
  edges.reserve(static_cast<size_t>(2 * W + T));
  std::vector<double> weight(static_cast<size_t>(W + 2 * T), 0.0);
  int finals = 0;
  for (int w = 0; w < W; ++w) {
    weight[w] = in.work_us[w];
    if (next_work[w] >= 0) edges.emplace_back(w, next_work[w]);
    const int t = in.work_tile[w];
    if (t >= T) throw std::invalid_argument("reduce_critical_path: work_tile out of range");
    edges.emplace_back(w, t >= 0 ? L.tile(t) : L.final_output(finals++));
  }
  std::vector<char> fed(static_cast<size_t>(T), 0);
  for (int w = 0; w < W; ++w)
    if (in.work_tile[w] >= 0) fed[in.work_tile[w]] = 1;
  for (int t = 0; t < T; ++t) {
    weight[L.tile(t)] = fed[t] ? in.tile_us[t] : 0.0;
    if (fed[t]) edges.emplace_back(L.tile(t), L.tile_output(t));
  }
  const int V = W + 2 * T + finals;
  weight.resize(static_cast<size_t>(V), 0.0);
  const Graph g(boost::edges_are_sorted, edges.begin(), edges.end(), static_cast<size_t>(V));

  std::vector<Vertex> reverse_order;
  reverse_order.reserve(static_cast<size_t>(V));
  try {
    boost::topological_sort(g, std::back_inserter(reverse_order));
  } catch (const boost::not_a_dag&) {
    throw std::invalid_argument("reduce_critical_path: previous_work forms a cycle");
  }

  // Longest path: earliest finish of each vertex over its predecessors, in topological order.
  std::vector<double> finish(static_cast<size_t>(V), 0.0);
  std::vector<double> start(static_cast<size_t>(V), 0.0);
  std::vector<int> pred(static_cast<size_t>(V), -1);
  Vertex last = 0;
  double best = -1;
  for (auto it = reverse_order.rbegin(); it != reverse_order.rend(); ++it) {
    const Vertex u = *it;
    finish[u] = start[u] + weight[u];
    if (finish[u] > best) best = finish[u], last = u;
    for (auto e : boost::make_iterator_range(boost::out_edges(u, g))) {
      const Vertex v = boost::target(e, g);
      if (pred[v] < 0 || finish[u] > start[v]) {
        start[v] = finish[u];
        pred[v] = static_cast<int>(u);
      }
    }
  }

  CriticalPath path;
  if (V == 0) return path;
  path.length_us = best;
  for (int v = static_cast<int>(last); v >= 0; v = pred[v]) {
    if (v < W)
      path.works.push_back(v);
    else if (v < W + T)
      path.tile = v - W;
  }
  std::reverse(path.works.begin(), path.works.end());
  return path;
}

}  // namespace mlasim::sim
