#include "lab/sim.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <new>

#include "scoring/scoring.h"

namespace pathwise::lab {

absl::string_view PolicyName(Policy p) {
  switch (p) {
    case Policy::kNuma:
      return "numa";
    case Policy::kRoundRobin:
      return "round-robin";
    case Policy::kQueueDepth:
      return "queue-depth";
    case Policy::kLatency:
      return "latency";
    case Policy::kPathwise:
      return "pathwise";
    case Policy::kHst:
      return "hst";
  }
  return "?";
}

std::optional<Policy> PolicyFromName(absl::string_view name) {
  for (Policy p : AllPolicies()) {
    if (PolicyName(p) == name) return p;
  }
  return std::nullopt;
}

std::vector<Policy> AllPolicies() {
  return {Policy::kNuma,    Policy::kRoundRobin, Policy::kQueueDepth,
          Policy::kLatency, Policy::kPathwise,   Policy::kHst};
}

namespace {

// Log-linear latency histogram: exact below 128 ns, then 64 sub-buckets per
// power of two (< 1.6% relative bucket width).
class LatencyHistogram {
 public:
  void Add(int64_t ns) {
    const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    const size_t i = Index(v);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++total_;
  }
  // The q-quantile (nearest rank), as the bucket's midpoint, in ns.
  double Quantile(double q) const {
    if (total_ == 0) return 0;
    const auto rank = static_cast<uint64_t>(
        std::max(1.0, std::ceil(q * static_cast<double>(total_))));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return Mid(i);
    }
    return Mid(counts_.size() - 1);
  }

 private:
  static size_t Index(uint64_t v) {
    if (v < 128) return v;
    const int e = 63 - __builtin_clzll(v);  // >= 7
    const uint64_t m = v >> (e - 6);        // 64..127
    return 128 + static_cast<size_t>(e - 7) * 64 + (m - 64);
  }
  static double Mid(size_t i) {
    if (i < 128) return static_cast<double>(i);
    const size_t e = (i - 128) / 64 + 7;
    const uint64_t m = (i - 128) % 64 + 64;
    const double lo = std::ldexp(static_cast<double>(m), e - 6);
    const double width = std::ldexp(1.0, e - 6);
    return lo + width / 2;
  }
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
};

// xoshiro256++ (Blackman and Vigna), seeded through splitmix64: the
// simulator's only source of randomness. A few times faster than
// std::mt19937_64, which was a tenth of the run time.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& w : s_) {
      seed += 0x9e3779b97f4a7c15;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
      z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
      w = z ^ (z >> 31);
    }
  }
  uint64_t operator()() {
    const uint64_t r = Rotl(s_[0] + s_[3], 23) + s_[0];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return r;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// -log(1-u) for u in [0, 1): the inverse CDF of a unit exponential, by
// linear interpolation in a table of 4096 exact values; the last interval
// (u > 1 - 2^-11, where the curve bends fastest) is computed exactly. The
// interpolation error is below 2e-6 absolute for u < 0.5 and below 0.03 %
// of the value elsewhere; a call to log1p was a sixth of the run time.
class ExpInverse {
 public:
  static constexpr int kN = 4096;
  ExpInverse() {
    for (int i = 0; i <= kN; ++i) {
      v_[i] = i < kN ? -std::log1p(-static_cast<double>(i) / kN) : 0;
    }
  }
  double operator()(double u) const {
    const double x = u * kN;
    const int i = static_cast<int>(x);
    if (i >= kN - 2) return -std::log1p(-u);
    return v_[i] + (x - i) * (v_[i + 1] - v_[i]);
  }

 private:
  double v_[kN + 1];
};
const ExpInverse& UnitExponential() {
  static const ExpInverse table;
  return table;
}

enum class EvKind : uint8_t { kComplete, kScript, kTick };

// The event queue: a 4-ary min-heap of 16-byte nodes ordered by (time,
// insertion sequence), so simultaneous events pop in insertion order. The
// second word packs the sequence (high 32 bits), the kind (2 bits) and the
// id (30 bits): comparing the two words compares (t, seq). A 4-ary heap of
// 16-byte nodes keeps a node's children in one cache line and is half as
// deep as a binary heap; pops move the hole to a leaf first (Floyd), which
// saves a comparison per level.
class EventQueue {
 public:
  static constexpr uint32_t kMaxId = (1u << 30) - 1;

  struct Ev {
    int64_t t;
    uint64_t w;  // seq << 32 | kind << 30 | id
    uint32_t seq() const { return static_cast<uint32_t>(w >> 32); }
    EvKind kind() const { return static_cast<EvKind>((w >> 30) & 3); }
    uint32_t id() const { return static_cast<uint32_t>(w) & kMaxId; }
  };

  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue() { Free(); }

  bool empty() const { return n_ == 0; }
  const Ev& top() const { return h_[0]; }

  // Returns the event's sequence number.
  uint32_t Push(int64_t t, uint32_t id, EvKind kind) {
    if (seq_ == UINT32_MAX) Renumber();
    const uint32_t seq = seq_++;
    const Ev e{t, static_cast<uint64_t>(seq) << 32 |
                      static_cast<uint64_t>(kind) << 30 | id};
    if (n_ == cap_) Grow();
    size_t i = n_++;
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!Less(e, h_[parent])) break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = e;
    return seq;
  }

  Ev Pop() {
    const Ev top = h_[0];
    const Ev last = h_[--n_];
    const size_t n = n_;
    if (n == 0) return top;
    size_t i = 0;
    for (;;) {
      const size_t c = 4 * i + 1;
      if (c >= n) break;
      size_t m;
      if (c + 4 <= n) {  // branch-free: the comparisons are unpredictable
        const size_t a = c + Less(h_[c + 1], h_[c]);
        const size_t b = c + 2 + Less(h_[c + 3], h_[c + 2]);
        m = Less(h_[b], h_[a]) ? b : a;
      } else {
        m = c;
        for (size_t k = c + 1; k < n; ++k) {
          if (Less(h_[k], h_[m])) m = k;
        }
      }
      h_[i] = h_[m];
      i = m;
    }
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!Less(last, h_[parent])) break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = last;
    return top;
  }

  // Called when the sequence would wrap (after 2^32 events): renumbers the
  // queued events 0..n-1 in their order, which keeps every comparison, and
  // tells the caller each event's old and new number.
  template <typename F>
  void SetRenumberHook(F&& f) {
    renumber_hook_ = std::forward<F>(f);
  }

 private:
  static bool Less(const Ev& a, const Ev& b) {
    // (t, w) as one 128-bit number: a compare and a subtract-with-borrow.
    using u128 = unsigned __int128;
    return (static_cast<u128>(static_cast<uint64_t>(a.t)) << 64 | a.w) <
           (static_cast<u128>(static_cast<uint64_t>(b.t)) << 64 | b.w);
  }
  void Renumber() {
    std::sort(h_, h_ + n_, Less);  // sorted: still a heap
    for (uint32_t k = 0; k < n_; ++k) {
      Ev& e = h_[k];
      const uint32_t old = e.seq();
      e.w = static_cast<uint64_t>(k) << 32 | (e.w & 0xffffffffu);
      if (renumber_hook_) renumber_hook_(e, old, k);
    }
    seq_ = static_cast<uint32_t>(n_);
  }
  // The nodes live at h_ = a 64-byte aligned block + 3 nodes, so that the
  // children of node i, 4i+1..4i+4, share one cache line.
  static constexpr std::align_val_t kAlign{64};
  void Grow() {
    const size_t cap = cap_ == 0 ? 1024 : cap_ * 2;
    Ev* base = static_cast<Ev*>(::operator new((cap + 3) * sizeof(Ev), kAlign));
    if (n_ > 0) std::copy(h_, h_ + n_, base + 3);
    Free();
    h_ = base + 3;
    cap_ = cap;
  }
  void Free() {
    if (h_ != nullptr) ::operator delete(h_ - 3, kAlign);
    h_ = nullptr;
  }
  Ev* h_ = nullptr;
  size_t n_ = 0, cap_ = 0;
  uint32_t seq_ = 0;
  std::function<void(const Ev&, uint32_t, uint32_t)> renumber_hook_;
};
using Ev = EventQueue::Ev;

constexpr int kGroups = 2;  // the workload issues reads and writes only

class Sim {
 public:
  Sim(const Scenario& sc, Policy policy, uint64_t seed)
      : sc_(sc), policy_(policy), rng_(seed) {
    const Workload& w = sc_.workload;
    cpus_ = w.cpus > 0 ? w.cpus : w.numjobs;
    n_ = static_cast<int>(sc_.paths.size());
    paths_.resize(n_);
    for (int i = 0; i < n_; ++i) {
      const PathSpec& spec = sc_.paths[i];
      PathState& p = paths_[i];
      p.ana = spec.ana;
      p.queues = spec.queues > 0 ? spec.queues : cpus_;
      p.conns.resize(p.queues);
      p.ring.assign(spec.parallelism, 0);
      p.ser_ns =
          spec.bandwidth > 0
              ? std::max<int64_t>(1, std::llround(w.bs * 1e9 / spec.bandwidth))
              : 0;
      p.segments = static_cast<int>((w.bs + spec.mss - 1) / spec.mss) + 2;
    }
    result_.policy = policy;
    heap_.SetRenumberHook([this](const Ev& e, uint32_t old, uint32_t now) {
      if (e.kind() == EvKind::kComplete && ios_[e.id()].pending == old) {
        ios_[e.id()].pending = now;
      }
    });
    result_.path_ios.assign(n_, 0);
    // Per-policy state.
    rr_last_ = -1;
    numa_current_ = -1;
    if (policy_ == Policy::kLatency) {
      lat_.assign(static_cast<size_t>(cpus_) * kGroups * n_, LatStat{});
      lat_window_start_.assign(static_cast<size_t>(cpus_) * kGroups, 0);
    }
    if (policy_ == Policy::kPathwise) {
      scoring::Config c;
      c.ewma_shift = sc_.pathwise.ewma_shift;
      scorer_.emplace(c);
      for (auto& g : pw_weight_) g.assign(n_, 0);
      pw_window_.assign(n_, PwWindow{});
      RecomputeCandidates();
      std::vector<std::optional<uint64_t>> none(n_);
      std::vector<bool> usable(n_);
      for (int i = 0; i < n_; ++i) usable[i] = Usable(i);
      const std::vector<uint32_t> w0 = scoring::ComputeWeights(none, usable);
      for (auto& g : pw_weight_) g = w0;
    }
    if (policy_ == Policy::kHst) hst_ewma_.assign(n_, 0);
  }

  PolicyResult Run() {
    RecomputeCandidates();
    for (size_t i = 0; i < sc_.events.size(); ++i) {
      Push(sc_.events[i].at_ns, static_cast<uint32_t>(i), EvKind::kScript);
    }
    if (policy_ == Policy::kPathwise) {
      Push(sc_.pathwise.window_ns, 0, EvKind::kTick);
    }
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
      ios_[s].cpu = (s / w.iodepth) % cpus_;
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
          PathwiseTick();
          Push(now_ + sc_.pathwise.window_ns, 0, EvKind::kTick);
          break;
      }
    }
    const double secs = static_cast<double>(sc_.duration_ns) / 1e9;
    for (int op = 0; op < 2; ++op) {
      OpResult& r = result_.ops[op];
      r.mib_s = static_cast<double>(r.bytes) / secs / 1048576.0;
      r.iops = static_cast<double>(r.ios) / secs;
      r.p50_ms = hist_[op].Quantile(0.5) / 1e6;
      r.p99_ms = hist_[op].Quantile(0.99) / 1e6;
      r.p999_ms = hist_[op].Quantile(0.999) / 1e6;
    }
    return result_;
  }

 private:
  struct Io {
    int cpu = 0;
    uint8_t op = 0;  // 0 read, 1 write
    int path = -1;   // -1: not on a path (parked)
    int conn = 0;
    int64_t submit_ns = 0;       // head submission
    int64_t path_submit_ns = 0;  // submission to the current path
    uint32_t pending = 0;        // sequence number of its completion event
  };
  struct Conn {
    int64_t hol_from = 0, hol_until = 0;  // delivery blocked in this span
    int64_t send_free = 0;  // when the window lets the next I/O's segments go
    int inflight = 0;
    // Congestion window, in segments (Reno-like, see lab/README.md): it
    // bounds the segments in flight, so whether a loss can be repaired by
    // fast retransmit (dupthresh later segments must be in flight).
    double cwnd = kInitialCwnd;
    double ssthresh = kMaxCwnd;
  };
  static constexpr double kInitialCwnd = 10;  // Linux's initial window
  static constexpr double kMaxCwnd = 1 << 20;
  struct PathState {
    bool up = true;
    std::string ana;
    int64_t extra_delay_ns = 0;
    double loss = 0;
    double no_loss = 1;  // (1 - loss)^segments
    int queues = 1;
    std::vector<Conn> conns;
    std::vector<int64_t> ring;  // finish times of the target's servers
    size_t ring_head = 0;
    int64_t link_free[2] = {0, 0};  // host->target, target->host
    int64_t ser_ns = 0;
    int segments = 1;
    int inflight = 0;
    uint64_t failovers_window = 0;
  };
  struct LatStat {  // the seed's per-CPU, per-op-group, per-path state
    uint64_t sum = 0;
    uint64_t count = 0;
    std::optional<uint64_t> ewma;
    int64_t credit = 0;
  };
  struct PwWindow {
    std::array<scoring::OpSample, scoring::kOpGroups> ops;
  };

  uint32_t Push(int64_t t, uint32_t id, EvKind kind) {
    return heap_.Push(t, id, kind);
  }

  double Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  bool Usable(int i) const {
    const PathState& p = paths_[i];
    return p.up && (p.ana == "optimized" || p.ana == "non-optimized");
  }

  // The kernel's rule: optimized paths if any, else non-optimized ones.
  void RecomputeCandidates() {
    cand_.clear();
    for (int i = 0; i < n_; ++i) {
      if (paths_[i].up && paths_[i].ana == "optimized") cand_.push_back(i);
    }
    if (cand_.empty()) {
      for (int i = 0; i < n_; ++i) {
        if (paths_[i].up && paths_[i].ana == "non-optimized") {
          cand_.push_back(i);
        }
      }
    }
    is_cand_.assign(n_, false);
    for (int i : cand_) is_cand_[i] = true;
  }

  int SelectNuma() {
    if (numa_current_ >= 0 && is_cand_[numa_current_]) return numa_current_;
    const int node = sc_.workload.numa_node;
    int best = -1, best_distance = 0;
    for (int i : cand_) {
      const int pn = sc_.paths[i].numa_node;
      const int distance = (pn < 0 || pn == node) ? 10 : 20;
      if (best < 0 || distance < best_distance) {
        best = i;
        best_distance = distance;
      }
    }
    numa_current_ = best;
    return best;
  }

  int SelectRoundRobin() {
    for (int k = 1; k <= n_; ++k) {
      const int i = ((rr_last_ < 0 ? -1 : rr_last_) + k + n_) % n_;
      if (is_cand_[i]) return rr_last_ = i;
    }
    return -1;
  }

  int SelectQueueDepth() {
    int best = -1, depth = 0;
    for (int i : cand_) {
      if (best < 0 || paths_[i].inflight < depth) {
        best = i;
        depth = paths_[i].inflight;
        if (depth == 0) break;
      }
    }
    return best;
  }

  LatStat& Lat(int cpu, int g, int path) {
    return lat_[(static_cast<size_t>(cpu) * kGroups + g) * n_ + path];
  }

  // Weighted round-robin by credits, per CPU and op group: the first path in
  // list order with credit left takes the I/O; when every candidate is out of
  // credit, each gets its weight again.
  int SelectLatency(int cpu, int g) {
    if (cand_.empty()) return -1;
    for (int pass = 0; pass < 2; ++pass) {
      for (int i : cand_) {
        LatStat& s = Lat(cpu, g, i);
        if (s.credit > 0) {
          --s.credit;
          return i;
        }
      }
      std::vector<std::optional<uint64_t>> ewma(n_);
      std::vector<bool> usable(n_, false);
      for (int i : cand_) {
        ewma[i] = Lat(cpu, g, i).ewma;
        usable[i] = true;
      }
      const std::vector<uint32_t> w = scoring::ComputeWeights(ewma, usable);
      for (int i : cand_) Lat(cpu, g, i).credit = w[i];
    }
    return cand_.front();
  }

  void LatencyComplete(const Io& io, int64_t lat) {
    LatStat& s = Lat(io.cpu, io.op, io.path);
    s.sum += static_cast<uint64_t>(lat);
    ++s.count;
    int64_t& start = lat_window_start_[io.cpu * kGroups + io.op];
    if (now_ - start < sc_.latency.window_ns) return;
    start = now_;
    for (int i = 0; i < n_; ++i) {
      LatStat& t = Lat(io.cpu, io.op, i);
      if (t.count == 0) continue;
      const uint64_t mean = t.sum / t.count;
      t.ewma = t.ewma.has_value()
                   ? scoring::EwmaStep(*t.ewma, mean, sc_.latency.ewma_shift)
                   : mean;
      t.sum = 0;
      t.count = 0;
    }
  }

  // Weighted least-outstanding: the candidate with the least
  // (in-flight + 1) / weight, weights from the scoring library.
  int SelectPathwise(int g) {
    const std::vector<uint32_t>& w = pw_weight_[g];
    int best = -1;
    for (int i : cand_) {
      if (w[i] == 0) continue;
      if (best < 0 ||
          static_cast<uint64_t>(paths_[i].inflight + 1) * w[best] <
              static_cast<uint64_t>(paths_[best].inflight + 1) * w[i]) {
        best = i;
      }
    }
    return best >= 0 ? best : SelectQueueDepth();
  }

  void PathwiseTick() {
    std::vector<scoring::PathWindow> window(n_);
    for (int i = 0; i < n_; ++i) {
      scoring::PathWindow& pw = window[i];
      pw.path = sc_.paths[i].name;
      pw.ops = pw_window_[i].ops;
      pw.usable = Usable(i);
      pw.failovers = paths_[i].failovers_window;
      pw.numa_node = sc_.paths[i].numa_node;
      pw_window_[i] = PwWindow{};
      paths_[i].failovers_window = 0;
    }
    scorer_->Update(window);
    for (int g = 0; g < kGroups; ++g) {
      for (int i = 0; i < n_; ++i) {
        pw_weight_[g][i] = scorer_->paths()[i].weight[g];
      }
    }
  }

  int SelectHst() {
    int best = -1;
    for (int i : cand_) {
      if (best < 0 ||
          static_cast<unsigned __int128>(paths_[i].inflight + 1) *
                  hst_ewma_[i] <
              static_cast<unsigned __int128>(paths_[best].inflight + 1) *
                  hst_ewma_[best]) {
        best = i;
      }
    }
    return best;
  }

  int Select(const Io& io) {
    switch (policy_) {
      case Policy::kNuma:
        return SelectNuma();
      case Policy::kRoundRobin:
        return SelectRoundRobin();
      case Policy::kQueueDepth:
        return SelectQueueDepth();
      case Policy::kLatency:
        return SelectLatency(io.cpu, io.op);
      case Policy::kPathwise:
        return SelectPathwise(io.op);
      case Policy::kHst:
        return SelectHst();
    }
    return -1;
  }

  // Time to recover one lost segment: fast retransmit (one round trip) when
  // enough later segments are in flight to produce duplicate ACKs, else the
  // retransmission timer; a lost retransmission waits for the timer, which
  // doubles each time.
  int64_t Recovery(const PathState& p, const PathSpec& spec, bool fast,
                   bool* timeout) {
    const int64_t rtt = spec.latency_ns + p.extra_delay_ns;
    int64_t rto = std::max(sc_.tcp.rto_min_ns, rtt);
    int64_t d = 0;
    if (fast) {
      d = rtt;
      if (Uniform() >= p.loss) return d;
    }
    *timeout = true;
    d += rto;
    while (Uniform() < p.loss) {
      rto = std::min(rto * 2, sc_.tcp.rto_max_ns);
      d += rto;
    }
    return d;
  }

  // Each delivered segment opens the window by one (slow start) or by
  // 1/cwnd (congestion avoidance).
  // (Slow start adds its segments at once; in congestion avoidance, with a
  // window of 64 or more, the I/O's k segments add k/cwnd at once, the
  // per-segment sum to within k^2/cwnd^3; below 64, segment by segment.)
  static void GrowCwnd(Conn& c, int segments) {
    if (c.cwnd >= kMaxCwnd) return;
    double k = segments;
    if (c.cwnd < c.ssthresh) {
      const double ss = std::min(k, std::ceil(c.ssthresh - c.cwnd));
      c.cwnd += ss;
      k -= ss;
    }
    if (k <= 0) return;
    if (c.cwnd >= 64) {
      c.cwnd += k / c.cwnd;
      return;
    }
    for (; k > 0; --k) c.cwnd += 1.0 / c.cwnd;
  }

  void SubmitToPath(int id, int pi) {
    Io& io = ios_[id];
    PathState& p = paths_[pi];
    const PathSpec& spec = sc_.paths[pi];
    io.path = pi;
    io.conn = io.cpu % p.queues;
    io.path_submit_ns = now_;
    Conn& c = p.conns[io.conn];
    ++p.inflight;
    ++c.inflight;

    int64_t t = now_;
    if (p.ser_ns > 0) {  // the link, one per direction
      int64_t& free = p.link_free[io.op == 0 ? 1 : 0];
      free = std::max(t, free) + p.ser_ns;
      t = free;
    }
    if (spec.parallelism > 0) {  // FIFO multi-server target
      int64_t& slot = p.ring[p.ring_head];
      slot = std::max(t, slot) + spec.service_ns;
      t = slot;
      if (++p.ring_head == p.ring.size()) p.ring_head = 0;
    } else {
      t += spec.service_ns;
    }
    // The congestion window paces the connection: at most cwnd segments
    // per round trip, so the I/O's segments take segments/cwnd round trips
    // (FIFO per connection).
    const int64_t rtt = spec.latency_ns + p.extra_delay_ns;
    c.send_free =
        std::max(t, c.send_free) +
        static_cast<int64_t>(p.segments * static_cast<double>(rtt) / c.cwnd);
    t = c.send_free;
    t += rtt;
    if (spec.spread_ns > 0) {
      t += static_cast<int64_t>(exp_(Uniform()) *
                                static_cast<double>(spec.spread_ns));
    }
    if (p.loss > 0) {
      // Later segments in flight on the connection, which the congestion
      // window bounds: fewer than dupthresh and only the timer recovers.
      const double in_flight =
          std::min(c.cwnd, static_cast<double>(c.inflight) * p.segments);
      const bool fast = in_flight - 1 >= sc_.tcp.dupthresh;
      bool timeout = false;
      // One draw decides whether any of the k segments is lost, with
      // probability 1-(1-p)^k; only then is the first lost one found by
      // inversion and the later ones drawn one by one.
      int64_t delay = 0;
      const double u = Uniform();
      if (u >= p.no_loss) {
        const double any = 1 - p.no_loss;
        const double target = (u - p.no_loss) / any;
        double acc = 0, q = 1;
        int first = 0;
        for (; first < p.segments - 1; ++first) {
          acc += q * p.loss / any;
          if (target < acc) break;
          q *= 1 - p.loss;
        }
        delay = Recovery(p, spec, fast, &timeout);
        for (int s = first + 1; s < p.segments; ++s) {
          if (Uniform() < p.loss) {
            delay = std::max(delay, Recovery(p, spec, fast, &timeout));
          }
        }
        // Reno: a timeout restarts from one segment, fast recovery halves.
        c.ssthresh = std::max(c.cwnd / 2, 2.0);
        c.cwnd = timeout ? 1.0 : c.ssthresh;
      } else {
        GrowCwnd(c, p.segments);
      }
      if (delay > 0) {
        if (t > c.hol_until) c.hol_from = t;  // a new stall
        c.hol_until = std::max(c.hol_until, t + delay);
        t += delay;
      }
    }
    if (p.loss <= 0) GrowCwnd(c, p.segments);
    // In-order delivery on the connection: wait out a stall in progress.
    if (t >= c.hol_from && t < c.hol_until) t = c.hol_until;
    io.pending = Push(t, static_cast<uint32_t>(id), EvKind::kComplete);
  }

  void Submit(int id) {
    const int pi = Select(ios_[id]);
    if (pi < 0) {
      ios_[id].path = -1;
      parked_.push_back(id);
      return;
    }
    SubmitToPath(id, pi);
  }

  void NewIo(int id) {
    Io& io = ios_[id];
    io.op = Uniform() < sc_.workload.read_fraction ? 0 : 1;
    io.submit_ns = now_;
    Submit(id);
  }

  void LeavePath(Io& io) {
    PathState& p = paths_[io.path];
    --p.inflight;
    --p.conns[io.conn].inflight;
  }

  void Complete(int id) {
    Io& io = ios_[id];
    const int pi = io.path;
    LeavePath(io);
    const int64_t path_lat = now_ - io.path_submit_ns;
    OpResult& r = result_.ops[io.op];
    ++r.ios;
    r.bytes += sc_.workload.bs;
    hist_[io.op].Add(now_ - io.submit_ns);
    ++result_.path_ios[pi];
    switch (policy_) {
      case Policy::kLatency:
        LatencyComplete(io, path_lat);
        break;
      case Policy::kPathwise: {
        scoring::OpSample& s = pw_window_[pi].ops[io.op];
        ++s.count;
        s.latency_sum_ns += static_cast<uint64_t>(path_lat);
        break;
      }
      case Policy::kHst: {
        uint64_t& e = hst_ewma_[pi];
        e = e == 0 ? static_cast<uint64_t>(path_lat)
                   : scoring::EwmaStep(e, static_cast<uint64_t>(path_lat),
                                       sc_.hst.ewma_shift);
        break;
      }
      default:
        break;
    }
    io.path = -1;
    NewIo(id);
  }

  void ApplyScript(const Event& e) {
    PathState& p = paths_[e.path];
    switch (e.kind) {
      case EventKind::kDelay:
        p.extra_delay_ns = e.delay_ns;
        break;
      case EventKind::kLoss:
        p.loss = e.loss;
        p.no_loss = std::pow(1 - e.loss, p.segments);
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
    RecomputeCandidates();
    // Like nvme_mpath_revalidate_paths(): a path change clears the cached
    // current path, so numa chooses again.
    numa_current_ = -1;
    if (e.kind == EventKind::kDown) {
      // In-flight I/O fails over: resubmitted now to another path.
      for (size_t id = 0; id < ios_.size(); ++id) {
        Io& io = ios_[id];
        if (io.path != e.path) continue;
        LeavePath(io);
        io.path = -1;
        ++p.failovers_window;
        ++result_.failovers;
        Submit(static_cast<int>(id));
      }
      for (Conn& c : p.conns) c = Conn{};
    }
    if (!cand_.empty() && !parked_.empty()) {
      std::vector<int> parked;
      parked.swap(parked_);
      for (int id : parked) Submit(id);
    }
  }

  const Scenario& sc_;
  const Policy policy_;
  Rng rng_;
  const ExpInverse& exp_ = UnitExponential();
  int cpus_ = 1;
  int n_ = 0;
  int64_t now_ = 0;
  EventQueue heap_;
  std::vector<PathState> paths_;
  std::vector<Io> ios_;
  std::vector<int> parked_;
  std::vector<int> cand_;
  std::vector<bool> is_cand_;
  PolicyResult result_;
  LatencyHistogram hist_[2];
  // Policy state.
  int numa_current_ = -1;
  int rr_last_ = -1;
  std::vector<LatStat> lat_;
  std::vector<int64_t> lat_window_start_;
  std::optional<scoring::HeadScorer> scorer_;
  std::array<std::vector<uint32_t>, kGroups> pw_weight_;
  std::vector<PwWindow> pw_window_;
  std::vector<uint64_t> hst_ewma_;
};

}  // namespace

PolicyResult Simulate(const Scenario& scenario, Policy policy, uint64_t seed) {
  return Sim(scenario, policy, seed).Run();
}

}  // namespace pathwise::lab
