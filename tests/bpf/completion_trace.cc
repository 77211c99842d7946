// SPDX-License-Identifier: Apache-2.0
#include "tests/bpf/completion_trace.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pathwise::bpf {
namespace {

constexpr char kTracefs[] = "/sys/kernel/tracing";

absl::Status WriteFile(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  if (!f) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  f << value;
  f.close();
  if (!f) {
    return absl::FailedPreconditionError(
        absl::StrCat("writing '", value, "' to ", path, " failed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadAll(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Sum of "overrun:" and "dropped events:" over the instance's CPUs.
uint64_t LostEvents(const std::string& instance) {
  uint64_t lost = 0;
  DIR* d = opendir((instance + "/per_cpu").c_str());
  if (!d) return 0;
  while (struct dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "cpu", 3) != 0) continue;
    absl::StatusOr<std::string> stats =
        ReadAll(absl::StrCat(instance, "/per_cpu/", e->d_name, "/stats"));
    if (!stats.ok()) continue;
    for (absl::string_view line : absl::StrSplit(*stats, '\n')) {
      for (absl::string_view key : {"overrun: ", "dropped events: "}) {
        uint64_t v = 0;
        if (absl::ConsumePrefix(&line, key) && absl::SimpleAtoi(line, &v)) {
          lost += v;
        }
      }
    }
  }
  closedir(d);
  return lost;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompletionTrace>> CompletionTrace::Start(
    uint32_t kernel_dev, bool with_submit_cpu) {
  std::unique_ptr<CompletionTrace> t(new CompletionTrace());
  t->with_submit_cpu_ = with_submit_cpu;
  struct stat st;
  if (stat(absl::StrCat(kTracefs, "/instances").c_str(), &st) != 0) {
    if (mount("nodev", kTracefs, "tracefs", 0, nullptr) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("tracefs is not mounted and mounting it at ", kTracefs,
                       " failed: ", std::strerror(errno)));
    }
    t->mounted_here_ = true;
  }
  t->instance_ = absl::StrCat(kTracefs, "/instances/pathwise-test-", getpid());
  if (mkdir(t->instance_.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create tracefs instance ", t->instance_, ": ",
                     std::strerror(errno)));
  }
  std::vector<std::pair<std::string, std::string>> settings = {
      {"/options/record-tgid", "1"},
      {"/buffer_size_kb", "2048"},
      {"/events/block/block_rq_complete/filter",
       absl::StrCat("dev == ", kernel_dev)},
      {"/events/block/block_rq_complete/enable", "1"}};
  if (with_submit_cpu) {
    // The default clock is per CPU: a getrq on one CPU could sort after
    // its completion on another.
    settings.insert(settings.begin(), {"/trace_clock", "global"});
    settings.push_back({"/events/block/block_getrq/filter",
                        absl::StrCat("dev == ", kernel_dev)});
    settings.push_back({"/events/block/block_getrq/enable", "1"});
  }
  settings.push_back({"/tracing_on", "1"});
  for (const auto& [file, value] : settings) {
    if (absl::Status s = WriteFile(t->instance_ + file, value); !s.ok()) {
      return s;
    }
  }
  return t;
}

absl::StatusOr<CompletionCounts> CompletionTrace::Stop() {
  stopped_ = true;
  if (absl::Status s = WriteFile(instance_ + "/tracing_on", "0"); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> trace = ReadAll(instance_ + "/trace");
  if (!trace.ok()) return trace.status();
  CompletionCounts c;
  c.overrun = LostEvents(instance_) > 0;
  // "<comm>-<tid> (<tgid>) [cpu] flags ts: <event>: <maj>,<min> <rwbs>
  // [(<cmd>)] <sector> + <n> ..." (block_rq_complete has the command in
  // parentheses, block_getrq not); the tgid is "-------" when tracefs had
  // not recorded it, and always for the idle task (tid 0, tgid 0), which
  // is current for a completion in an interrupt on an idle CPU.
  static const std::regex kLine(
      R"(^\s*.*-(\d+)\s+\(\s*([0-9]+|-+)\)\s+\[(\d+)\].*?)"
      R"((block_rq_complete|block_getrq): \d+,\d+ \S+ (?:\([^)]*\) )?(\d+) \+)");
  // Per sector, the CPUs of its block_getrq events not yet paired, oldest
  // first.
  std::unordered_map<uint64_t, std::deque<int>> submitted;
  for (absl::string_view line : absl::StrSplit(*trace, '\n')) {
    std::cmatch m;
    if (!std::regex_search(line.data(), line.data() + line.size(), m, kLine)) {
      continue;
    }
    int cpu = -1;
    uint64_t sector = 0;
    if (!absl::SimpleAtoi(m[3].str(), &cpu) ||
        !absl::SimpleAtoi(m[5].str(), &sector)) {
      continue;
    }
    if (m[4].str() == "block_getrq") {
      submitted[sector].push_back(cpu);
      continue;
    }
    ++c.total;
    const std::string tgid = m[2].str();
    const bool in_init = tgid == "1";
    if (tgid[0] == '-' && m[1].str() != "0") {
      ++c.unknown_tgid;
    } else if (in_init) {
      ++c.in_init;
    }
    if (!with_submit_cpu_) continue;
    auto it = submitted.find(sector);
    if (it == submitted.end() || it->second.empty()) {
      ++c.unpaired;
      continue;
    }
    const int submit_cpu = it->second.front();
    it->second.pop_front();
    if (submit_cpu != cpu) {
      ++c.remote;
      if (in_init) ++c.remote_in_init;
    }
  }
  return c;
}

CompletionTrace::~CompletionTrace() {
  if (!stopped_) (void)WriteFile(instance_ + "/tracing_on", "0");
  (void)WriteFile(instance_ + "/events/block/block_rq_complete/enable", "0");
  if (with_submit_cpu_) {
    (void)WriteFile(instance_ + "/events/block/block_getrq/enable", "0");
  }
  rmdir(instance_.c_str());
  if (mounted_here_) umount(kTracefs);
}

}  // namespace pathwise::bpf
