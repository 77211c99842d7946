// SPDX-License-Identifier: Apache-2.0
// pathwise-ublk: serves a ublk block device over a test backend until
// SIGTERM or SIGINT, then removes it. It exercises the front end on its own
// (the testbed runs fio with verification over it); `pathwise datapath`
// serves the multipath backend through the same library.
//
//   pathwise-ublk --backend file:PATH [--size BYTES] [--queues N] [--depth N]
//
// Prints the block device's path on stdout once it exists. Exit 0 after a
// clean removal, 1 when serving or removal failed, 2 with one line on bad
// input (including a kernel without ublk_drv).
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "datapath/ublk/device.h"
#include "datapath/ublk/file_backend.h"

namespace {

using pathwise::datapath::ublk::Backend;
using pathwise::datapath::ublk::Device;
using pathwise::datapath::ublk::DeviceOptions;
using pathwise::datapath::ublk::FileBackend;
using pathwise::datapath::ublk::Geometry;
using pathwise::datapath::ublk::IoRequest;
using pathwise::datapath::ublk::QueueBackend;
using pathwise::datapath::ublk::QueueContext;

// For the shutdown test: requests touching the 4 KiB block at `at` are never
// answered, so that only the front end's abort grace can end them.
class HoldQueue final : public QueueBackend {
 public:
  HoldQueue(std::unique_ptr<QueueBackend> inner, uint64_t at)
      : inner_(std::move(inner)), at_(at) {}
  void Submit(const IoRequest& r) override {
    if (r.length > 0 && r.offset < at_ + 4096 && r.offset + r.length > at_) {
      held_.insert(r.tag);
      return;
    }
    inner_->Submit(r);
  }
  void OnCqe(const io_uring_cqe& cqe) override { inner_->OnCqe(cqe); }
  void Poll() override { inner_->Poll(); }
  void Cancel(uint16_t tag) override {
    if (held_.erase(tag) == 0) inner_->Cancel(tag);
  }

 private:
  std::unique_ptr<QueueBackend> inner_;
  const uint64_t at_;
  std::set<uint16_t> held_;
};

class HoldBackend final : public Backend {
 public:
  HoldBackend(Backend& inner, uint64_t at) : inner_(inner), at_(at) {}
  Geometry geometry() const override { return inner_.geometry(); }
  absl::StatusOr<std::unique_ptr<QueueBackend>> AttachQueue(
      QueueContext& context) override {
    auto inner = inner_.AttachQueue(context);
    if (!inner.ok()) return inner.status();
    return std::make_unique<HoldQueue>(*std::move(inner), at_);
  }

 private:
  Backend& inner_;
  const uint64_t at_;
};

int BadInput(const std::string& message) {
  std::cerr << "pathwise-ublk: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Serve a ublk block device over a test backend"};
  std::string backend_spec;
  uint64_t size = 0;
  DeviceOptions options;
  double grace_s = 5;
  app.add_option("--backend", backend_spec, "file:PATH")->required();
  app.add_option("--size", size,
                 "create or resize the backing file to BYTES first");
  app.add_option("--queues", options.queues, "ublk queues (threads)");
  app.add_option("--depth", options.depth, "requests in flight per queue");
  app.add_option("--scheduler", options.scheduler,
                 "the device's I/O scheduler; \"kernel\" keeps blk-mq's "
                 "default")
      ->default_str("none");
  app.add_option("--abort_grace", grace_s,
                 "seconds the backend may hold a request at shutdown");
  // Tests point this at a missing path to see the no-ublk_drv line.
  app.add_option("--ublk_control", options.control_path)->group("");
  // The shutdown test: never answer requests touching this byte offset.
  int64_t hold_at = -1;
  app.add_option("--test_hold_at", hold_at)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return BadInput(e.what());
  }
  options.abort_grace = absl::Seconds(grace_s);
  if (!absl::StartsWith(backend_spec, "file:") || backend_spec.size() <= 5) {
    return BadInput(
        absl::StrCat("--backend must be file:PATH, not '", backend_spec, "'"));
  }
  auto backend = FileBackend::Open(backend_spec.substr(5), size);
  if (!backend.ok()) return BadInput(std::string(backend.status().message()));

  // Every thread the device starts inherits this mask; the signals are
  // taken here with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<Backend> hold;
  Backend* serve = backend->get();
  if (hold_at >= 0) {
    hold = std::make_unique<HoldBackend>(**backend, hold_at);
    serve = hold.get();
  }
  auto device = Device::Create(options, *serve);
  if (!device.ok()) {
    const absl::Status& s = device.status();
    if (absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s)) {
      return BadInput(std::string(s.message()));
    }
    std::cerr << "pathwise-ublk: " << s.message() << "\n";
    return 1;
  }
  std::cout << (*device)->block_path() << std::endl;
  if (!(*device)->scheduler_status().ok()) {
    std::cerr << "pathwise-ublk: could not set the I/O scheduler to "
              << options.scheduler << " ("
              << (*device)->scheduler_status().message() << ")\n";
  }
  std::cerr << "pathwise-ublk: serving " << (*device)->block_path() << " ("
            << (*device)->queues() << " queues x " << (*device)->depth() << ", "
            << ((*device)->ioctl_encoded() ? "ioctl" : "legacy")
            << " opcodes, scheduler " << (*device)->scheduler() << ")\n";
  int sig = 0;
  sigwait(&signals, &sig);
  const absl::Status stopped = (*device)->Stop();
  const auto c = (*device)->counters();
  std::cerr << "pathwise-ublk: removed " << (*device)->block_path() << ": "
            << c.requests << " requests, " << c.failed << " failed, "
            << c.abandoned << " abandoned, " << c.command_errors
            << " command errors\n";
  if (!stopped.ok()) {
    std::cerr << "pathwise-ublk: " << stopped.message() << "\n";
    return 1;
  }
  return 0;
}
