// SPDX-License-Identifier: Apache-2.0
#include "collectors/queue_parse.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pathwise::collectors {
namespace {

bool ParseCpu(absl::string_view text, int* cpu) {
  // SimpleAtoi takes "+1" and " 1"; a CPU list has neither.
  if (text.empty() || text.size() > 6 ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isdigit)) {
    return false;
  }
  return absl::SimpleAtoi(text, cpu) && *cpu <= kMaxCpu;
}

model::CpuSet Sorted(std::set<int> cpus) {
  return model::CpuSet(cpus.begin(), cpus.end());
}

// Whether an /proc/interrupts token is the trigger column ("0-edge",
// "IO-APIC-edge", "Edge", "fasteoi"), after which the action names follow.
bool IsTriggerToken(absl::string_view token) {
  const std::string lower = absl::AsciiStrToLower(token);
  return absl::EndsWith(lower, "edge") || absl::EndsWith(lower, "level") ||
         lower == "fasteoi";
}

// The number after `prefix` at the start of `text` and what follows it.
bool NumberAfter(absl::string_view text, absl::string_view prefix, int* n,
                 absl::string_view* rest) {
  if (!absl::ConsumePrefix(&text, prefix)) return false;
  size_t digits = 0;
  while (digits < text.size() && absl::ascii_isdigit(text[digits])) ++digits;
  if (digits == 0 || digits > 6) return false;
  if (!absl::SimpleAtoi(text.substr(0, digits), n)) return false;
  *rest = text.substr(digits);
  return true;
}

std::optional<IrqQueue> Whole(absl::string_view text, absl::string_view prefix,
                              IrqQueueKind kind) {
  int n = 0;
  absl::string_view rest;
  if (NumberAfter(text, prefix, &n, &rest) && rest.empty()) {
    return IrqQueue{kind, n};
  }
  return std::nullopt;
}

std::optional<IrqQueue> MatchOneAction(absl::string_view name,
                                       absl::string_view ifname,
                                       absl::string_view bus_device) {
  if (!bus_device.empty() && absl::StartsWith(bus_device, "virtio")) {
    const std::string dev(bus_device);
    if (auto q = Whole(name, dev + "-input.", IrqQueueKind::kRx)) return q;
    if (auto q = Whole(name, dev + "-output.", IrqQueueKind::kTx)) return q;
  }
  int n = 0;
  absl::string_view rest;
  if (!bus_device.empty() && NumberAfter(name, "mlx5_comp", &n, &rest) &&
      rest == absl::StrCat("@pci:", bus_device)) {
    return IrqQueue{IrqQueueKind::kCombined, n};
  }
  if (ifname.empty()) return std::nullopt;
  absl::string_view tail = name;
  absl::ConsumePrefix(&tail, "ice-");
  if (!absl::ConsumePrefix(&tail, ifname) || !absl::ConsumePrefix(&tail, "-")) {
    return std::nullopt;
  }
  for (auto [prefix, kind] : {std::pair{"TxRx-", IrqQueueKind::kCombined},
                              std::pair{"txrx-", IrqQueueKind::kCombined},
                              std::pair{"rx-", IrqQueueKind::kRx},
                              std::pair{"tx-", IrqQueueKind::kTx},
                              std::pair{"", IrqQueueKind::kCombined}}) {
    if (auto q = Whole(tail, prefix, kind)) return q;
  }
  return std::nullopt;
}

std::string AddressText(int family, const uint32_t addr[4]) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(family, addr, buf, sizeof(buf)) == nullptr) return "";
  return buf;
}

void ReadTcpInfo(absl::Span<const uint8_t> payload, model::TcpSocket& s) {
  struct tcp_info ti;
  std::memset(&ti, 0, sizeof(ti));
  std::memcpy(&ti, payload.data(), std::min(payload.size(), sizeof(ti)));
  model::TcpSocketInfo info;
  info.rtt_us = ti.tcpi_rtt;
  info.rttvar_us = ti.tcpi_rttvar;
  info.snd_cwnd = ti.tcpi_snd_cwnd;
  info.unacked = ti.tcpi_unacked;
  info.retransmits = ti.tcpi_retransmits;
  info.total_retrans = ti.tcpi_total_retrans;
  info.lost = ti.tcpi_lost;
  info.bytes_acked = ti.tcpi_bytes_acked;
  info.bytes_received = ti.tcpi_bytes_received;
  info.notsent_bytes = ti.tcpi_notsent_bytes;
  info.bytes_sent = ti.tcpi_bytes_sent;
  info.bytes_retrans = ti.tcpi_bytes_retrans;
  s.info = info;
}

absl::StatusOr<model::TcpSocket> ParseDiagMessage(
    absl::Span<const uint8_t> body) {
  if (body.size() < sizeof(inet_diag_msg)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inet_diag message of ", body.size(),
                     " bytes, want >= ", sizeof(inet_diag_msg)));
  }
  inet_diag_msg m;
  std::memcpy(&m, body.data(), sizeof(m));
  model::TcpSocket s;
  if (m.idiag_family == AF_INET || m.idiag_family == AF_INET6) {
    s.local_addr = AddressText(m.idiag_family, m.id.idiag_src);
    s.remote_addr = AddressText(m.idiag_family, m.id.idiag_dst);
  }
  s.local_port = ntohs(m.id.idiag_sport);
  s.remote_port = ntohs(m.id.idiag_dport);
  s.state = m.idiag_state;
  s.inode = m.idiag_inode;
  s.uid = m.idiag_uid;
  s.recv_queue = m.idiag_rqueue;
  s.send_queue = m.idiag_wqueue;
  size_t off = NLMSG_ALIGN(sizeof(inet_diag_msg));
  while (off + sizeof(nlattr) <= body.size()) {
    nlattr a;
    std::memcpy(&a, body.data() + off, sizeof(a));
    if (a.nla_len < sizeof(nlattr) || a.nla_len > body.size() - off) {
      return absl::InvalidArgumentError(
          absl::StrCat("inet_diag attribute of length ", a.nla_len, " at ", off,
                       " of ", body.size()));
    }
    if ((a.nla_type & NLA_TYPE_MASK) == INET_DIAG_INFO) {
      ReadTcpInfo(
          body.subspan(off + sizeof(nlattr), a.nla_len - sizeof(nlattr)), s);
    }
    off += NLA_ALIGN(a.nla_len);
  }
  return s;
}

}  // namespace

absl::StatusOr<model::CpuSet> ParseCpuList(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::set<int> cpus;
  if (text.empty()) return model::CpuSet{};
  // blk-mq's mq/N/cpu_list separates with ", " and has no ranges.
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(part, absl::MaxSplits('-', 1));
    int lo = 0, hi = 0;
    const bool is_range = part.find('-') != part.npos;
    if (!ParseCpu(range.first, &lo) ||
        !ParseCpu(is_range ? range.second : range.first, &hi) || hi < lo) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad CPU list \"", text, "\" at \"", part, "\""));
    }
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return Sorted(std::move(cpus));
}

absl::StatusOr<model::CpuSet> ParseCpuMask(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) {
    return absl::InvalidArgumentError("empty CPU mask");
  }
  std::vector<absl::string_view> groups = absl::StrSplit(text, ',');
  if (groups.size() * 32 > static_cast<size_t>(kMaxCpu) + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU mask of ", groups.size(), " groups"));
  }
  std::set<int> cpus;
  int base = 0;
  for (auto g = groups.rbegin(); g != groups.rend(); ++g, base += 32) {
    uint32_t bits = 0;
    if (g->empty() || g->size() > 8 ||
        !std::all_of(g->begin(), g->end(), absl::ascii_isxdigit) ||
        !absl::SimpleHexAtoi(*g, &bits)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad CPU mask \"", text, "\""));
    }
    for (int b = 0; b < 32; ++b) {
      if (bits & (1u << b)) cpus.insert(base + b);
    }
  }
  return Sorted(std::move(cpus));
}

absl::StatusOr<std::vector<model::Irq>> ParseInterrupts(
    absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.empty() || !absl::StrContains(lines[0], "CPU")) {
    return absl::InvalidArgumentError("/proc/interrupts: no CPU header line");
  }
  const std::vector<absl::string_view> header =
      absl::StrSplit(lines[0], ' ', absl::SkipEmpty());
  const size_t ncpu = header.size();
  std::vector<model::Irq> irqs;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> tok =
        absl::StrSplit(lines[i], absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (tok.empty() || !absl::ConsumeSuffix(&tok[0], ":")) continue;
    model::Irq irq;
    if (tok[0].empty() || !absl::ascii_isdigit(tok[0][0]) ||
        !absl::SimpleAtoi(tok[0], &irq.number)) {
      continue;  // NMI, LOC, ERR, ...
    }
    size_t t = 1;
    for (; t < tok.size() && irq.per_cpu.size() < ncpu; ++t) {
      uint64_t n = 0;
      if (!absl::SimpleAtoi(tok[t], &n)) break;
      irq.per_cpu.push_back(n);
    }
    // chip, hardware IRQ and trigger, then the action names.
    size_t names = tok.size();
    for (size_t k = t; k < tok.size(); ++k) {
      if (IsTriggerToken(tok[k])) {
        names = k + 1;
        break;
      }
    }
    if (names == tok.size() && tok.size() > t + 1) names = tok.size() - 1;
    std::vector<absl::string_view> rest(
        tok.begin() + std::min(names, tok.size()), tok.end());
    irq.name = absl::StrJoin(rest, " ");
    irqs.push_back(std::move(irq));
  }
  return irqs;
}

std::string NormalizeAddress(absl::string_view text) {
  const std::string s(absl::StripAsciiWhitespace(text));
  unsigned char buf[16];
  char out[INET6_ADDRSTRLEN] = {};
  for (int family : {AF_INET, AF_INET6}) {
    if (inet_pton(family, s.c_str(), buf) == 1 &&
        inet_ntop(family, buf, out, sizeof(out)) != nullptr) {
      return out;
    }
  }
  return "";
}

FabricsAddress ParseFabricsAddress(absl::string_view text) {
  FabricsAddress a;
  for (absl::string_view kv :
       absl::StrSplit(absl::StripAsciiWhitespace(text), ',')) {
    std::pair<absl::string_view, absl::string_view> p =
        absl::StrSplit(kv, absl::MaxSplits('=', 1));
    const std::string value(absl::StripAsciiWhitespace(p.second));
    const std::string addr = NormalizeAddress(value);
    if (p.first == "traddr") {
      a.traddr = addr.empty() ? value : addr;
    } else if (p.first == "trsvcid") {
      a.trsvcid = value;
    } else if (p.first == "src_addr") {
      a.src_addr = addr.empty() ? value : addr;
    } else if (p.first == "host_traddr") {
      a.host_traddr = addr.empty() ? value : addr;
    } else if (p.first == "host_iface") {
      a.host_iface = value;
    }
  }
  return a;
}

absl::StatusOr<InetDiagBatch> ParseInetDiag(absl::Span<const uint8_t> buf) {
  InetDiagBatch batch;
  size_t off = 0;
  while (off + sizeof(nlmsghdr) <= buf.size()) {
    nlmsghdr h;
    std::memcpy(&h, buf.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > buf.size() - off) {
      return absl::InvalidArgumentError(
          absl::StrCat("netlink message of length ", h.nlmsg_len, " at ", off,
                       " of ", buf.size()));
    }
    absl::Span<const uint8_t> body =
        buf.subspan(off + sizeof(nlmsghdr), h.nlmsg_len - sizeof(nlmsghdr));
    if (h.nlmsg_type == NLMSG_DONE) {
      batch.done = true;
      return batch;
    }
    if (h.nlmsg_type == NLMSG_ERROR) {
      int err = 0;
      if (body.size() >= sizeof(int)) {
        std::memcpy(&err, body.data(), sizeof(err));
      }
      if (err == 0) {  // an acknowledgement ends the dump too
        batch.done = true;
        return batch;
      }
      return absl::ErrnoToStatus(err < 0 && err != INT_MIN ? -err : EPROTO,
                                 "sock_diag");
    }
    if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
      absl::StatusOr<model::TcpSocket> s = ParseDiagMessage(body);
      if (!s.ok()) return s.status();
      batch.sockets.push_back(*std::move(s));
    }
    off = std::min<size_t>(off + NLMSG_ALIGN(h.nlmsg_len), buf.size());
  }
  if (off != buf.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("netlink buffer of ", buf.size(), " bytes ends inside a ",
                     "message header at ", off));
  }
  return batch;
}

std::optional<IrqQueue> MatchQueueIrq(absl::string_view irq_name,
                                      absl::string_view ifname,
                                      absl::string_view bus_device) {
  for (absl::string_view action : absl::StrSplit(irq_name, ", ")) {
    if (auto q = MatchOneAction(absl::StripAsciiWhitespace(action), ifname,
                                bus_device)) {
      return q;
    }
  }
  return std::nullopt;
}

}  // namespace pathwise::collectors
