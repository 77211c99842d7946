// SPDX-License-Identifier: Apache-2.0
// The acknowledged-write ledger's I/O: worker threads doing one synchronous
// operation each at a time (reads, writes of 4 KiB, 64 KiB and larger than
// the device's largest request, FUA writes, flushes, Write Zeroes and
// Discards) on claimed blocks of a region, each outcome recorded in the
// Model; reads checked as they complete; and the final pass that reads the
// whole region back.
#ifndef PATHWISE_TESTS_DATA_LEDGER_LEDGER_RUN_H_
#define PATHWISE_TESTS_DATA_LEDGER_LEDGER_RUN_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/data_ledger/ledger_model.h"

namespace pathwise::ledger {

struct Config {
  std::string device;
  uint64_t offset = 0;  // bytes, a multiple of kBlock
  uint64_t size = 0;    // bytes, a multiple of kBlock
  int jobs = 8;
  uint64_t seed = 1;
  uint64_t run = 1;          // the run id written into every block
  uint32_t large_bytes = 0;  // the "larger than the device takes" size
  double seconds = 0;        // 0: until stopped
  std::string stop_file;     // stop when it appears
  double verify_retry_seconds = 60;
  Mix mix;
};

struct Violation {
  uint64_t block;
  std::string kind, expected, found, when;
};

struct Counters {
  uint64_t writes_acked = 0, writes_failed = 0, fua_writes_acked = 0,
           large_writes_acked = 0, bytes_written = 0, reads_ok = 0,
           reads_failed = 0, read_checks = 0, bytes_read = 0, flushes_ok = 0,
           flushes_failed = 0, write_zeroes_ok = 0, write_zeroes_failed = 0,
           write_zeroes_unsupported = 0, discards_ok = 0, discards_failed = 0,
           discards_unsupported = 0;
  std::map<std::string, uint64_t> errors;  // by errno name
};

struct Verification {
  uint64_t blocks = 0, blocks_ok = 0, unreadable = 0;
};

class Ledger {
 public:
  Ledger(const Config& config, int fd, Model model);

  // Writes every block once (acknowledged); false when it could not.
  bool Init(std::string* error);
  // The workers until time is up, the stop file appears or *stop is set.
  void Run(const std::atomic<bool>* stop);
  // Reads the region back and checks every block.
  Verification Verify();

  const Counters& counters() const { return counters_; }
  const Model& model() const { return model_; }
  const std::map<std::string, uint64_t>& violation_counts() const {
    return violation_counts_;
  }
  const std::vector<Violation>& first_violations() const { return first_; }
  uint64_t violations() const;
  uint64_t next_gen() const { return next_gen_; }
  void set_next_gen(uint64_t g) { next_gen_ = g; }

 private:
  void Worker(int id, const std::atomic<bool>* stop);
  bool Claim(uint64_t first, uint64_t n);
  void Release(uint64_t first, uint64_t n);
  void DoRead(uint64_t first, uint64_t n, std::byte* buf);
  void DoWrite(uint64_t first, uint64_t n, std::byte* buf, bool fua);
  void DoRange(uint64_t first, uint64_t n, bool zero);
  void DoFlush();
  // Checks blocks [first, first + n) as read into buf (under mu_).
  void CheckLocked(uint64_t first, uint64_t n, const std::byte* buf,
                   const char* when);
  void ErrorLocked(int err);
  bool Stopping(const std::atomic<bool>* stop) const;

  Config config_;
  int fd_;
  uint64_t blocks_;
  std::mutex mu_;
  Model model_;
  std::vector<bool> busy_;
  Counters counters_;
  std::map<std::string, uint64_t> violation_counts_;
  std::vector<Violation> first_;
  std::atomic<uint64_t> next_gen_{1};
  double started_ = 0;
};

}  // namespace pathwise::ledger

#endif  // PATHWISE_TESTS_DATA_LEDGER_LEDGER_RUN_H_
