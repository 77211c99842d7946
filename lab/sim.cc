// SPDX-License-Identifier: Apache-2.0
#include "lab/sim.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/base/attributes.h"
#include "lab/event_queue.h"
#include "lab/latency_histogram.h"
#include "lab/random.h"
#include "lab/target.h"
#include "lab/tcp.h"
#include "policy/selector.h"
#include "policy/selectors.h"
#include "scoring/scoring.h"

namespace pathwise::lab {
namespace {

using Ev = EventQueue::Ev;

int Cpus(const Workload& w) { return w.cpus > 0 ? w.cpus : w.numjobs; }

// The simulator core: the workload's I/Os, the paths' scripted state, and the
// wiring of the target and TCP models with a path selector, by events.
// Compiled once per concrete selector type (policy::VisitSelector), so the
// per-I/O calls into the selector are direct and inline: through the virtual
// interface they cost 4-7 % more instructions per policy.
//
// The per-event helpers of the models (Rng, EventQueue::Push, Target::Serve,
// TcpPath::Send/Deliver, LatencyHistogram::Observe) are marked always-inline:
// out of this file they have external linkage, and GCC's -O2 inliner then
// left several of them as calls, which cost another ~5 %.
template <typename S>
class Sim {
 public:
  Sim(const Scenario& sc, uint64_t seed, S selector,
      const IoObserver* observer);
  PolicyResult Run();

 private:
  struct Io {
    policy::IoRequest req;  // cpu, op group (read or write), node, size
    int path = -1;          // -1: not on a path (parked)
    int conn = 0;
    int64_t submit_ns = 0;       // head submission
    int64_t path_submit_ns = 0;  // submission to the current path
    uint32_t pending = 0;        // sequence number of its completion event
    int failovers = 0;           // paths that failed it over
  };
  struct PathState {
    PathState(const PathSpec& spec, int queues, const Workload& w)
        : ana(spec.ana),
          tcp(queues, static_cast<int>((w.bs + spec.mss - 1) / spec.mss) + 2),
          target(spec, w.bs) {}
    bool up = true;
    model::AnaState ana;
    int64_t extra_delay_ns = 0;
    TcpPath tcp;
    Target target;
  };

  static int Op(const Io& io) { return static_cast<int>(io.req.op); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Push(int64_t t, uint32_t id,
                                             EvKind kind) {
    return heap_.Push(t, id, kind);
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE double Uniform() { return rng_.Uniform(); }
  // Tells the selector the paths' current state; returns whether any path
  // is usable.
  bool UpdatePaths();
  void SubmitToPath(int id, int pi);
  void Submit(int id);
  void NewIo(int id);
  // The host's cost (cpu_per_io, host_latency) before the path is chosen.
  void HostThenSubmit(int id);
  void LeavePath(Io& io);
  void Complete(int id);
  void ApplyScript(const Event& e);

  const Scenario& sc_;
  Rng rng_;
  const ExpInverse& exp_ = UnitExponential();
  int cpus_ = 1;
  int n_ = 0;
  int64_t now_ = 0;
  EventQueue heap_;
  std::vector<PathState> paths_;
  std::vector<policy::PathInfo> path_info_;
  S selector_;
  int64_t tick_ns_ = 0;  // the selector's tick interval; 0: none
  std::vector<Io> ios_;
  std::vector<int> parked_;
  std::vector<int64_t> cpu_free_;  // when each CPU is next idle
  bool any_usable_ = false;
  PolicyResult result_;
  LatencyHistogram hist_[2];
  const IoObserver* observer_;  // null: none
};

template <typename S>
Sim<S>::Sim(const Scenario& sc, uint64_t seed, S selector,
            const IoObserver* observer)
    : sc_(sc), rng_(seed), selector_(std::move(selector)), observer_(observer) {
  const Workload& w = sc_.workload;
  cpus_ = Cpus(w);
  n_ = static_cast<int>(sc_.paths.size());
  paths_.reserve(n_);
  for (const PathSpec& spec : sc_.paths) {
    paths_.emplace_back(spec, spec.queues > 0 ? spec.queues : cpus_, w);
  }
  // Each path's loss steps, in the script's (time) order.
  std::vector<std::vector<std::pair<int64_t, double>>> loss(n_);
  for (const Event& e : sc_.events) {
    if (e.kind == EventKind::kLoss) loss[e.path].emplace_back(e.at_ns, e.loss);
  }
  for (int i = 0; i < n_; ++i) {
    paths_[i].tcp.SetLossSchedule(loss[i]);
    paths_[i].tcp.SetCubic(sc_.tcp.congestion == TcpModel::Congestion::kCubic);
    paths_[i].tcp.SetWindowLimit(static_cast<double>(sc_.tcp.window_bytes) /
                                 static_cast<double>(sc_.paths[i].mss));
  }
  result_.policy = selector_.policy();
  heap_.SetRenumberHook([this](const Ev& e, uint32_t old, uint32_t now) {
    if (e.kind() == EvKind::kComplete && ios_[e.id()].pending == old) {
      ios_[e.id()].pending = now;
    }
  });
  result_.path_ios.assign(n_, 0);
  cpu_free_.assign(cpus_, 0);
  tick_ns_ = selector_.tick_interval_ns();
  path_info_.resize(n_);
  for (int i = 0; i < n_; ++i) {
    path_info_[i].numa_node = sc_.paths[i].numa_node;
    path_info_[i].controller = i;  // each path has its own controller
  }
  UpdatePaths();
}

template <typename S>
bool Sim<S>::UpdatePaths() {
  any_usable_ = false;
  for (int i = 0; i < n_; ++i) {
    const PathState& p = paths_[i];
    policy::PathInfo& info = path_info_[i];
    info.optimized = p.ana == model::AnaState::kOptimized;
    info.usable =
        p.up && scoring::IsUsable(p.ana, model::ControllerState::kLive);
    any_usable_ = any_usable_ || info.usable;
  }
  selector_.SetPaths(path_info_);
  return any_usable_;
}

template <typename S>
PolicyResult Sim<S>::Run() {
  for (size_t i = 0; i < sc_.events.size(); ++i) {
    Push(sc_.events[i].at_ns, static_cast<uint32_t>(i), EvKind::kScript);
  }
  if (tick_ns_ > 0) Push(tick_ns_, 0, EvKind::kTick);
  // Script events at time 0 apply before the first I/O.
  while (!heap_.empty() && heap_.top().t == 0 &&
         heap_.top().kind() == EvKind::kScript) {
    const Ev e = heap_.Pop();
    ApplyScript(sc_.events[e.id()]);
  }
  const Workload& w = sc_.workload;
  const int slots = w.numjobs * w.iodepth;
  ios_.resize(slots);
  for (int s = 0; s < slots; ++s) {
    policy::IoRequest& req = ios_[s].req;
    req.cpu = (s / w.iodepth) % cpus_;
    req.numa_node = w.numa_node;
    req.bytes = w.bs;
    NewIo(s);
  }
  while (!heap_.empty()) {
    if (heap_.top().t > sc_.duration_ns) break;
    const Ev e = heap_.Pop();
    now_ = e.t;
    ++result_.events;
    switch (e.kind()) {
      case EvKind::kComplete: {
        const uint32_t id = e.id();
        if (ios_[id].pending == e.seq() && ios_[id].path >= 0) Complete(id);
        break;
      }
      case EvKind::kScript:
        ApplyScript(sc_.events[e.id()]);
        break;
      case EvKind::kTick:
        selector_.Tick(now_);
        Push(now_ + tick_ns_, 0, EvKind::kTick);
        break;
      case EvKind::kSubmit:
        Submit(static_cast<int>(e.id()));
        break;
    }
  }
  const double secs = static_cast<double>(sc_.duration_ns) / 1e9;
  for (int op = 0; op < 2; ++op) {
    OpResult& r = result_.ops[op];
    r.mib_s = static_cast<double>(r.bytes) / secs / 1048576.0;
    r.iops = static_cast<double>(r.ios) / secs;
    r.p50_ms = QuantileMs(hist_[op], 0.5);
    r.p99_ms = QuantileMs(hist_[op], 0.99);
    r.p999_ms = QuantileMs(hist_[op], 0.999);
  }
  return result_;
}

// The I/O meets, in order: the target (its link and servers), the
// connection's congestion window, the round trip with its jitter, and TCP's
// loss recovery and in-order delivery (lab/README.md, "The model").
template <typename S>
void Sim<S>::SubmitToPath(int id, int pi) {
  Io& io = ios_[id];
  PathState& p = paths_[pi];
  const PathSpec& spec = sc_.paths[pi];
  io.path = pi;
  io.conn = io.req.cpu % p.tcp.queues();
  io.path_submit_ns = now_;
  TcpConn& c = p.tcp.conn(io.conn);
  io.req.ahead = selector_.inflight(pi);
  selector_.OnSubmit(pi, io.req, now_);
  ++c.inflight;

  int64_t t = p.target.Serve(now_, Op(io) == 0);
  const int64_t rtt = spec.latency_ns + p.extra_delay_ns;
  const int64_t sent = p.tcp.Send(c, t, rtt);
  t = sent + rtt;
  if (spec.spread_ns > 0) {
    t += static_cast<int64_t>(exp_(Uniform()) *
                              static_cast<double>(spec.spread_ns));
  }
  t = p.tcp.Deliver(c, t, rtt, sc_.tcp, rng_, sent);
  io.pending = Push(t, static_cast<uint32_t>(id), EvKind::kComplete);
}

template <typename S>
void Sim<S>::Submit(int id) {
  const int pi = selector_.Select(ios_[id].req);
  if (pi == policy::kNoPath) {
    ios_[id].path = -1;
    parked_.push_back(id);
    return;
  }
  SubmitToPath(id, pi);
}

template <typename S>
void Sim<S>::NewIo(int id) {
  Io& io = ios_[id];
  io.req.op = Uniform() < sc_.workload.read_fraction ? model::OpGroup::kRead
                                                     : model::OpGroup::kWrite;
  io.submit_ns = now_;
  io.failovers = 0;
  HostThenSubmit(id);
}

template <typename S>
void Sim<S>::HostThenSubmit(int id) {
  const Workload& w = sc_.workload;
  if (w.cpu_per_io_ns == 0 && w.host_latency_ns == 0) {
    Submit(id);
    return;
  }
  int64_t t = now_;
  if (w.cpu_per_io_ns > 0) {
    int64_t& free = cpu_free_[ios_[id].req.cpu];
    free = std::max(free, t) + w.cpu_per_io_ns;
    t = free;
  }
  Push(t + w.host_latency_ns, static_cast<uint32_t>(id), EvKind::kSubmit);
}

template <typename S>
void Sim<S>::LeavePath(Io& io) {
  --paths_[io.path].tcp.conn(io.conn).inflight;
}

template <typename S>
void Sim<S>::Complete(int id) {
  Io& io = ios_[id];
  const int pi = io.path;
  LeavePath(io);
  const int64_t path_lat = now_ - io.path_submit_ns;
  OpResult& r = result_.ops[Op(io)];
  ++r.ios;
  r.bytes += sc_.workload.bs;
  hist_[Op(io)].Observe(static_cast<uint64_t>(now_ - io.submit_ns));
  ++result_.path_ios[pi];
  selector_.OnComplete(pi, io.req,
                       {.now_ns = now_, .latency_ns = path_lat, .ok = true});
  if (observer_ != nullptr) {
    (*observer_)({.op = Op(io),
                  .path = pi,
                  .failovers = io.failovers,
                  .submit_ns = io.submit_ns,
                  .path_submit_ns = io.path_submit_ns,
                  .complete_ns = now_});
  }
  io.path = -1;
  NewIo(id);
}

template <typename S>
void Sim<S>::ApplyScript(const Event& e) {
  PathState& p = paths_[e.path];
  switch (e.kind) {
    case EventKind::kDelay:
      p.extra_delay_ns = e.delay_ns;
      break;
    case EventKind::kLoss:  // TcpPath has the schedule (the constructor)
      break;
    case EventKind::kDown:
      p.up = false;
      break;
    case EventKind::kUp:
      p.up = true;
      break;
    case EventKind::kAna:
      p.ana = e.ana;
      break;
  }
  // Every path event reaches the selector, which clears its cached choices
  // as nvme_mpath_revalidate_paths() does.
  UpdatePaths();
  if (e.kind == EventKind::kDown) {
    // In-flight I/O fails over: resubmitted now to another path.
    for (size_t id = 0; id < ios_.size(); ++id) {
      Io& io = ios_[id];
      if (io.path != e.path) continue;
      LeavePath(io);
      selector_.OnComplete(io.path, io.req,
                           {.now_ns = now_,
                            .latency_ns = now_ - io.path_submit_ns,
                            .ok = false});
      io.path = -1;
      ++io.failovers;
      ++result_.failovers;
      Submit(static_cast<int>(id));
    }
    p.tcp.ResetConnections();
  }
  if (any_usable_ && !parked_.empty()) {
    std::vector<int> parked;
    parked.swap(parked_);
    for (int id : parked) Submit(id);
  }
}

}  // namespace

PolicyResult Simulate(const Scenario& scenario, policy::Policy policy,
                      uint64_t seed, const IoObserver& observer) {
  const policy::PolicyParams params{.latency = scenario.latency,
                                    .pathwise = scenario.pathwise,
                                    .hst = scenario.hst};
  const policy::SelectorOptions options{.cpus = Cpus(scenario.workload),
                                        .start_ns = 0};
  return policy::VisitSelector(policy, params, options, [&](auto& selector) {
    using S = std::decay_t<decltype(selector)>;
    return Sim<S>(scenario, seed, std::move(selector),
                  observer ? &observer : nullptr)
        .Run();
  });
}

}  // namespace pathwise::lab
