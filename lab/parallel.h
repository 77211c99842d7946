// SPDX-License-Identifier: Apache-2.0
// Runs independent simulations on several threads: each index of [0, n)
// once, on up to `jobs` threads (0: one per core), the caller's thread
// among them. The work's results go where `fn` puts them, so the outcome
// does not depend on `jobs`.
#ifndef PATHWISE_LAB_PARALLEL_H_
#define PATHWISE_LAB_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace pathwise::lab {

template <typename Fn>
void ParallelFor(size_t n, int jobs, const Fn& fn) {
  if (jobs <= 0) jobs = static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::clamp<int>(jobs, 1, static_cast<int>(std::max<size_t>(1, n)));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
}

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_PARALLEL_H_
