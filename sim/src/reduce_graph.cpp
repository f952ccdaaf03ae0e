#include "mlasim/sim/reduce_graph.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/range/iterator_range.hpp>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace mlasim::sim {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// Buffers reused by every call on a thread.
struct ReduceGraphScratch {
  std::vector<int> next_work, tile_vertex;
  std::vector<std::pair<int, int>> edges;
  std::vector<double> weight, start, finish;
  std::vector<int> pred;
  std::vector<Vertex> reverse_order;
  std::vector<boost::default_color_type> color;
};

}  // namespace

CriticalPath reduce_critical_path(const ReduceGraphInput& in) {
  thread_local ReduceGraphScratch s;
  const int W = static_cast<int>(in.work_us.size());
  const int T = static_cast<int>(in.tile_us.size());
  if (in.previous_work.size() != in.work_us.size() || in.work_tile.size() != in.work_us.size())
    throw std::invalid_argument("reduce_critical_path: work spans differ in length");

  // Vertices: 0 = the kernel launch (the root every cluster's first work hangs from, so one depth-first search
  // reaches the whole graph), works 1..W, then each fed tile and its output. A final work writes its output
  // itself, so the work is that output's vertex.
  s.next_work.assign(static_cast<size_t>(W), -1);
  s.tile_vertex.assign(static_cast<size_t>(T), -1);
  int vertices = 1 + W;
  for (int w = 0; w < W; ++w) {
    const int p = in.previous_work[w];
    if (p >= W || p == w) throw std::invalid_argument("reduce_critical_path: bad previous_work");
    if (p >= 0) s.next_work[p] = w;
    const int t = in.work_tile[w];
    if (t >= T) throw std::invalid_argument("reduce_critical_path: work_tile out of range");
    if (t >= 0 && s.tile_vertex[t] < 0) s.tile_vertex[t] = vertices++;
  }
  const int tiles_fed = vertices - 1 - W;
  const int first_output = vertices;
  vertices += tiles_fed;  // tile outputs

  // Edges come out sorted by source (launch, works in order, then tiles), as the CSR constructor wants them.
  s.edges.clear();
  s.weight.assign(static_cast<size_t>(vertices), 0.0);
  for (int w = 0; w < W; ++w)
    if (in.previous_work[w] < 0) s.edges.emplace_back(0, 1 + w);
  for (int w = 0; w < W; ++w) {
    s.weight[1 + w] = in.work_us[w];
    if (s.next_work[w] >= 0) s.edges.emplace_back(1 + w, 1 + s.next_work[w]);
    if (in.work_tile[w] >= 0) s.edges.emplace_back(1 + w, s.tile_vertex[in.work_tile[w]]);
  }
  // Tile vertices were numbered in order of first use, so walk them in vertex order.
  for (int t = 0; t < T; ++t)
    if (s.tile_vertex[t] >= 0) s.weight[s.tile_vertex[t]] = in.tile_us[t];
  for (int v = 1 + W; v < first_output; ++v) s.edges.emplace_back(v, v + tiles_fed);
  const int V = vertices;
  const Graph g(boost::edges_are_sorted, s.edges.begin(), s.edges.end(), static_cast<size_t>(V));

  s.reverse_order.clear();
  s.color.assign(static_cast<size_t>(V), boost::white_color);
  try {
    boost::topological_sort(
        g, std::back_inserter(s.reverse_order),
        boost::color_map(boost::make_iterator_property_map(s.color.begin(), boost::get(boost::vertex_index, g))));
  } catch (const boost::not_a_dag&) {
    throw std::invalid_argument("reduce_critical_path: previous_work forms a cycle");
  }

  // Longest path: each vertex starts when its last predecessor finishes, in topological order.
  s.start.assign(static_cast<size_t>(V), 0.0);
  s.finish.assign(static_cast<size_t>(V), 0.0);
  s.pred.assign(static_cast<size_t>(V), -1);
  Vertex last = 0;
  double best = 0;
  for (auto it = s.reverse_order.rbegin(); it != s.reverse_order.rend(); ++it) {
    const Vertex u = *it;
    s.finish[u] = s.start[u] + s.weight[u];
    if (s.finish[u] > best) best = s.finish[u], last = u;
    for (auto e : boost::make_iterator_range(boost::out_edges(u, g))) {
      const Vertex v = boost::target(e, g);
      if (s.pred[v] < 0 || s.finish[u] > s.start[v]) {
        s.start[v] = s.finish[u];
        s.pred[v] = static_cast<int>(u);
      }
    }
  }

  CriticalPath path;
  path.length_us = best;
  for (int v = static_cast<int>(last); v > 0; v = s.pred[v]) {
    if (v <= W) {
      path.works.push_back(v - 1);
    } else if (v < first_output) {
      for (int t = 0; t < T; ++t)
        if (s.tile_vertex[t] == v) path.tile = t;
    }
  }
  std::reverse(path.works.begin(), path.works.end());
  return path;
}

}  // namespace mlasim::sim
