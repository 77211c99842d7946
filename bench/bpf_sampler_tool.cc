// SPDX-License-Identifier: Apache-2.0
// pathwise_bpf_tool: attaches the BPF sampler, reads it every --interval
// seconds until --duration elapses or SIGINT/SIGTERM, then prints what it
// saw as `key value` lines. Used by bench/bpf_overhead.sh; also a quick
// manual check ("is the sampler working on this kernel?").
//
//   pathwise_bpf_tool [--duration=S] [--interval=S] [--bpf_stats]
//                     [--force_own_start] [--force_spill] [--no_nvme]
//                     [--queues] [--max_inflight=N]
//                     [--ready_file=PATH]
//   pathwise_bpf_tool --nop_calibration [--duration=S] [--ready_file=PATH]
//     attaches empty programs to the same tracepoints instead, and prints
//     their bpf_stats (the cost of run-time accounting itself).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "bpf/sampler.h"
#include "bpf_nop.skel.h"
#include "exporters/labels.h"

namespace {

using pathwise::bpf::BpfSampler;
using pathwise::bpf::SamplerOptions;
using pathwise::bpf::SamplerSnapshot;

struct Args {
  double duration = 0;  // 0: until signalled
  double interval = 1;
  std::string ready_file;
  bool nop_calibration = false;
  SamplerOptions options;
};

// False (after one line on stderr, or the help on stdout) when the tool
// should not run; `*exit_code` is then 0 for --help, else 2.
bool ParseArgs(int argc, char** argv, Args* a, int* exit_code) {
  CLI::App app("Attaches the BPF sampler and prints what it saw.",
               "pathwise_bpf_tool");
  app.add_option("--duration", a->duration,
                 "seconds to run; 0: until SIGINT/SIGTERM")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--interval", a->interval, "seconds between reads")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 3600.0));
  app.add_option("--ready_file", a->ready_file,
                 "written once the programs are attached");
  app.add_flag("--bpf_stats", a->options.enable_bpf_stats,
               "hold BPF_ENABLE_STATS while running");
  app.add_flag("--force_own_start", a->options.force_own_start,
               "always stamp the issue time in a map (slower)");
  app.add_flag("--force_spill", a->options.force_spill,
               "account every completion in the per-CPU spill slots");
  app.add_flag("--nop_calibration", a->nop_calibration,
               "attach empty programs instead and print their bpf_stats");
  app.add_option("--max_inflight", a->options.max_inflight,
                 "own stamps the block programs hold at once")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 24));
  bool no_nvme = false;
  app.add_flag("--no_nvme", no_nvme, "leave out the NVMe status programs");
  bool queues = false;
  app.add_flag("--queues", queues,
               "also count per hardware context (the agent's --queues)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    *exit_code = 0;
    return false;
  } catch (const CLI::ParseError& e) {
    std::cerr << "pathwise_bpf_tool: " << e.what() << "\n";
    *exit_code = 2;
    return false;
  }
  if (no_nvme) a->options.nvme = false;
  if (queues) a->options.hctx_slots = pathwise::bpf::HctxSlotsFor(0);
  return true;
}

// utime+stime in clock ticks and VmRSS in kB of this process.
void SelfUsage(long* ticks, long* rss_kb) {
  *ticks = 0;
  *rss_kb = 0;
  std::ifstream stat("/proc/self/stat");
  std::string s((std::istreambuf_iterator<char>(stat)), {});
  const size_t close = s.rfind(')');
  if (close != std::string::npos) {
    std::istringstream in(s.substr(close + 2));
    std::string field;
    long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
      if (i == 14) utime = std::atol(field.c_str());
      if (i == 15) stime = std::atol(field.c_str());
    }
    *ticks = utime + stime;
  }
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) *rss_kb = std::atol(line.c_str() + 6);
  }
}

void Print(const BpfSampler& sampler, const SamplerSnapshot& s, double elapsed,
           long ticks, long max_rss_kb) {
  std::printf("mode %s\n", sampler.block_attach_mode().c_str());
  for (const std::string& n : sampler.notes())
    std::printf("note %s\n", n.c_str());
  std::printf("nvme %s\n", s.nvme_status_message.c_str());
  for (const auto& d : s.io) {
    std::printf(
        "io %s %s completed=%llu bytes=%llu latency_sum_ns=%llu errors=%llu "
        "hist_count=%llu p50_s=%.9f p99_s=%.9f\n",
        pathwise::model::ToString(d.dev).c_str(),
        std::string(pathwise::exporters::OpLabel(d.op)).c_str(),
        (unsigned long long)d.stats.completed,
        (unsigned long long)d.stats.bytes, (unsigned long long)d.stats.time_ns,
        (unsigned long long)d.stats.errors.value_or(0),
        (unsigned long long)d.stats.latency->Count(),
        d.stats.latency->Quantile(0.5), d.stats.latency->Quantile(0.99));
  }
  for (const auto& p : s.paths) {
    std::printf("path %s retries=%llu failovers=%llu",
                pathwise::model::ToString(p.dev).c_str(),
                (unsigned long long)p.stats.retries,
                (unsigned long long)p.stats.failovers);
    if (const auto& errors = p.stats.errors_by_class) {
      for (size_t i = 0; i < errors->size(); ++i) {
        std::printf(" %s=%llu",
                    std::string(pathwise::exporters::NvmeStatusClassLabel(
                                    pathwise::model::kNvmeErrorClasses[i]))
                        .c_str(),
                    (unsigned long long)(*errors)[i]);
      }
    }
    std::printf("\n");
  }
  for (pathwise::model::DropReason r : pathwise::model::kAllDropReasons) {
    std::printf("dropped %s %llu\n",
                std::string(pathwise::exporters::DropReasonLabel(r)).c_str(),
                (unsigned long long)s.dropped[static_cast<size_t>(r)]);
  }
  for (const auto& h : s.hctx) {
    std::printf(
        "hctx %s %s %d completed=%llu latency_sum_ns=%llu remote=%llu\n",
        pathwise::model::ToString(pathwise::model::DevId::FromKernel(h.key.dev))
            .c_str(),
        h.disk.c_str(), h.hctx, (unsigned long long)h.totals.count,
        (unsigned long long)h.totals.lat_sum_ns,
        (unsigned long long)h.totals.remote);
  }
  if (s.hctx_on) {
    std::printf("dropped hctx %llu\n", (unsigned long long)s.dropped_hctx);
  }
  std::printf("start_from_kernel %llu\nstart_from_own %llu\n",
              (unsigned long long)s.start_from_kernel,
              (unsigned long long)s.start_from_own);
  uint64_t run_ns = 0, runs = 0;
  for (const auto& p : s.programs) {
    std::printf(
        "prog %s %s id=%u run_time_ns=%llu run_cnt=%llu "
        "recursion_misses=%llu\n",
        p.name.c_str(), p.attach.c_str(), p.id,
        (unsigned long long)p.run_time_ns, (unsigned long long)p.run_count,
        (unsigned long long)p.recursion_misses);
    run_ns += p.run_time_ns;
    runs += p.run_count;
  }
  std::printf("prog_total run_time_ns=%llu run_cnt=%llu\n",
              (unsigned long long)run_ns, (unsigned long long)runs);
  std::printf("bpf_stats_enabled %d\n", s.bpf_stats_enabled ? 1 : 0);
  const double cpu_s = double(ticks) / double(sysconf(_SC_CLK_TCK));
  std::printf("self elapsed_s=%.3f cpu_s=%.3f cpu_pct=%.3f max_rss_kb=%ld\n",
              elapsed, cpu_s, elapsed > 0 ? 100.0 * cpu_s / elapsed : 0.0,
              max_rss_kb);
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

int NopCalibration(const Args& args, sigset_t* set) {
  bpf_nop* skel = bpf_nop__open_and_load();
  if (!skel || bpf_nop__attach(skel) != 0) {
    std::fprintf(stderr,
                 "pathwise_bpf_tool: cannot load/attach nop programs\n");
    if (skel) bpf_nop__destroy(skel);
    return 1;
  }
  if (!args.ready_file.empty()) std::ofstream(args.ready_file) << "ready\n";
  if (args.duration > 0) {
    timespec ts{static_cast<time_t>(args.duration), 0};
    sigtimedwait(set, nullptr, &ts);
  } else {
    int sig;
    sigwait(set, &sig);
  }
  for (bpf_program* p : {skel->progs.pw_nop_issue, skel->progs.pw_nop_done}) {
    bpf_prog_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) == 0) {
      std::printf("prog %s %s id=%u run_time_ns=%llu run_cnt=%llu\n", info.name,
                  bpf_program__section_name(p), info.id,
                  (unsigned long long)info.run_time_ns,
                  (unsigned long long)info.run_cnt);
    }
  }
  bpf_nop__destroy(skel);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (int rc; !ParseArgs(argc, argv, &args, &rc)) return rc;

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  if (args.nop_calibration) return NopCalibration(args, &set);

  auto sampler = BpfSampler::Create(args.options);
  if (!sampler.ok()) {
    std::fprintf(stderr, "pathwise_bpf_tool: %s\n",
                 sampler.status().ToString().c_str());
    return 1;
  }
  if (!args.ready_file.empty()) {
    std::ofstream(args.ready_file) << "ready\n";
  }
  const double start = Now();
  long max_rss = 0, ticks = 0, rss = 0;
  absl::StatusOr<SamplerSnapshot> snap = (*sampler)->Read();
  while (snap.ok()) {
    double wait = args.interval;
    if (args.duration > 0) {
      const double left = args.duration - (Now() - start);
      if (left <= 0) break;
      if (left < wait) wait = left;
    }
    timespec ts{static_cast<time_t>(wait),
                static_cast<long>((wait - static_cast<long>(wait)) * 1e9)};
    const int sig = sigtimedwait(&set, nullptr, &ts);
    snap = (*sampler)->Read();  // the agent's per-interval work
    SelfUsage(&ticks, &rss);
    if (rss > max_rss) max_rss = rss;
    if (sig > 0) break;
  }
  if (!snap.ok()) {
    std::fprintf(stderr, "pathwise_bpf_tool: %s\n",
                 snap.status().ToString().c_str());
    return 1;
  }
  SelfUsage(&ticks, &rss);
  if (rss > max_rss) max_rss = rss;
  Print(**sampler, *snap, Now() - start, ticks, max_rss);
  return 0;
}
