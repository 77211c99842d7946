// SPDX-License-Identifier: Apache-2.0
#include "collectors/queue_hctx.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "bpf/hctx_decode.h"
#include "collectors/queue_parse.h"
#include "model/topology.h"
#include "model/types.h"

namespace pathwise::collectors {
namespace {

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

void SatAdd(uint64_t& a, uint64_t b) {
  a = a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

std::string NvmeDiskController(absl::string_view disk) {
  if (std::optional<model::NvmePathName> p = model::ParseNvmePathName(disk)) {
    return absl::StrCat("nvme", p->controller);
  }
  // nvme<C>n<N>: a namespace without multipath, on controller C.
  absl::string_view rest = disk;
  if (!absl::ConsumePrefix(&rest, "nvme")) return "";
  const size_t n = rest.find('n');
  if (n == rest.npos || !AllDigits(rest.substr(0, n)) ||
      !AllDigits(rest.substr(n + 1))) {
    return "";
  }
  return absl::StrCat("nvme", rest.substr(0, n));
}

std::vector<model::PathHctxIo> HctxByPath(const bpf::SamplerSnapshot& s) {
  std::map<std::string, std::map<int, model::HctxIo>> by_name;
  for (const bpf::DiskHctxIo& e : s.hctx) {
    if (e.disk.empty() || NvmeDiskController(e.disk).empty()) continue;
    model::HctxIo& h = by_name[e.disk][e.hctx];
    h.index = e.hctx;
    SatAdd(h.completed, e.totals.count);
    SatAdd(h.latency_sum_ns, e.totals.lat_sum_ns);
    SatAdd(h.remote_completions, e.totals.remote);
    h.latency.Merge(bpf::HctxHistogram(e.totals));
  }
  std::vector<model::PathHctxIo> out;
  for (auto& [name, hctxs] : by_name) {
    model::PathHctxIo& p = out.emplace_back();
    p.path = name;
    p.controller = NvmeDiskController(name);
    for (auto& [index, h] : hctxs) p.hctxs.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(),
            [](const model::PathHctxIo& a, const model::PathHctxIo& b) {
              return model::NaturalLess(a.path, b.path);
            });
  return out;
}

void AddHctxCpus(const SysfsReader& sys,
                 std::vector<model::PathHctxIo>& paths) {
  for (model::PathHctxIo& p : paths) {
    for (model::HctxIo& h : p.hctxs) {
      absl::StatusOr<std::string> list = sys.ReadAttr(
          absl::StrCat("block/", p.path, "/mq/", h.index, "/cpu_list"));
      if (!list.ok()) continue;
      absl::StatusOr<model::CpuSet> cpus = ParseCpuList(*list);
      if (cpus.ok()) h.cpus = *std::move(cpus);
    }
  }
}

int CountHctxs(const SysfsReader& sys) {
  absl::StatusOr<std::vector<std::string>> disks = sys.ListDir("block");
  if (!disks.ok()) return 0;
  int n = 0;
  for (const std::string& d : *disks) {
    absl::StatusOr<std::vector<std::string>> mq =
        sys.ListDir(absl::StrCat("block/", d, "/mq"));
    if (mq.ok()) n += static_cast<int>(mq->size());
  }
  return n;
}

int CountDisks(const SysfsReader& sys) {
  absl::StatusOr<std::vector<std::string>> disks = sys.ListDir("block");
  return disks.ok() ? static_cast<int>(disks->size()) : 0;
}

void MoveHctxIo(model::QueueMap& from, model::QueueMap& to) {
  to.hctx_io = from.hctx_io;
  to.hctx_io_unknown = std::move(from.hctx_io_unknown);
  to.path_hctx = std::move(from.path_hctx);
  to.hctx_dropped = from.hctx_dropped;
  to.hctx_window_seconds = from.hctx_window_seconds;
}

}  // namespace pathwise::collectors
