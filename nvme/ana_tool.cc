// SPDX-License-Identifier: Apache-2.0
// pathwise_ana_tool: the ANA log page of each controller named, as one JSON
// object per line, read the way pathwise reads it (nvme/ana_read.h), for
// the testbed and for looking at a real node.
//
//   pathwise_ana_tool [--rgo] /dev/nvme0 [/dev/nvme1 ...]
//   pathwise_ana_tool --parse FILE   (a page saved as bytes, e.g. by
//                                     `nvme ana-log -o binary`)
//
// Exit 0 when every device was read (or the file parsed), 1 otherwise (the
// error on stderr, one line per device), 2 on bad use.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nvme/ana_log.h"
#include "nvme/ana_read.h"
#include "nvme/uring.h"

namespace {

using pathwise::nvme::AnaGroup;
using pathwise::nvme::AnaLog;

// nvme-cli's names for the states, so its output and this one compare
// word for word.
const char* StateName(uint8_t field) {
  switch (field) {
    case 0x1:
      return "optimized";
    case 0x2:
      return "non-optimized";
    case 0x3:
      return "inaccessible";
    case 0x4:
      return "persistent-loss";
    case 0xf:
      return "change";
    default:
      return "invalid state";
  }
}

std::string Json(const std::string& source, const AnaLog& log) {
  std::vector<std::string> groups;
  for (const AnaGroup& g : log.groups) {
    groups.push_back(
        absl::StrCat("{\"grpid\":", g.id, ",\"chgcnt\":", g.change_count,
                     ",\"state\":\"", StateName(g.state_field),
                     "\",\"nsids\":[", absl::StrJoin(g.nsids, ","), "]}"));
  }
  return absl::StrCat("{\"device\":\"", source,
                      "\",\"chgcnt\":", log.change_count,
                      ",\"ngrps\":", log.groups.size(), ",\"groups\":[",
                      absl::StrJoin(groups, ","), "]}");
}

int Usage() {
  std::fprintf(stderr,
               "usage: pathwise_ana_tool [--rgo] /dev/nvmeX... | --parse "
               "FILE\n");
  return 2;
}

int Parse(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", file.c_str());
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  absl::StatusOr<AnaLog> log = pathwise::nvme::ParseAnaLog(
      std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  if (!log.ok()) {
    std::fprintf(stderr, "%s: %s\n", file.c_str(),
                 std::string(log.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", Json(file, *log).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  pathwise::nvme::AnaReadOptions options;
  std::vector<std::string> devices;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--rgo") {
      options.rgo = true;
    } else if (args[i] == "--parse") {
      if (i + 2 != args.size()) return Usage();
      return Parse(args[i + 1]);
    } else if (!args[i].empty() && args[i][0] == '-') {
      return Usage();
    } else {
      devices.push_back(args[i]);
    }
  }
  if (devices.empty()) return Usage();
  int rc = 0;
  for (const std::string& dev : devices) {
    // A ring per device: one that timed out keeps its command.
    absl::StatusOr<std::unique_ptr<pathwise::nvme::AdminRing>> ring =
        pathwise::nvme::AdminRing::Create(4);
    if (!ring.ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string(ring.status().message()).c_str());
      return 1;
    }
    const int fd = open(dev.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      std::fprintf(stderr, "%s: %s\n", dev.c_str(), std::strerror(errno));
      rc = 1;
      continue;
    }
    absl::StatusOr<AnaLog> log =
        pathwise::nvme::ReadAnaLog(**ring, fd, options);
    close(fd);
    if (!log.ok()) {
      std::fprintf(stderr, "%s: %s\n", dev.c_str(),
                   std::string(log.status().message()).c_str());
      rc = 1;
      continue;
    }
    std::printf("%s\n", Json(dev, *log).c_str());
  }
  return rc;
}
