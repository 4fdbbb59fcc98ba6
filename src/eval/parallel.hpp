#pragma once
// Host work on large buffers (drawing inputs, comparing outputs) split over the machine's cores.
// The chunks depend only on the element count and the chunk size, never on the number of
// threads, so anything seeded per chunk gives the same bytes on every machine.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kf {

// Calls fn(begin, end, chunk_index) for every chunk of [0, n), on up to the hardware's threads.
template <typename Fn>
void ForChunks(size_t n, size_t chunk, Fn&& fn) {
  const size_t chunks = (n + chunk - 1) / chunk;
  const size_t threads =
      std::min<size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t c; (c = next.fetch_add(1)) < chunks;)
      fn(c * chunk, std::min(n, (c + 1) * chunk), c);
  };
  if (threads <= 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace kf
