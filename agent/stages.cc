// SPDX-License-Identifier: Apache-2.0
#include "agent/stages.h"

#include <bpf/libbpf.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bpf/sampler.h"
#include "collectors/bpf_io_collector.h"
#include "collectors/nvme_iostats_collector.h"
#include "collectors/nvme_topology_collector.h"
#include "collectors/queue_hctx.h"
#include "collectors/queue_source.h"
#include "collectors/sysfs_reader.h"
#include "control/head_iostats.h"
#include "control/iopolicy_actuator.h"
#include "control/iopolicy_file.h"
#include "control/prober.h"
#include "scoring/stage.h"
#include "spdlog/spdlog.h"

namespace pathwise::agent {
namespace {

// libbpf's own messages (process-wide print hook) go to the debug log: the
// sampler's status already says what failed, in one line.
int LibbpfToDebugLog(enum libbpf_print_level level, const char* format,
                     va_list args) {
  if (level == LIBBPF_DEBUG && !spdlog::should_log(spdlog::level::debug)) {
    return 0;
  }
  char buf[1024];
  const int n = std::vsnprintf(buf, sizeof(buf), format, args);
  std::string line(buf, n < 0 ? 0 : std::min<size_t>(n, sizeof(buf) - 1));
  while (!line.empty() && line.back() == '\n') line.pop_back();
  spdlog::debug("libbpf: {}", line);
  return n;
}

// Adds the I/O source: the eBPF sampler unless --bpf=off or it cannot
// run, else the sysfs fallback. With --bpf=required an unusable sampler is
// an error (returned); with --bpf=auto it is one log line.
absl::Status AddIoSource(const Options& o,
                         const collectors::SysfsReader& reader,
                         Pipeline& pipeline) {
  if (o.bpf != BpfMode::kOff) {
    libbpf_set_print(LibbpfToDebugLog);
    bpf::SamplerOptions so;
    so.enable_bpf_stats = o.bpf_stats;
    so.io_slots = bpf::IoSlotsFor(collectors::CountDisks(reader));
    // --queues: per hardware context statistics too (pathwise_queue_hctx_*).
    if (o.queues)
      so.hctx_slots = bpf::HctxSlotsFor(collectors::CountHctxs(reader));
    absl::StatusOr<std::unique_ptr<bpf::BpfSampler>> sampler =
        bpf::BpfSampler::Create(so);
    if (sampler.ok()) {
      spdlog::info("eBPF sampler attached ({}), devices={}{}",
                   (*sampler)->block_attach_mode(), o.devices,
                   o.bpf_stats ? ", BPF run-time stats on (costs)" : "");
      if ((*sampler)->init_context_hidden()) {
        spdlog::warn(
            "eBPF: this kernel does not run pathwise's programs while a "
            "thread of PID 1 is current; I/O completed there is not counted "
            "(pathwise_bpf_init_context_blind)");
      }
      pipeline.AddIoSource(std::make_unique<collectors::BpfIoCollector>(
          std::move(*sampler), o.devices == "all"
                                   ? collectors::DeviceScope::kAll
                                   : collectors::DeviceScope::kNvme));
      return absl::OkStatus();
    }
    const std::string why = OneLine(sampler.status().message());
    if (o.bpf == BpfMode::kRequired) {
      return absl::FailedPreconditionError(
          absl::StrCat("--bpf=required: eBPF sampler unavailable: ", why));
    }
    spdlog::warn("eBPF sampler unavailable, using sysfs I/O counters: {}", why);
  }
  pipeline.AddIoSource(
      std::make_unique<collectors::NvmeIoStatsCollector>(reader));
  return absl::OkStatus();
}

// The iopolicy actuator (control/) as a pipeline stage.
class IopolicyActuatorStage : public Actuator {
 public:
  explicit IopolicyActuatorStage(
      std::unique_ptr<control::IopolicyActuator> impl)
      : impl_(std::move(impl)) {}
  absl::string_view name() const override { return impl_->name(); }
  absl::Status Act(const model::Snapshot& published) override {
    return impl_->Act(published);
  }
  void Report(model::Snapshot& next) const override {
    next.actuator = impl_->Report();
  }
  void Stop() override { impl_->Stop(absl::Now()); }

 private:
  std::unique_ptr<control::IopolicyActuator> impl_;
};

// The head iostats switch (control/head_iostats.h) as a pipeline stage.
class HeadIostatsStage : public Actuator {
 public:
  explicit HeadIostatsStage(control::HeadIostatsConfig config)
      : impl_(std::move(config)) {}
  absl::string_view name() const override { return impl_.name(); }
  absl::Status Act(const model::Snapshot& published) override {
    impl_.Act(published);
    return absl::OkStatus();
  }
  void Report(model::Snapshot& next) const override {
    next.head_iostats = impl_.Report();
  }
  void Stop() override { impl_.Stop(); }

 private:
  control::HeadIostatsSwitch impl_;
};

// serve: the controller prober as one more I/O source, unless
// --probe-interval=0 or the topology is not this system's (a --path.sysfs
// other than /sys: /dev holds other controllers). A prober that cannot
// start (no io_uring) is one log line, not a failure.
void AddProber(const Options& o, Pipeline& pipeline) {
  if (o.command != Command::kServe) return;
  if (o.probe_interval <= absl::ZeroDuration()) {
    spdlog::info("controller probes off (--probe-interval=0)");
    return;
  }
  if (o.sysfs_root != "/sys") {
    spdlog::info(
        "controller probes off: --path.sysfs={} is not this "
        "system's /sys",
        o.sysfs_root);
    return;
  }
  control::ProberOptions po;
  po.interval = o.probe_interval;
  po.timeout = o.probe_timeout;
  absl::StatusOr<std::unique_ptr<control::ProbeRing>> ring =
      control::MakeUringProbeRing(po);
  if (!ring.ok()) {
    spdlog::warn("controller probes unavailable: {}",
                 OneLine(ring.status().message()));
    return;
  }
  spdlog::info("controller probes every {}, timeout {}",
               absl::FormatDuration(po.interval),
               absl::FormatDuration(po.timeout));
  pipeline.AddIoSource(
      std::make_unique<control::Prober>(std::move(po), *std::move(ring)));
}

}  // namespace

std::string OneLine(absl::string_view message) {
  std::string out(message);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// serve's actuators: the iopolicy actuator, also when off (it then only
// exports its mode), and the head iostats switch unless --head-iostats=keep.
absl::Status AddActuators(const Options& o, Pipeline& pipeline) {
  absl::StatusOr<std::unique_ptr<control::IopolicyActuator>> actuator =
      control::IopolicyActuator::Create(
          o.actuate,
          std::make_unique<control::SysfsIopolicyFile>(o.sysfs_root));
  if (!actuator.ok()) return actuator.status();
  if (o.actuate.mode != model::ActuateMode::kOff) {
    spdlog::info(
        "iopolicy actuator: mode={} hold={} min_interval={} subsystems={} "
        "restore={}",
        o.actuate.mode == model::ActuateMode::kOn ? "on" : "dry-run",
        absl::FormatDuration(o.actuate.hold),
        absl::FormatDuration(o.actuate.min_interval), o.actuate.subsystems,
        o.actuate.restore);
  }
  pipeline.AddActuator(
      std::make_unique<IopolicyActuatorStage>(*std::move(actuator)));
  if (o.head_iostats != model::HeadIostatsMode::kKeep) {
    const bool dry = o.head_iostats == model::HeadIostatsMode::kDryRun;
    if (o.bpf == BpfMode::kOff) {
      spdlog::warn(
          "--head-iostats={}: the heads keep their accounting, which "
          "--bpf=off's sysfs counters read",
          dry ? "dry-run" : "off");
    }
    spdlog::info(
        "head iostats switch: mode={}: each multipath head's queue/iostats "
        "{} while the eBPF sampler counts its I/O",
        dry ? "dry-run" : "off", dry ? "would be 0" : "is 0");
    pipeline.AddActuator(
        std::make_unique<HeadIostatsStage>(control::HeadIostatsConfig{
            .mode = o.head_iostats, .sysfs_root = o.sysfs_root}));
  }
  return absl::OkStatus();
}

// Sets up the pipeline's stages: topology, I/O (and probes), scoring. The
// actuators are serve's (AddActuators).
absl::Status SetUpPipeline(const Options& o, Pipeline& pipeline) {
  const collectors::SysfsReader reader(o.sysfs_root);
  pipeline.SetTopologySource(
      std::make_unique<collectors::NvmeTopologyCollector>(reader));
  if (absl::Status s = AddIoSource(o, reader, pipeline); !s.ok()) return s;
  AddProber(o, pipeline);
  if (o.queues) {
    // The map reads sysfs under /sys, where PresentSysfsRoot put the root.
    pipeline.AddIoSource(std::make_unique<collectors::QueueIoSource>(
        std::make_unique<collectors::QueueSource>(collectors::QueueScanRoots{},
                                                  o.bpf != BpfMode::kOff)));
    spdlog::info(
        "queue map on (--queues): pathwise_queue_*, pathwise_flow_*, "
        "pathwise_queue_hctx_* (with the eBPF sampler)");
  }
  scoring::ScoringOptions so;
  so.config = o.scoring;
  so.interval = o.interval;
  struct utsname u;
  so.kernel_has_queue_depth =
      o.kernel_queue_depth.has_value()
          ? *o.kernel_queue_depth
          : uname(&u) != 0 || scoring::KernelHasQueueDepth(u.release);
  pipeline.SetScoring(std::make_unique<scoring::ScoringStage>(so));
  return absl::OkStatus();
}

}  // namespace pathwise::agent
