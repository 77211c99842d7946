// SPDX-License-Identifier: Apache-2.0
// A fixed set of threads that run the HTTP server's request handlers, taking
// work from client addresses in turn: each address has its own queue and
// the threads serve the addresses round-robin, one job each. A client that
// sends many expensive requests (wrong passwords cost a bcrypt run each)
// then delays another client's request by at most one job per busy address,
// not by its whole backlog; and the server's event threads, which only
// move bytes, are never the ones blocked.
#ifndef PATHWISE_EXPORTERS_FAIR_POOL_H_
#define PATHWISE_EXPORTERS_FAIR_POOL_H_

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pathwise::exporters {

class FairPool {
 public:
  explicit FairPool(int threads);
  ~FairPool();  // Stop()
  FairPool(const FairPool&) = delete;
  FairPool& operator=(const FairPool&) = delete;

  // Queues `job` for `client`; false once stopping (the job is not run).
  bool Submit(const std::string& client, std::function<void()> job);
  // Runs what is queued, then joins the threads; later Submits fail.
  void Stop();

 private:
  void Work();

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::deque<std::function<void()>>> queues_
      ABSL_GUARDED_BY(mu_);
  // The client served last: the next job comes from the one after it.
  std::string last_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_FAIR_POOL_H_
