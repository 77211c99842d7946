// SPDX-License-Identifier: Apache-2.0
// pathwise_metrics_reference: writes docs/metrics-reference.md to stdout.
//
// There is no central list of families: each exporter file builds its own
// at scrape time from what the snapshot holds. So this renders what the
// agent and the datapath would export with every source populated (the
// eBPF sampler, probes, the kernel's diag/ counters, the queue map,
// actuators, the head iostats switch, the datapath, the HTTP server) and
// with the sysfs fallback, through the exporters' own builders, and
// documents every family those renderings hold (exporters/
// metrics_reference.h joins them with the table of sources). Exit 1, with
// the reasons on stderr, when a rendered family has no row in that table
// or a row was not rendered.
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "datapath/exposition.h"
#include "exporters/conn_guard.h"
#include "exporters/http_routes.h"
#include "exporters/metrics_reference.h"
#include "exporters/prometheus_families.h"
#include "model/synthetic.h"

namespace pathwise {
namespace {

using model::Op;

model::LatencyHistogram Latency(uint64_t ns, uint64_t n) {
  model::LatencyHistogram h;
  h.Observe(ns, n);
  return h;
}

// What the agent's eBPF sampler, scoring, probes and the kernel's diag/
// counters add to the synthetic topology.
void AddAgentSources(model::Snapshot& s) {
  model::Topology& t = s.topology;
  model::Scoring sc;
  for (model::Path& p : t.paths) {
    p.diag = {.failovers = 1, .command_retries = 2, .command_errors = 3};
    model::PathScoring ps;
    for (size_t g = 0; g < model::kOpGroupCount; ++g) {
      ps.latency_ewma_seconds[g] = 0.001;
      ps.weight[g] = 32;
    }
    ps.score = 100;
    ps.sample_age_seconds = 0.5;
    sc.paths[p.name] = ps;
    model::PathNvmeStats nvme;
    nvme.errors_by_class.emplace();
    nvme.retries = 1;
    nvme.failovers = 1;
    s.path_nvme[p.name] = nvme;
  }
  for (model::Head& h : t.heads) {
    h.diag = {.requeued_no_usable_path = 1, .failed_no_available_path = 0};
    model::HeadScoring hs;
    hs.paths_by_state[model::Index(model::PathHealth::kHealthy)] = 2;
    hs.latency_imbalance_ratio = 1.1;
    sc.heads[h.name] = hs;
  }
  for (model::Subsystem& sub : t.subsystems) {
    sc.iopolicy_recommended[sub.name] = {model::Iopolicy::kRoundRobin, ""};
    // Not UTF-8, as a device's Identify data may be: the repair's family.
    sub.serial = "SYN\xff";
  }
  for (model::Controller& c : t.controllers) {
    c.diag = {.command_errors = 0, .resets = 1, .reconnects = 1};
    model::ControllerProbeStats probe;
    probe.latency = Latency(50'000, 10);
    probe.latency_sum_ns = 500'000;
    s.controller_probe[c.name] = probe;
  }
  s.scoring = sc;

  model::IoStats disk;
  disk.op(Op::kRead) = model::OpStats{10, 40960, 1'000'000};
  disk.op(Op::kRead)->latency = Latency(100'000, 10);
  disk.op(Op::kRead)->errors = 0;
  s.device_io["sda"] = disk;

  model::SamplerStats sampler;
  sampler.programs = {{"pw_done_btf", 1000, 10}};
  s.sampler = sampler;
  s.collectors.push_back({"probe", 0, true, ""});
}

// The NVMe/TCP queue map of `serve --queues` with BPF and the sampler's
// per-queue counts, for the first controller and path.
model::QueueMap Queues(const model::Topology& t) {
  model::QueueMap m;
  m.online_cpus = 2;
  m.bpf_queues = true;
  model::TcpController c;
  c.name = t.controllers[0].name;
  c.queue_count = 3;
  c.netdev = "eth0";
  c.hctxs = {{0, {0}}, {1, {1}}};
  model::TcpQueueFlow f;
  f.socket = {.local_addr = "10.0.0.1",
              .local_port = 40000,
              .remote_addr = "10.0.0.2",
              .remote_port = 4420,
              .state = 1};
  f.socket.info = model::TcpSocketInfo{.rtt_us = 200, .bytes_sent = 1};
  f.qid = 1;
  f.io_cpu = 0;
  f.tx_queue = 0;
  f.rx_queue = 0;
  c.flows = {f};
  m.controllers = {c};
  model::Netdev d;
  d.name = "eth0";
  d.tx = {{.index = 0, .irq = 30}};
  d.rx = {{.index = 0, .irq = 30}};
  d.irqs = {{.number = 30, .name = "eth0-TxRx-0", .affinity = {0, 1}}};
  m.netdevs = {d};
  m.mismatches = {{.kind = model::QueueMismatchKind::kOversubscribed,
                   .controller = c.name,
                   .netdev = "eth0",
                   .io_queues = 2,
                   .nic_queues = 1}};
  m.hctx_io = true;
  model::HctxIo h{.index = 0, .cpus = {0}, .completed = 10};
  h.latency = Latency(100'000, 10);
  h.latency_sum_ns = 1'000'000;
  m.path_hctx = {{t.paths[0].name, c.name, {h}}};
  return m;
}

// `serve` with the eBPF sampler and every option that adds families.
model::Snapshot AgentWithEverything() {
  model::Snapshot s =
      model::MakeSyntheticSnapshot({.subsystems = 1,
                                    .heads_per_subsystem = 1,
                                    .controllers_per_subsystem = 2,
                                    .bpf = true});
  AddAgentSources(s);
  s.queues = Queues(s.topology);
  model::ActuatorReport a;
  a.mode = model::ActuateMode::kDryRun;
  a.decisions_total[{s.topology.subsystems[0].name, model::Iopolicy::kNuma,
                     model::Iopolicy::kRoundRobin,
                     model::DecisionResult::kDryRun}] = 1;
  s.actuator = a;
  model::HeadIostatsReport hi;
  hi.mode = model::HeadIostatsMode::kOff;
  hi.heads_off = 1;
  s.head_iostats = hi;
  return s;
}

// `pathwise datapath --policy=pathwise` over two paths.
std::vector<prometheus::MetricFamily> Datapath(
    const exporters::BuildInfo& build) {
  datapath::DatapathView v;
  v.device = "ublkb0";
  v.policy = policy::Policy::kPathwise;
  v.group.id = "uuid.0000-1";
  v.group.subsysnqn = "nqn.2024-01.io.pathwise:synthetic-0";
  std::vector<model::Controller> controllers(2);
  for (int i = 0; i < 2; ++i) {
    datapath::NamespacePath p;
    p.name = "nvme" + std::to_string(i) + "n1";
    p.generic = "ng" + std::to_string(i) + "n1";
    p.controller = "nvme" + std::to_string(i);
    p.controller_instance = i;
    p.subsysnqn = v.group.subsysnqn;
    p.nsid = 1;
    v.group.paths.push_back(p);
    controllers[i].name = p.controller;
    controllers[i].subsystem = "nvme-subsys0";
    controllers[i].transport = "tcp";
    controllers[i].state = model::ControllerState::kLive;
  }
  v.stats.paths.resize(2);
  for (datapath::PathStats& p : v.stats.paths) {
    p.RecordOp(Op::kRead, 4096, 100'000);
    p.selections = 1;
  }
  v.stats.requests = 2;
  v.status.resize(2);
  for (datapath::PathStatus& st : v.status)
    st.ana = model::AnaState::kOptimized;
  v.selector.inflight = {1, 0};
  v.selector.base_ns = {100'000, 120'000};
  v.selector.cap = {4, 4};
  const model::Topology t = datapath::DatapathTopology(
      v, {"nvme-subsys0", "nvme-subsys0"}, controllers);
  const model::Snapshot s = datapath::DatapathSnapshot(v, t);
  std::vector<prometheus::MetricFamily> f = exporters::BuildFamilies(&s, build);
  for (auto& x : datapath::DatapathFamilies(v, t)) f.push_back(std::move(x));
  return f;
}

constexpr char kIntro[] = R"(# Metrics reference

<!-- Generated by build/pathwise_metrics_reference from the exporter's code
(agent/metrics_reference_main.cc, exporters/metrics_reference.cc): do not
edit. Regenerate with
  ninja -C build pathwise_metrics_reference &&
    build/pathwise_metrics_reference > docs/metrics-reference.md
The test unit.metrics_reference fails while this file and the code differ. -->

Every metric family pathwise can export: the agent's `/metrics`
(`pathwise serve`, `pathwise snapshot`) and the userspace datapath's
(`pathwise datapath`), which shares the agent's names where the meaning is
the same. This page is generated by rendering snapshots with every source
populated through the exporter itself, so the names, types, label names and
help texts below are exactly what a scrape shows. The source and the last
column, what a scraper sees when that source is absent or turned off, come
from a table beside the families (`exporters/metrics_reference.cc`).

Conventions:

- Units are base units (`_seconds`, `_bytes`); counters end in `_total`.
- A histogram's series also carry `le` (its `_bucket` series) and come with
  `_sum` and `_count`; the protobuf exposition sends them as native
  histograms (see [Metrics](metrics.md#latency-histograms)).
- A StateSet (a `state`, `mode` or `iopolicy` label) has one series per
  state, 1 for the current one and 0 for the others.
- A family with no series is left out of the exposition; objects that
  vanish from the topology lose their series at the next collection.
- The last column says whether a family is exported with
  `--metrics.profile=default` (the default) or only with `full`, or is
  the datapath's own, which has no profile (its `/metrics` is always the
  full one, `pathwise_head_io_*` included); a family
  the default profile keeps may still have fewer series there (sparse
  buckets, only the current state of a path's StateSets, per-op series once
  nonzero): see [Metrics](metrics.md#what-earns-a-series-by-default).
- Sources: the **eBPF sampler** (`--bpf=auto|required`) and its **sysfs
  fallback** (`/sys/block/*/stat`, `--bpf=off` or where BPF cannot load);
  the **topology collector** (sysfs); the **scoring stage**; the
  **controller prober** (`--probe-interval`); the kernel's **diag/**
  counters; the **queue map** (`--queues`); the **actuators**
  (`--actuate`, `--head-iostats`); the **datapath**; the **HTTP server**.
)";

int Main() {
  const exporters::BuildInfo build{"0.0.0", "reference"};
  std::vector<prometheus::MetricFamily> all;
  const auto add = [&all](std::vector<prometheus::MetricFamily> f) {
    for (auto& x : f) all.push_back(std::move(x));
  };
  const model::Snapshot agent = AgentWithEverything();
  add(exporters::BuildFamilies(&agent, build));
  // The sysfs fallback: the counters every kernel has, and in-flight I/Os.
  const model::Snapshot sysfs = model::MakeSyntheticSnapshot({});
  add(exporters::BuildFamilies(&sysfs, build));
  add(Datapath(build));
  add(exporters::HttpServerFamilies(exporters::HttpServerCounters{}));

  // What the agent's default profile keeps: the same snapshots rendered
  // with it. The datapath's `/metrics` has no profile (it is always the
  // full one), nor have the HTTP server's families.
  std::set<std::string, std::less<>> in_default;
  std::set<std::string, std::less<>> agent_full;
  for (const model::Snapshot* s : {&agent, &sysfs}) {
    for (const auto& f : exporters::BuildFamilies(s, build))
      agent_full.insert(f.name);
  }
  const exporters::ExpositionOptions default_profile{
      .histogram_buckets = exporters::HistogramBuckets::kSparse,
      .profile = exporters::MetricsProfile::kDefault};
  for (const model::Snapshot* s : {&agent, &sysfs}) {
    for (const auto& f : exporters::BuildFamilies(s, build, default_profile))
      in_default.insert(f.name);
  }
  for (const auto& f :
       exporters::HttpServerFamilies(exporters::HttpServerCounters{}))
    in_default.insert(f.name);

  absl::StatusOr<std::vector<exporters::FamilyDoc>> docs =
      exporters::DocumentFamilies(all);
  if (!docs.ok()) {
    std::cerr << "pathwise_metrics_reference: the reference and the code "
                 "disagree:\n"
              << docs.status().message() << "\n";
    return 1;
  }
  std::vector<exporters::ReferenceColumn> columns =
      exporters::DefaultReferenceColumns();
  columns.push_back({"default profile",
                     [&in_default, &agent_full](const exporters::FamilyDoc& d) {
                       if (in_default.contains(d.name))
                         return std::string("yes");
                       if (agent_full.contains(d.name))
                         return std::string("full only");
                       return std::string("— (datapath)");
                     }});
  std::cout << exporters::MetricsReferenceMarkdown(*docs, columns, kIntro);
  return std::cout.good() ? 0 : 1;
}

}  // namespace
}  // namespace pathwise

int main() { return pathwise::Main(); }
