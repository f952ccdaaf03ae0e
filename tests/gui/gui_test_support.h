#pragma once
// Shared by the GUI tests: the README scenario, its two sides, and reading request colours back from pixels.
#include <QColor>
#include <QImage>
#include <QString>
#include <QtGlobal>
#include <string>

#include "mlasim/gui/timeline_painter.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/scenario.h"

namespace mlasim::gui::testing {

inline std::string readme_scenario_path() {
  return std::string(MLASIM_DATA_DIR) + "/scenarios/atom_msb16_vs_auto.json";
}

// A directory under the build tree for files the tests write (kept, so a failing picture can be looked at).
inline QString output_path(const QString& name) { return QStringLiteral(MLASIM_TEST_OUTPUT_DIR "/") + name; }

struct Sides {
  sim::Evaluation a, b;
};

// JSON equality that prints both sides when it fails (QCOMPARE cannot take nlohmann::json).
inline bool same_json(const nlohmann::json& a, const nlohmann::json& b) {
  if (a == b) return true;
  qWarning("JSON differs:\n%s\n%s", a.dump().c_str(), b.dump().c_str());
  return false;
}

inline Sides evaluate(const sim::Scenario& s) {
  const auto ctx = std::make_shared<const sim::WorkloadContext>(sim::resolve(s.workload));
  return {sim::evaluate(s.policies[0].spec, *ctx), sim::evaluate(s.policies[1].spec, *ctx)};
}

// The request whose colour a pixel has (final fill, split-fragment fill, hatch, or either faded), else -1.
inline int request_of_pixel(QRgb pixel, int num_requests, const QColor& background) {
  const QRgb rgb = pixel & 0xffffff;
  for (int r = 0; r < num_requests; ++r) {
    const QColor colours[] = {request_color(r), partial_fill(r), faded(request_color(r), background),
                              faded(partial_fill(r), background)};
    for (const QColor& c : colours)
      if ((c.rgb() & 0xffffff) == rgb) return r;
  }
  return -1;
}

}  // namespace mlasim::gui::testing
