// SPDX-License-Identifier: Apache-2.0
#include "collectors/queue_scan.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "collectors/queue_parse.h"

namespace pathwise::collectors {
namespace {

constexpr int kTcpEstablished = 1;

// The basename of the symlink `rel` points to, "" if it is none.
std::string LinkBase(const SysfsReader& sys, const std::string& rel) {
  char buf[PATH_MAX];
  const std::string path = sys.Path(rel);
  const ssize_t n = readlink(path.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  absl::string_view target(buf, static_cast<size_t>(n));
  const size_t slash = target.rfind('/');
  return std::string(slash == target.npos ? target : target.substr(slash + 1));
}

std::vector<model::Hctx> ReadHctxs(const SysfsReader& sys,
                                   const std::string& disk) {
  std::vector<model::Hctx> out;
  absl::StatusOr<std::vector<std::string>> mq =
      sys.ListDir(absl::StrCat("block/", disk, "/mq"));
  if (!mq.ok()) return out;
  for (const std::string& n : *mq) {
    model::Hctx h;
    if (!absl::SimpleAtoi(n, &h.index)) continue;
    absl::StatusOr<std::string> list =
        sys.ReadAttr(absl::StrCat("block/", disk, "/mq/", n, "/cpu_list"));
    if (!list.ok()) continue;
    absl::StatusOr<model::CpuSet> cpus = ParseCpuList(*list);
    if (cpus.ok()) h.cpus = *std::move(cpus);
    out.push_back(std::move(h));
  }
  return out;
}

// A namespace disk of controller `name`: a path disk (nvme0c0n1) under
// multipath, else the controller's own nvme0n1.
std::string FirstDisk(const SysfsReader& sys, const std::string& name) {
  absl::StatusOr<std::vector<std::string>> entries =
      sys.ListDir(absl::StrCat("class/nvme/", name));
  if (!entries.ok()) return "";
  for (const std::string& e : *entries) {
    absl::string_view rest = e;
    if (absl::ConsumePrefix(&rest, "nvme") && absl::StrContains(rest, "n") &&
        sys.Exists(absl::StrCat("block/", e, "/mq"))) {
      return e;
    }
  }
  return "";
}

std::vector<RawTcpController> ReadControllers(const SysfsReader& sys) {
  std::vector<RawTcpController> out;
  absl::StatusOr<std::vector<std::string>> names = sys.ListDir("class/nvme");
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    absl::StatusOr<std::string> transport =
        sys.ReadAttr(absl::StrCat("class/nvme/", name, "/transport"));
    if (!transport.ok() || *transport != "tcp") continue;
    RawTcpController c;
    c.name = name;
    c.address = sys.ReadAttr(absl::StrCat("class/nvme/", name, "/address"))
                    .value_or("");
    absl::StatusOr<int64_t> qc =
        sys.ReadInt(absl::StrCat("class/nvme/", name, "/queue_count"));
    if (qc.ok() && *qc >= 0 && *qc < INT_MAX) c.queue_count = *qc;
    c.block_device = FirstDisk(sys, name);
    if (!c.block_device.empty()) c.hctxs = ReadHctxs(sys, c.block_device);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<model::NicQueue> ReadNicQueues(const SysfsReader& sys,
                                           const std::string& dev,
                                           absl::string_view prefix,
                                           absl::string_view mask_file) {
  std::vector<model::NicQueue> out;
  absl::StatusOr<std::vector<std::string>> qs =
      sys.ListDir(absl::StrCat("class/net/", dev, "/queues"));
  if (!qs.ok()) return out;
  for (const std::string& q : *qs) {
    absl::string_view n = q;
    model::NicQueue nq;
    if (!absl::ConsumePrefix(&n, prefix) || !absl::SimpleAtoi(n, &nq.index)) {
      continue;
    }
    absl::StatusOr<std::string> mask = sys.ReadAttr(
        absl::StrCat("class/net/", dev, "/queues/", q, "/", mask_file));
    if (mask.ok()) {
      absl::StatusOr<model::CpuSet> cpus = ParseCpuMask(*mask);
      if (cpus.ok()) {
        nq.steering_cpus = *std::move(cpus);
        nq.steering_known = true;
      }
    }
    out.push_back(std::move(nq));
  }
  return out;
}

std::vector<RawNetdev> ReadNetdevs(const QueueScanRoots& roots,
                                   const SysfsReader& sys) {
  std::vector<RawNetdev> out;
  absl::StatusOr<std::vector<std::string>> names = sys.ListDir("class/net");
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    if (name == "lo") continue;
    RawNetdev d;
    d.name = name;
    absl::StatusOr<int64_t> ifindex =
        sys.ReadInt(absl::StrCat("class/net/", name, "/ifindex"));
    if (ifindex.ok() && *ifindex > 0 && *ifindex < INT_MAX) {
      d.ifindex = *ifindex;
    }
    d.driver =
        LinkBase(sys, absl::StrCat("class/net/", name, "/device/driver"));
    d.bus_device = LinkBase(sys, absl::StrCat("class/net/", name, "/device"));
    d.tx = ReadNicQueues(sys, name, "tx-", "xps_cpus");
    d.rx = ReadNicQueues(sys, name, "rx-", "rps_cpus");
    if (roots.channels) {
      absl::StatusOr<model::NicChannels> ch = roots.channels(name);
      if (ch.ok()) {
        d.channels = *ch;
      } else {
        d.channels_unknown = std::string(ch.status().message());
      }
    } else {
      d.channels_unknown = "not read";
    }
    out.push_back(std::move(d));
  }
  return out;
}

// The IRQs that some device's queues are named after, with affinities.
std::vector<model::Irq> ReadQueueIrqs(const QueueScanRoots& roots,
                                      const std::vector<RawNetdev>& devs) {
  SysfsReader proc(roots.procfs);
  absl::StatusOr<std::string> text = proc.ReadAttr("interrupts");
  if (!text.ok()) return {};
  absl::StatusOr<std::vector<model::Irq>> all = ParseInterrupts(*text);
  if (!all.ok()) return {};
  std::vector<model::Irq> out;
  for (model::Irq& irq : *all) {
    bool queue = false;
    for (const RawNetdev& d : devs) {
      queue = queue || MatchQueueIrq(irq.name, d.name, d.bus_device);
    }
    if (!queue) continue;
    for (auto [file, set] :
         {std::pair{"smp_affinity_list", &irq.affinity},
          std::pair{"effective_affinity_list", &irq.effective_affinity}}) {
      absl::StatusOr<std::string> list =
          proc.ReadAttr(absl::StrCat("irq/", irq.number, "/", file));
      if (!list.ok()) continue;
      absl::StatusOr<model::CpuSet> cpus = ParseCpuList(*list);
      if (cpus.ok()) *set = *std::move(cpus);
    }
    out.push_back(std::move(irq));
  }
  return out;
}

std::vector<InterfaceAddress> ReadAddresses() {
  std::vector<InterfaceAddress> out;
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (struct ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_name == nullptr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    const int family = a->ifa_addr->sa_family;
    const void* raw = nullptr;
    if (family == AF_INET) {
      raw = &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    } else if (family == AF_INET6) {
      raw = &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(family, raw, buf, sizeof(buf)) == nullptr) continue;
    out.push_back({a->ifa_name, buf});
  }
  freeifaddrs(list);
  return out;
}

absl::Status DumpFamily(int fd, uint8_t family,
                        std::vector<model::TcpSocket>& out) {
  struct {
    nlmsghdr h;
    inet_diag_req_v2 r;
  } req{};
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.r.sdiag_family = family;
  req.r.sdiag_protocol = IPPROTO_TCP;
  req.r.idiag_states = 1u << kTcpEstablished;
  req.r.idiag_ext = 1u << (INET_DIAG_INFO - 1);
  sockaddr_nl nl{};
  nl.nl_family = AF_NETLINK;
  if (sendto(fd, &req, sizeof(req), 0, reinterpret_cast<sockaddr*>(&nl),
             sizeof(nl)) < 0) {
    return absl::ErrnoToStatus(errno, "sock_diag request");
  }
  std::vector<uint8_t> buf(1 << 16);
  while (true) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "sock_diag receive");
    if (n == 0) return absl::OkStatus();
    absl::StatusOr<InetDiagBatch> batch =
        ParseInetDiag(absl::MakeConstSpan(buf.data(), static_cast<size_t>(n)));
    if (!batch.ok()) return batch.status();
    for (model::TcpSocket& s : batch->sockets) out.push_back(std::move(s));
    if (batch->done) return absl::OkStatus();
  }
}

}  // namespace

absl::StatusOr<model::NicChannels> ReadNicChannels(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ ||
      ifname.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", ifname, "\" is no network device name"));
  }
  // Any socket carries SIOCETHTOOL to the device; a host without IPv4
  // still has netlink.
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket for SIOCETHTOOL");
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
  ifr.ifr_data = reinterpret_cast<char*>(&ch);
  const int rc = ioctl(fd, SIOCETHTOOL, &ifr);
  const int err = errno;
  close(fd);
  if (rc != 0 && err == EOPNOTSUPP) {
    return absl::UnimplementedError(absl::StrCat(
        ifname, ": the driver reports no channels (ETHTOOL_GCHANNELS)"));
  }
  if (rc != 0) {
    return absl::ErrnoToStatus(err,
                               absl::StrCat(ifname, ": ETHTOOL_GCHANNELS"));
  }
  auto to_int = [](uint32_t v) {
    return static_cast<int>(std::min<uint32_t>(v, INT_MAX));
  };
  return model::NicChannels{
      .max_rx = to_int(ch.max_rx),
      .max_tx = to_int(ch.max_tx),
      .max_other = to_int(ch.max_other),
      .max_combined = to_int(ch.max_combined),
      .rx = to_int(ch.rx_count),
      .tx = to_int(ch.tx_count),
      .other = to_int(ch.other_count),
      .combined = to_int(ch.combined_count),
  };
}

absl::StatusOr<std::vector<model::TcpSocket>> DumpTcpSockets() {
  const int fd =
      socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return absl::ErrnoToStatus(errno, "sock_diag socket");
  std::vector<model::TcpSocket> out;
  absl::Status s = DumpFamily(fd, AF_INET, out);
  if (s.ok()) s = DumpFamily(fd, AF_INET6, out);
  close(fd);
  if (!s.ok()) return s;
  return out;
}

RawQueueScan ScanQueues(const QueueScanRoots& roots) {
  const SysfsReader sys(roots.sysfs);
  RawQueueScan raw;
  absl::StatusOr<std::string> online =
      sys.ReadAttr("devices/system/cpu/online");
  if (online.ok()) {
    absl::StatusOr<model::CpuSet> cpus = ParseCpuList(*online);
    if (cpus.ok()) raw.online_cpus = static_cast<int>(cpus->size());
  }
  raw.controllers = ReadControllers(sys);
  if (raw.controllers.empty()) return raw;
  absl::StatusOr<std::vector<model::TcpSocket>> sockets = DumpTcpSockets();
  if (sockets.ok()) {
    raw.sockets = *std::move(sockets);
  } else {
    raw.sockets_error = std::string(sockets.status().message());
  }
  raw.addresses = ReadAddresses();
  raw.netdevs = ReadNetdevs(roots, sys);
  raw.irqs = ReadQueueIrqs(roots, raw.netdevs);
  return raw;
}

}  // namespace pathwise::collectors
