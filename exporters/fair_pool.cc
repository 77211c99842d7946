// SPDX-License-Identifier: Apache-2.0
#include "exporters/fair_pool.h"

#include <utility>

namespace pathwise::exporters {

FairPool::FairPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

FairPool::~FairPool() { Stop(); }

bool FairPool::Submit(const std::string& client, std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  queues_[client].push_back(std::move(job));
  return true;
}

void FairPool::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void FairPool::Work() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](FairPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->queues_.empty();
          },
          this));
      if (queues_.empty()) return;  // stopping, and nothing left to run
      auto it = queues_.upper_bound(last_);
      if (it == queues_.end()) it = queues_.begin();
      last_ = it->first;
      job = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) queues_.erase(it);
    }
    job();
  }
}

}  // namespace pathwise::exporters
