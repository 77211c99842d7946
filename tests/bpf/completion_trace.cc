#include "tests/bpf/completion_trace.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

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
    uint32_t kernel_dev) {
  std::unique_ptr<CompletionTrace> t(new CompletionTrace());
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
  const std::string ev = t->instance_ + "/events/block/block_rq_complete";
  for (const auto& [file, value] :
       {std::pair<std::string, std::string>{"/options/record-tgid", "1"},
        {"/buffer_size_kb", "2048"},
        {"/events/block/block_rq_complete/filter",
         absl::StrCat("dev == ", kernel_dev)},
        {"/events/block/block_rq_complete/enable", "1"},
        {"/tracing_on", "1"}}) {
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
  // "<comm>-<tid> (<tgid>) [cpu] flags ts: block_rq_complete: ..."; the
  // tgid is "-------" when tracefs had not recorded it.
  static const std::regex kLine(
      R"(^\s*.*-\d+\s+\(\s*([0-9]+|-+)\)\s+\[\d+\].*block_rq_complete:)");
  for (absl::string_view line : absl::StrSplit(*trace, '\n')) {
    std::cmatch m;
    if (!std::regex_search(line.data(), line.data() + line.size(), m, kLine)) {
      continue;
    }
    ++c.total;
    const std::string tgid = m[1].str();
    if (tgid[0] == '-') {
      ++c.unknown_tgid;
    } else if (tgid == "1") {
      ++c.in_init;
    }
  }
  return c;
}

CompletionTrace::~CompletionTrace() {
  if (!stopped_) (void)WriteFile(instance_ + "/tracing_on", "0");
  (void)WriteFile(instance_ + "/events/block/block_rq_complete/enable", "0");
  rmdir(instance_.c_str());
  if (mounted_here_) umount(kTracefs);
}

}  // namespace pathwise::bpf
