#pragma once
// Sweeps run off the caller's thread, for an interactive front end (the explorer's sweep view): start() returns at
// once, the caller polls progress() and take_if_finished() from its own thread (a UI timer), and nothing else
// crosses threads. The hand-off is std::future and atomics, so ThreadSanitizer sees every ordering the explorer
// relies on (tests/sim/background_sweep_test.cpp runs in the TSan tree).
#include <atomic>
#include <cstddef>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/sim/sweep.h"

namespace mlasim::sim {

class BackgroundSweep {
 public:
  struct Outcome {
    std::vector<SweepResult> results;  // one per grid, in start()'s order; empty when the run failed
    std::string error;                 // why it failed (an InputError's text, or "cancelled"); empty on success
  };

  BackgroundSweep() = default;
  BackgroundSweep(const BackgroundSweep&) = delete;
  BackgroundSweep& operator=(const BackgroundSweep&) = delete;
  // Cancels a running sweep and waits for its worker, which stops at its next chunk of points.
  ~BackgroundSweep();

  // Sweeps `grids` one after the other on a worker thread. Each grid is checked first (validate_sweep), so a bad
  // grid throws its InputError here and nothing starts. Throws std::logic_error while a sweep is running.
  void start(std::vector<SweepGrid> grids);
  // A sweep was started and its outcome has not been taken yet.
  bool running() const { return result_.valid(); }
  // Points done over points in all grids, 0..1; 1 once the worker has finished.
  double progress() const;
  // The outcome once the worker has finished, taken once (running() is false afterwards); nothing before that.
  std::optional<Outcome> take_if_finished();
  // Asks the worker to stop at its next chunk; its outcome then says "cancelled".
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  std::atomic<size_t> done_{0};
  std::atomic<size_t> total_{1};
  std::atomic<bool> cancelled_{false};
  std::future<Outcome> result_;
};

}  // namespace mlasim::sim
