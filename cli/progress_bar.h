#pragma once
// A progress bar on stderr, with the time left estimated from the rate so far; redrawn at most every 100 ms, from
// whichever thread reports.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace mlasim::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

  void update(size_t done, size_t total) {
    if (!enabled_ || done >= total) return;  // finish() draws the last state
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    draw(done, total);
  }

  void finish(size_t done, size_t total) {
    if (!enabled_) return;
    draw(done, total);
    std::fputc('\n', stderr);
  }

 private:
  void draw(size_t done, size_t total) {
    constexpr int kWidth = 40;
    const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const int filled = static_cast<int>(f * kWidth);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta;
    if (done > 0 && done < total)
      eta = " ETA " +
            std::to_string(
                static_cast<long>(seconds / static_cast<double>(done) * static_cast<double>(total - done) + 0.5)) +
            " s";
    std::fprintf(stderr, "\r[%s%s] %3d%% %zu/%zu%s   ", std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(kWidth - filled), ' ').c_str(), static_cast<int>(f * 100), done, total,
                 eta.c_str());
    std::fflush(stderr);
  }

  bool enabled_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace mlasim::cli
