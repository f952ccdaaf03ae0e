#include "mlasim/sim/background_sweep.h"

#include <chrono>
#include <exception>
#include <stdexcept>

namespace mlasim::sim {
namespace {

// Thrown from the progress callback to unwind run_sweep's parallel loop (TBB cancels the remaining chunks).
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

}  // namespace

BackgroundSweep::~BackgroundSweep() {
  if (!result_.valid()) return;
  cancel();
  result_.wait();
}

void BackgroundSweep::start(std::vector<SweepGrid> grids) {
  if (running()) throw std::logic_error("BackgroundSweep::start: a sweep is still running");
  size_t total = 0;
  for (const SweepGrid& g : grids) {
    validate_sweep(g);
    total += sweep_size(g);
  }
  done_.store(0, std::memory_order_relaxed);
  total_.store(total > 0 ? total : 1, std::memory_order_relaxed);
  cancelled_.store(false, std::memory_order_relaxed);
  result_ = std::async(std::launch::async, [this, grids = std::move(grids)] {
    Outcome out;
    try {
      size_t before = 0;
      for (const SweepGrid& g : grids) {
        out.results.push_back(run_sweep(g, [&](size_t done, size_t) {
          if (cancelled_.load(std::memory_order_relaxed)) throw Cancelled{};
          // Chunks report from several threads: keep the largest count so progress never steps back.
          size_t seen = done_.load(std::memory_order_relaxed);
          while (seen < before + done && !done_.compare_exchange_weak(seen, before + done, std::memory_order_relaxed)) {
          }
        }));
        before += sweep_size(g);
      }
    } catch (const std::exception& e) {  // InputError from a point, bad_alloc from an absurd grid, Cancelled
      out.results.clear();
      out.error = e.what();
    }
    return out;
  });
}

double BackgroundSweep::progress() const {
  if (result_.valid() && result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return 1.0;
  return static_cast<double>(done_.load(std::memory_order_relaxed)) /
         static_cast<double>(total_.load(std::memory_order_relaxed));
}

std::optional<BackgroundSweep::Outcome> BackgroundSweep::take_if_finished() {
  if (!result_.valid() || result_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
  return result_.get();
}

}  // namespace mlasim::sim
