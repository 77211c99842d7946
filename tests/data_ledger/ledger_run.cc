// SPDX-License-Identifier: Apache-2.0
#include "tests/data_ledger/ledger_run.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

namespace pathwise::ledger {
namespace {

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Freer {
  void operator()(std::byte* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, Freer>;
Buffer Aligned(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kBlock, bytes) != 0) return nullptr;
  std::memset(p, 0, bytes);
  return Buffer(static_cast<std::byte*>(p));
}

// One synchronous transfer of all of `len` bytes; returns 0 or an errno (a
// short transfer is EIO: the rest did not happen, or not knowably).
int Transfer(int fd, bool write, std::byte* buf, size_t len, off_t off,
             int flags = 0) {
  iovec iov{buf, len};
  ssize_t r;
  do {
    r = write ? pwritev2(fd, &iov, 1, off, flags)
              : preadv2(fd, &iov, 1, off, 0);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return errno;
  return static_cast<size_t>(r) == len ? 0 : EIO;
}

}  // namespace

Ledger::Ledger(const Config& config, int fd, Model model)
    : config_(config),
      fd_(fd),
      blocks_(config.size / kBlock),
      model_(std::move(model)),
      busy_(blocks_, false) {}

bool Ledger::Stopping(const std::atomic<bool>* stop) const {
  if (stop != nullptr && stop->load()) return true;
  if (config_.seconds > 0 && Now() - started_ >= config_.seconds) return true;
  struct stat st;
  return !config_.stop_file.empty() &&
         stat(config_.stop_file.c_str(), &st) == 0;
}

bool Ledger::Init(std::string* error) {
  constexpr uint64_t kChunk = 256;  // blocks: 1 MiB writes
  Buffer buf = Aligned(kChunk * kBlock);
  for (uint64_t first = 0; first < blocks_; first += kChunk) {
    const uint64_t n = std::min(kChunk, blocks_ - first);
    const uint64_t gen = next_gen_++;
    for (uint64_t i = 0; i < n; ++i) {
      Encode(config_.run, config_.offset / kBlock + first + i, gen,
             buf.get() + i * kBlock);
    }
    const int err = Transfer(fd_, true, buf.get(), n * kBlock,
                             config_.offset + first * kBlock);
    if (err != 0) {
      *error =
          "writing block " + std::to_string(first) + ": " + std::strerror(err);
      return false;
    }
    model_.Acked(first, n, {Value::Kind::kData, gen});
  }
  return true;
}

bool Ledger::Claim(uint64_t first, uint64_t n) {
  std::lock_guard<std::mutex> l(mu_);
  for (uint64_t b = first; b < first + n; ++b) {
    if (busy_[b]) return false;
  }
  for (uint64_t b = first; b < first + n; ++b) busy_[b] = true;
  return true;
}

void Ledger::Release(uint64_t first, uint64_t n) {
  std::lock_guard<std::mutex> l(mu_);
  for (uint64_t b = first; b < first + n; ++b) busy_[b] = false;
}

void Ledger::ErrorLocked(int err) {
  const char* name = strerrorname_np(err);
  ++counters_.errors[name != nullptr ? name : std::to_string(err)];
}

void Ledger::CheckLocked(uint64_t first, uint64_t n, const std::byte* buf,
                         const char* when) {
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t b = first + i;
    const Decoded d =
        Decode(config_.run, config_.offset / kBlock + b, buf + i * kBlock);
    const Verdict v = model_.Check(b, d);
    if (v == Verdict::kOk) continue;
    ++violation_counts_[VerdictName(v)];
    if (first_.size() < 20) {
      first_.push_back(
          {b, VerdictName(v), Describe(model_.Expected(b)), Describe(d), when});
      std::fprintf(
          stderr,
          "ledger: VIOLATION %s at block %llu (%s): expected %s, found %s\n",
          VerdictName(v), static_cast<unsigned long long>(b), when,
          Describe(model_.Expected(b)).c_str(), Describe(d).c_str());
    }
  }
}

void Ledger::DoRead(uint64_t first, uint64_t n, std::byte* buf) {
  const int err =
      Transfer(fd_, false, buf, n * kBlock, config_.offset + first * kBlock);
  std::lock_guard<std::mutex> l(mu_);
  if (err != 0) {
    ++counters_.reads_failed;
    ErrorLocked(err);
    return;
  }
  ++counters_.reads_ok;
  counters_.bytes_read += n * kBlock;
  counters_.read_checks += n;
  CheckLocked(first, n, buf, "read during the run");
}

void Ledger::DoWrite(uint64_t first, uint64_t n, std::byte* buf, bool fua) {
  const uint64_t gen = next_gen_++;
  for (uint64_t i = 0; i < n; ++i) {
    Encode(config_.run, config_.offset / kBlock + first + i, gen,
           buf + i * kBlock);
  }
  const int err =
      Transfer(fd_, true, buf, n * kBlock, config_.offset + first * kBlock,
               fua ? RWF_DSYNC : 0);
  std::lock_guard<std::mutex> l(mu_);
  if (err != 0) {
    model_.Failed(first, n, {Value::Kind::kData, gen});
    ++counters_.writes_failed;
    ErrorLocked(err);
    return;
  }
  model_.Acked(first, n, {Value::Kind::kData, gen});
  ++counters_.writes_acked;
  counters_.bytes_written += n * kBlock;
  if (fua) ++counters_.fua_writes_acked;
  if (n * kBlock >= config_.large_bytes) ++counters_.large_writes_acked;
}

void Ledger::DoRange(uint64_t first, uint64_t n, bool zero) {
  uint64_t range[2] = {config_.offset + first * kBlock, n * kBlock};
  int err = 0;
  if (ioctl(fd_, zero ? BLKZEROOUT : BLKDISCARD, range) != 0) err = errno;
  std::lock_guard<std::mutex> l(mu_);
  const Value v =
      zero ? Value{Value::Kind::kZero, 0} : Value{Value::Kind::kDiscarded, 0};
  if (err == EOPNOTSUPP) {
    ++(zero ? counters_.write_zeroes_unsupported
            : counters_.discards_unsupported);
  } else if (err != 0) {
    model_.Failed(first, n, v);
    ++(zero ? counters_.write_zeroes_failed : counters_.discards_failed);
    ErrorLocked(err);
  } else {
    model_.Acked(first, n, v);
    ++(zero ? counters_.write_zeroes_ok : counters_.discards_ok);
  }
}

void Ledger::DoFlush() {
  const int err = fdatasync(fd_) == 0 ? 0 : errno;
  std::lock_guard<std::mutex> l(mu_);
  if (err == 0) {
    ++counters_.flushes_ok;
  } else {
    ++counters_.flushes_failed;
    ErrorLocked(err);
  }
}

void Ledger::Worker(int id, const std::atomic<bool>* stop) {
  std::mt19937_64 rng(config_.seed * 1000003 + id);
  const uint64_t large = std::max<uint64_t>(config_.large_bytes / kBlock, 1);
  Buffer buf = Aligned(std::max<uint64_t>(large, 16) * kBlock);
  const Mix& m = config_.mix;
  const int weights[] = {m.read, m.write4k, m.write64k,     m.write_large,
                         m.fua,  m.flush,   m.write_zeroes, m.discard};
  std::discrete_distribution<int> pick(std::begin(weights), std::end(weights));
  while (!Stopping(stop)) {
    const int op = pick(rng);
    if (op == 5) {
      DoFlush();
      continue;
    }
    uint64_t n = 1;
    switch (op) {
      case 0:
        n = std::array<uint64_t, 3>{1, 16, large}[rng() % 3];
        break;
      case 2:
        n = 16;
        break;
      case 3:
        n = large;
        break;
      case 4:
        n = rng() % 2 ? 1 : 16;
        break;
      case 6:
      case 7:
        n = 1 + rng() % 64;
        break;
      default:
        break;
    }
    n = std::min(n, blocks_);
    const uint64_t first = rng() % (blocks_ - n + 1);
    if (!Claim(first, n)) {
      std::this_thread::yield();
      continue;
    }
    switch (op) {
      case 0:
        DoRead(first, n, buf.get());
        break;
      case 1:
      case 2:
      case 3:
        DoWrite(first, n, buf.get(), false);
        break;
      case 4:
        DoWrite(first, n, buf.get(), true);
        break;
      case 6:
        DoRange(first, n, true);
        break;
      case 7:
        DoRange(first, n, false);
        break;
      default:
        break;
    }
    Release(first, n);
  }
}

void Ledger::Run(const std::atomic<bool>* stop) {
  started_ = Now();
  std::vector<std::thread> threads;
  for (int i = 0; i < config_.jobs; ++i) {
    threads.emplace_back([this, i, stop] { Worker(i, stop); });
  }
  std::atomic<bool> done{false};
  std::thread progress([&] {
    double next = Now() + 5;
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (Now() < next) continue;
      next += 5;
      std::lock_guard<std::mutex> l(mu_);
      std::fprintf(stderr,
                   "ledger: running %.0f s: %llu writes acked, %llu failed, "
                   "%llu reads, %llu read errors, %llu violations\n",
                   Now() - started_,
                   static_cast<unsigned long long>(counters_.writes_acked),
                   static_cast<unsigned long long>(counters_.writes_failed),
                   static_cast<unsigned long long>(counters_.reads_ok),
                   static_cast<unsigned long long>(counters_.reads_failed),
                   static_cast<unsigned long long>(violations()));
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  progress.join();
}

uint64_t Ledger::violations() const {
  uint64_t n = 0;
  for (const auto& [k, v] : violation_counts_) n += v;
  return n;
}

Verification Ledger::Verify() {
  constexpr uint64_t kChunk = 256;
  Buffer buf = Aligned(kChunk * kBlock);
  Verification v;
  const double deadline = Now() + config_.verify_retry_seconds;
  for (uint64_t first = 0; first < blocks_; first += kChunk) {
    const uint64_t n = std::min(kChunk, blocks_ - first);
    int err;
    while ((err = Transfer(fd_, false, buf.get(), n * kBlock,
                           config_.offset + first * kBlock)) != 0 &&
           Now() < deadline) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::lock_guard<std::mutex> l(mu_);
    v.blocks += n;
    if (err == 0) {
      const uint64_t before = violations();
      CheckLocked(first, n, buf.get(), "final pass");
      v.blocks_ok += n - (violations() - before);
      continue;
    }
    // Block by block: which ones cannot be read.
    for (uint64_t b = first; b < first + n; ++b) {
      if (Transfer(fd_, false, buf.get(), kBlock,
                   config_.offset + b * kBlock) != 0) {
        ++v.unreadable;
        continue;
      }
      const uint64_t before = violations();
      CheckLocked(b, 1, buf.get(), "final pass");
      if (violations() == before) ++v.blocks_ok;
    }
  }
  return v;
}

}  // namespace pathwise::ledger
