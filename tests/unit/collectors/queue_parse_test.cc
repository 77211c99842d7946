// SPDX-License-Identifier: Apache-2.0
// The queue map's parsers on the kernel's own formats: CPU lists and masks,
// /proc/interrupts as x86 and virtio guests write it, fabrics addresses,
// sock_diag replies (built byte by byte as the kernel lays them out, and one
// live dump of a loopback connection), and queue IRQ names.
#include "collectors/queue_parse.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "collectors/queue_scan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(CpuList, RangesAndSingles) {
  EXPECT_THAT(*ParseCpuList("0-3,8,10-11\n"),
              ElementsAre(0, 1, 2, 3, 8, 10, 11));
  EXPECT_THAT(*ParseCpuList("5"), ElementsAre(5));
  EXPECT_THAT(*ParseCpuList(""), IsEmpty());
  EXPECT_THAT(*ParseCpuList("3,1,1"), ElementsAre(1, 3));
  EXPECT_THAT(*ParseCpuList("0, 2, 3\n"), ElementsAre(0, 2, 3));
}

TEST(CpuList, RejectsGarbage) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "+1", "1-99999999",
                          "0x1", "1 -2", ", 1"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
}

TEST(CpuMask, GroupsMostSignificantFirst) {
  EXPECT_THAT(*ParseCpuMask("00000000,0000000f\n"), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(*ParseCpuMask("1,80000000"), ElementsAre(31, 32));
  EXPECT_THAT(*ParseCpuMask("0"), IsEmpty());
  EXPECT_THAT(*ParseCpuMask("a"), ElementsAre(1, 3));
}

TEST(CpuMask, RejectsGarbage) {
  for (const char* bad : {"", "g", "123456789", "1,,2", "-1", "0x1"}) {
    EXPECT_FALSE(ParseCpuMask(bad).ok()) << bad;
  }
}

// As a 2-CPU QEMU guest with virtio-net (multiqueue) and virtio-blk shows
// it, with an x86 NMI/LOC tail.
constexpr char kVirtioInterrupts[] =
    "           CPU0       CPU1       \n"
    "  0:         40          0   IO-APIC   2-edge      timer\n"
    " 24:          0          0  PCI-MSIX-0000:00:02.0   0-edge      "
    "virtio0-config\n"
    " 25:       1523          7  PCI-MSIX-0000:00:02.0   1-edge      "
    "virtio0-input.0\n"
    " 26:          1          0  PCI-MSIX-0000:00:02.0   2-edge      "
    "virtio0-output.0\n"
    " 27:          3       2201  PCI-MSIX-0000:00:02.0   3-edge      "
    "virtio0-input.1\n"
    " 28:          0          2  PCI-MSIX-0000:00:02.0   4-edge      "
    "virtio0-output.1\n"
    " 40:          9          0  IR-PCI-MSI 524288-edge      "
    "mlx5_comp0@pci:0000:3b:00.0\n"
    " 41:          0         12  IR-PCI-MSI 524289-edge      "
    "eth2-TxRx-1, other\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "LOC:      12345      23456   Local timer interrupts\n"
    "ERR:          0\n";

TEST(Interrupts, NumberedLinesWithCountsAndNames) {
  absl::StatusOr<std::vector<model::Irq>> irqs =
      ParseInterrupts(kVirtioInterrupts);
  ASSERT_TRUE(irqs.ok()) << irqs.status();
  ASSERT_EQ(irqs->size(), 8u);
  EXPECT_EQ((*irqs)[0].number, 0);
  EXPECT_EQ((*irqs)[0].name, "timer");
  EXPECT_EQ((*irqs)[2].number, 25);
  EXPECT_EQ((*irqs)[2].name, "virtio0-input.0");
  EXPECT_THAT((*irqs)[2].per_cpu, ElementsAre(1523, 7));
  EXPECT_EQ((*irqs)[6].name, "mlx5_comp0@pci:0000:3b:00.0");
  EXPECT_EQ((*irqs)[7].name, "eth2-TxRx-1, other");
}

TEST(Interrupts, OldTriggerColumnAndNoHeader) {
  absl::StatusOr<std::vector<model::Irq>> irqs = ParseInterrupts(
      "           CPU0\n  1:          9   IO-APIC-edge      i8042\n");
  ASSERT_TRUE(irqs.ok());
  ASSERT_EQ(irqs->size(), 1u);
  EXPECT_EQ((*irqs)[0].name, "i8042");
  EXPECT_FALSE(ParseInterrupts("").ok());
  EXPECT_FALSE(ParseInterrupts(" 1: 2 3 x\n").ok());
}

TEST(FabricsAddress, KeysAndNormalisedAddresses) {
  FabricsAddress a =
      ParseFabricsAddress("traddr=10.77.1.2,trsvcid=4420,src_addr=10.77.1.1\n");
  EXPECT_EQ(a.traddr, "10.77.1.2");
  EXPECT_EQ(a.trsvcid, "4420");
  EXPECT_EQ(a.src_addr, "10.77.1.1");
  EXPECT_EQ(a.host_iface, "");
  a = ParseFabricsAddress(
      "traddr=fd00:0:0::2,trsvcid=4420,host_traddr=fd00::1,host_iface=eth1");
  EXPECT_EQ(a.traddr, "fd00::2");
  EXPECT_EQ(a.host_traddr, "fd00::1");
  EXPECT_EQ(a.host_iface, "eth1");
  EXPECT_EQ(ParseFabricsAddress("traddr=not-an-ip").traddr, "not-an-ip");
  EXPECT_EQ(NormalizeAddress("1.2.3"), "");
}

// One inet_diag reply message as the kernel writes it.
std::vector<uint8_t> DiagMessage(const char* src, uint16_t sport,
                                 const char* dst, uint16_t dport,
                                 const tcp_info* ti, size_t ti_len) {
  const size_t attr = ti ? NLA_ALIGN(sizeof(nlattr) + ti_len) : 0;
  std::vector<uint8_t> buf(NLMSG_ALIGN(sizeof(nlmsghdr)) +
                           NLMSG_ALIGN(sizeof(inet_diag_msg)) + attr);
  nlmsghdr h{};
  h.nlmsg_len = buf.size();
  h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  std::memcpy(buf.data(), &h, sizeof(h));
  inet_diag_msg m{};
  m.idiag_family = AF_INET;
  m.idiag_state = 1;
  m.id.idiag_sport = htons(sport);
  m.id.idiag_dport = htons(dport);
  inet_pton(AF_INET, src, m.id.idiag_src);
  inet_pton(AF_INET, dst, m.id.idiag_dst);
  m.idiag_inode = 4242;
  m.idiag_wqueue = 8192;
  m.idiag_rqueue = 17;
  std::memcpy(buf.data() + sizeof(nlmsghdr), &m, sizeof(m));
  if (ti != nullptr) {
    nlattr a{};
    a.nla_len = sizeof(nlattr) + ti_len;
    a.nla_type = INET_DIAG_INFO;
    uint8_t* p = buf.data() + sizeof(nlmsghdr) + sizeof(inet_diag_msg);
    std::memcpy(p, &a, sizeof(a));
    std::memcpy(p + sizeof(a), ti, ti_len);
  }
  return buf;
}

std::vector<uint8_t> Done() {
  std::vector<uint8_t> buf(NLMSG_ALIGN(sizeof(nlmsghdr)) + sizeof(int));
  nlmsghdr h{};
  h.nlmsg_len = buf.size();
  h.nlmsg_type = NLMSG_DONE;
  std::memcpy(buf.data(), &h, sizeof(h));
  return buf;
}

TEST(InetDiag, SocketsWithTcpInfoThenDone) {
  tcp_info ti{};
  ti.tcpi_rtt = 1234;
  ti.tcpi_rttvar = 56;
  ti.tcpi_total_retrans = 7;
  ti.tcpi_unacked = 3;
  ti.tcpi_notsent_bytes = 999;
  ti.tcpi_bytes_sent = 1ull << 40;
  std::vector<uint8_t> buf =
      DiagMessage("10.77.1.1", 50000, "10.77.1.2", 4420, &ti, sizeof(ti));
  std::vector<uint8_t> second =
      DiagMessage("10.77.2.1", 50001, "10.77.2.2", 4420, nullptr, 0);
  buf.insert(buf.end(), second.begin(), second.end());
  std::vector<uint8_t> done = Done();
  buf.insert(buf.end(), done.begin(), done.end());

  absl::StatusOr<InetDiagBatch> b = ParseInetDiag(buf);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->done);
  ASSERT_EQ(b->sockets.size(), 2u);
  const model::TcpSocket& s = b->sockets[0];
  EXPECT_EQ(s.local_addr, "10.77.1.1");
  EXPECT_EQ(s.local_port, 50000);
  EXPECT_EQ(s.remote_addr, "10.77.1.2");
  EXPECT_EQ(s.remote_port, 4420);
  EXPECT_EQ(s.inode, 4242u);
  EXPECT_EQ(s.send_queue, 8192u);
  EXPECT_EQ(s.recv_queue, 17u);
  ASSERT_TRUE(s.info.has_value());
  EXPECT_EQ(s.info->rtt_us, 1234u);
  EXPECT_EQ(s.info->rttvar_us, 56u);
  EXPECT_EQ(s.info->total_retrans, 7u);
  EXPECT_EQ(s.info->unacked, 3u);
  EXPECT_EQ(s.info->notsent_bytes, 999u);
  EXPECT_EQ(s.info->bytes_sent, 1ull << 40);
  EXPECT_FALSE(b->sockets[1].info.has_value());
}

TEST(InetDiag, ShortTcpInfoOfAnOlderKernelLeavesTheRestZero) {
  tcp_info ti{};
  ti.tcpi_rtt = 10;
  ti.tcpi_bytes_sent = 5;  // beyond the 104 bytes a 4.x kernel sends
  std::vector<uint8_t> buf =
      DiagMessage("10.0.0.1", 1, "10.0.0.2", 2, &ti, 104);
  absl::StatusOr<InetDiagBatch> b = ParseInetDiag(buf);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->done);
  ASSERT_EQ(b->sockets.size(), 1u);
  EXPECT_EQ(b->sockets[0].info->rtt_us, 10u);
  EXPECT_EQ(b->sockets[0].info->bytes_sent, 0u);
}

TEST(InetDiag, TruncatedAndErrorMessages) {
  std::vector<uint8_t> buf =
      DiagMessage("10.0.0.1", 1, "10.0.0.2", 2, nullptr, 0);
  std::vector<uint8_t> cut(buf.begin(), buf.end() - 4);
  EXPECT_FALSE(ParseInetDiag(cut).ok());
  // A message too short for inet_diag_msg.
  nlmsghdr h{};
  h.nlmsg_len = sizeof(h) + 8;
  h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  std::vector<uint8_t> small(sizeof(h) + 8);
  std::memcpy(small.data(), &h, sizeof(h));
  EXPECT_THAT(std::string(ParseInetDiag(small).status().message()),
              HasSubstr("inet_diag message"));
  // NLMSG_ERROR with -EPERM.
  std::vector<uint8_t> err(sizeof(nlmsghdr) + sizeof(nlmsgerr));
  h.nlmsg_len = err.size();
  h.nlmsg_type = NLMSG_ERROR;
  std::memcpy(err.data(), &h, sizeof(h));
  const int eperm = -EPERM;
  std::memcpy(err.data() + sizeof(h), &eperm, sizeof(eperm));
  EXPECT_TRUE(absl::IsPermissionDenied(ParseInetDiag(err).status()));
  // A bad attribute length.
  tcp_info ti{};
  std::vector<uint8_t> bad =
      DiagMessage("10.0.0.1", 1, "10.0.0.2", 2, &ti, sizeof(ti));
  nlattr a{};
  a.nla_len = 2;
  std::memcpy(bad.data() + sizeof(nlmsghdr) + sizeof(inet_diag_msg), &a,
              sizeof(a));
  EXPECT_FALSE(ParseInetDiag(bad).ok());
}

// The real sock_diag on this host: a loopback connection is in the dump
// with both ends' ports and tcp_info.
TEST(InetDiag, LiveDumpSeesALoopbackConnection) {
  const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(lfd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(connect(cfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  sockaddr_in local{};
  len = sizeof(local);
  ASSERT_EQ(getsockname(cfd, reinterpret_cast<sockaddr*>(&local), &len), 0);

  absl::StatusOr<std::vector<model::TcpSocket>> all = DumpTcpSockets();
  close(cfd);
  close(lfd);
  ASSERT_TRUE(all.ok()) << all.status();
  bool found = false;
  for (const model::TcpSocket& s : *all) {
    if (s.local_port == ntohs(local.sin_port) &&
        s.remote_port == ntohs(addr.sin_port)) {
      found = true;
      EXPECT_EQ(s.local_addr, "127.0.0.1");
      EXPECT_EQ(s.state, 1);
      EXPECT_TRUE(s.info.has_value());
      EXPECT_NE(s.inode, 0u);
    }
  }
  EXPECT_TRUE(found);
}

TEST(QueueIrq, DriverNamingSchemes) {
  auto q = MatchQueueIrq("virtio0-input.3", "eth0", "virtio0");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, IrqQueueKind::kRx);
  EXPECT_EQ(q->index, 3);
  q = MatchQueueIrq("virtio0-output.1", "eth0", "virtio0");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, IrqQueueKind::kTx);
  // Another virtio device's queue is not this device's.
  EXPECT_FALSE(MatchQueueIrq("virtio1-input.0", "eth0", "virtio0"));
  EXPECT_FALSE(MatchQueueIrq("virtio0-config", "eth0", "virtio0"));
  q = MatchQueueIrq("mlx5_comp12@pci:0000:3b:00.0", "ens1f0", "0000:3b:00.0");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, IrqQueueKind::kCombined);
  EXPECT_EQ(q->index, 12);
  EXPECT_FALSE(
      MatchQueueIrq("mlx5_comp12@pci:0000:3b:00.1", "ens1f0", "0000:3b:00.0"));
  q = MatchQueueIrq("eth2-TxRx-7", "eth2", "0000:01:00.0");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->index, 7);
  q = MatchQueueIrq("ice-ens5-TxRx-0", "ens5", "0000:01:00.0");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->index, 0);
  q = MatchQueueIrq("eth2-rx-1", "eth2", "");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, IrqQueueKind::kRx);
  q = MatchQueueIrq("other, eth2-tx-4", "eth2", "");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, IrqQueueKind::kTx);
  EXPECT_EQ(q->index, 4);
  // eth2's name is a prefix of eth20's: not its queue.
  EXPECT_FALSE(MatchQueueIrq("eth20-TxRx-1", "eth2", ""));
  EXPECT_FALSE(MatchQueueIrq("eth2-TxRx-", "eth2", ""));
  EXPECT_FALSE(MatchQueueIrq("eth2-TxRx-1x", "eth2", ""));
  EXPECT_FALSE(MatchQueueIrq("anything", "", ""));
}

}  // namespace
}  // namespace pathwise::collectors
