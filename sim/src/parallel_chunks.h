#pragma once
// tbb::parallel_for over [0, n) in chunks of at least `grain`, with the ordering it guarantees also spelled out in
// the C++ memory model: what the caller wrote before the call happens before every chunk (a release store before
// the loop, an acquire load at the start of each chunk), and every chunk happens before what the caller does after
// the call (a release at the end of each chunk, an acquire load after the loop). TBB orders both inside libtbb's
// scheduler, which ThreadSanitizer cannot see when libtbb is not built with it; the pairs let it check the
// project's own accesses for what they are. The two directions use separate atomics, so that no chunk acquires
// what another released: chunks stay unordered among themselves, as TBB leaves them, and a race between two of
// them is still reported. Two atomic operations per chunk. The closing pairs also hold when a chunk throws (a
// cancelled sweep): TBB waits for the running chunks before it rethrows, and the caller's unwinding then frees what
// they read.
#include <atomic>
#include <cstddef>
#include <memory>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

namespace mlasim::sim::detail {

template <typename Body>  // void(size_t begin, size_t end)
void parallel_chunks(size_t n, size_t grain, const Body& body) {
  std::atomic<bool> started{false};
  std::atomic<size_t> finished{0};
  started.store(true, std::memory_order_release);
  // The loop's task group context lives on the heap, not on the caller's stack: libtbb's workers write to it in
  // code ThreadSanitizer does not see, and stack memory that a later, deeper call reuses would then look raced.
  const auto context = std::make_unique<tbb::task_group_context>();
  // Released at the end of every chunk and acquired after the loop, on the normal path and while unwinding.
  struct Release {
    std::atomic<size_t>& finished;
    ~Release() { finished.fetch_add(1, std::memory_order_release); }
  };
  struct Acquire {
    std::atomic<size_t>& finished;
    ~Acquire() { (void)finished.load(std::memory_order_acquire); }
  };
  const Acquire after_loop{finished};
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, n, grain),
      [&](const tbb::blocked_range<size_t>& range) {
        (void)started.load(std::memory_order_acquire);
        const Release end_of_chunk{finished};
        body(range.begin(), range.end());
      },
      tbb::auto_partitioner(), *context);
}

}  // namespace mlasim::sim::detail
