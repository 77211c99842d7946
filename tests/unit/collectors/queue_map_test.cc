// SPDX-License-Identifier: Apache-2.0
// The queue map's join (sockets to controllers, egress device, queue IRQs,
// what stays unknown and why) on hand-made scans, and the scan's sysfs and
// procfs reading on a temporary tree laid out as the kernel lays it out.
#include "collectors/queue_map.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "collectors/queue_scan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

model::TcpSocket Sock(std::string local, uint16_t lport, std::string remote,
                      uint16_t rport) {
  model::TcpSocket s;
  s.local_addr = std::move(local);
  s.local_port = lport;
  s.remote_addr = std::move(remote);
  s.remote_port = rport;
  s.state = 1;
  s.info = model::TcpSocketInfo{.rtt_us = 100};
  return s;
}

RawNetdev Virtio(std::string name, std::string bus, int queues) {
  RawNetdev d;
  d.name = std::move(name);
  d.driver = "virtio_net";
  d.bus_device = std::move(bus);
  for (int i = 0; i < queues; ++i) {
    d.tx.push_back({.index = i, .steering_cpus = {i}, .steering_known = true});
    d.rx.push_back({.index = i, .steering_known = true});
  }
  return d;
}

model::Irq IrqNamed(int number, std::string name, model::CpuSet affinity) {
  model::Irq i;
  i.number = number;
  i.name = std::move(name);
  i.affinity = std::move(affinity);
  return i;
}

// Two controllers on two ports, one multi-queue virtio device and one
// veth; a stray user connection to the same target port.
RawQueueScan TwoPaths() {
  RawQueueScan raw;
  raw.online_cpus = 2;
  raw.controllers.push_back(
      {.name = "nvme0",
       .address = "traddr=10.77.1.2,trsvcid=4420,src_addr=10.77.1.1",
       .queue_count = 3,
       .block_device = "nvme0c0n1",
       .hctxs = {{0, {0}}, {1, {1}}}});
  raw.controllers.push_back({.name = "nvme1",
                             .address = "traddr=10.77.2.2,trsvcid=4420",
                             .queue_count = 2});
  raw.sockets = {Sock("10.77.1.1", 40002, "10.77.1.2", 4420),
                 Sock("10.77.1.1", 40001, "10.77.1.2", 4420),
                 Sock("10.77.1.1", 40003, "10.77.1.2", 4420),
                 Sock("10.77.2.1", 50001, "10.77.2.2", 4420),
                 Sock("10.77.2.1", 50002, "10.77.2.2", 4420),
                 Sock("10.77.1.1", 40009, "10.77.1.2", 22)};
  raw.addresses = {{"eth0", "10.77.1.1"}, {"tbh1", "10.77.2.1"}};
  raw.netdevs = {Virtio("eth0", "virtio0", 2), Virtio("eth9", "virtio1", 2)};
  RawNetdev veth;
  veth.name = "tbh1";
  veth.tx = {{.index = 0}};
  veth.rx = {{.index = 0}};
  raw.netdevs.push_back(veth);
  raw.irqs = {IrqNamed(25, "virtio0-input.0", {1}),
              IrqNamed(26, "virtio0-output.0", {0}),
              IrqNamed(27, "virtio0-input.1", {0, 1}),
              IrqNamed(30, "virtio1-input.0", {0})};
  return raw;
}

TEST(QueueMap, SocketsJoinTheirControllerByAddressAndPort) {
  model::QueueMap m = BuildQueueMap(TwoPaths());
  ASSERT_EQ(m.controllers.size(), 2u);
  const model::TcpController& c0 = m.controllers[0];
  EXPECT_EQ(c0.name, "nvme0");
  EXPECT_EQ(c0.traddr, "10.77.1.2");
  ASSERT_EQ(c0.flows.size(), 3u);
  // Without BPF: ordered by local port, qid unknown with the reason.
  EXPECT_EQ(c0.flows[0].socket.local_port, 40001);
  EXPECT_EQ(c0.flows[2].socket.local_port, 40003);
  EXPECT_FALSE(c0.flows[0].qid.has_value());
  EXPECT_THAT(c0.flows[0].queue_unknown, HasSubstr("needs BPF"));
  EXPECT_EQ(c0.flows_unknown, "");
  EXPECT_THAT(c0.hctxs, ElementsAre(model::Hctx{0, {0}}, model::Hctx{1, {1}}));
  // No src_addr in `address` (older kernels): taken from the sockets.
  const model::TcpController& c1 = m.controllers[1];
  EXPECT_EQ(c1.src_addr, "10.77.2.1");
  EXPECT_EQ(c1.netdev, "tbh1");
  EXPECT_EQ(c1.flows.size(), 2u);
}

TEST(QueueMap, EgressDeviceQueuesAndIrqs) {
  model::QueueMap m = BuildQueueMap(TwoPaths());
  EXPECT_EQ(m.controllers[0].netdev, "eth0");
  // Only the devices a controller leaves on, by name.
  ASSERT_EQ(m.netdevs.size(), 2u);
  const model::Netdev& eth0 = m.netdevs[0];
  EXPECT_EQ(eth0.name, "eth0");
  ASSERT_EQ(eth0.rx.size(), 2u);
  EXPECT_EQ(eth0.rx[0].irq, 25);
  EXPECT_EQ(eth0.rx[1].irq, 27);
  EXPECT_EQ(eth0.tx[0].irq, 26);
  EXPECT_FALSE(eth0.tx[1].irq.has_value());
  ASSERT_EQ(eth0.irqs.size(), 3u);  // not virtio1's
  EXPECT_EQ(eth0.irq_unknown, "");
  // Two queues each way: which one a flow uses needs BPF.
  EXPECT_FALSE(m.controllers[0].flows[0].tx_queue.has_value());
  EXPECT_THAT(m.controllers[0].flows[0].nic_queue_unknown,
              HasSubstr("eth0 has 2 TX and 2 RX queues"));
  // A veth: one queue each way (no choice), no IRQs.
  const model::Netdev& veth = m.netdevs[1];
  EXPECT_THAT(veth.irq_unknown, HasSubstr("virtual device"));
  EXPECT_EQ(m.controllers[1].flows[0].tx_queue, 0);
  EXPECT_EQ(m.controllers[1].flows[0].rx_queue, 0);
  EXPECT_EQ(m.controllers[1].flows[0].nic_queue_unknown, "");
}

TEST(QueueMap, MissingSocketsAndDevicesSayWhy) {
  RawQueueScan raw = TwoPaths();
  raw.controllers[0].queue_count = 4;
  raw.addresses.clear();
  model::QueueMap m = BuildQueueMap(raw);
  EXPECT_THAT(m.controllers[0].flows_unknown,
              HasSubstr("queue_count is 4 but 3 established sockets"));
  EXPECT_EQ(m.controllers[0].netdev, "");
  EXPECT_THAT(m.controllers[0].netdev_unknown,
              HasSubstr("no interface holds the local address 10.77.1.1"));
  EXPECT_THAT(m.netdevs, IsEmpty());
  EXPECT_THAT(m.controllers[0].flows[0].nic_queue_unknown,
              HasSubstr("egress device unknown"));

  raw.sockets_error = "sock_diag socket: Operation not permitted";
  m = BuildQueueMap(raw);
  EXPECT_THAT(m.controllers[0].flows, IsEmpty());
  EXPECT_THAT(m.controllers[0].flows_unknown,
              HasSubstr("Operation not permitted"));
}

TEST(QueueMap, HostIfaceNamesTheDevice) {
  RawQueueScan raw = TwoPaths();
  raw.controllers[0].address += ",host_iface=eth9";
  EXPECT_EQ(BuildQueueMap(raw).controllers[0].netdev, "eth9");
}

TEST(QueueMap, ControllersSharingAPortalNeedBpf) {
  RawQueueScan raw = TwoPaths();
  raw.controllers[1].address = raw.controllers[0].address;
  model::QueueMap m = BuildQueueMap(raw);
  for (const model::TcpController& c : m.controllers) {
    EXPECT_THAT(c.flows, IsEmpty());
    EXPECT_THAT(c.flows_unknown, HasSubstr("told apart only with BPF"));
  }
  // With BPF the controller instance decides.
  raw.bpf = std::vector<BpfSocketQueue>{
      {"10.77.1.1", 40001, "10.77.1.2", 4420, 0, 0, -1, std::nullopt, 0},
      {"10.77.1.1", 40002, "10.77.1.2", 4420, 0, 1, 0, 1, 1},
      {"10.77.1.1", 40003, "10.77.1.2", 4420, 1, 0, 1, 0, 0}};
  m = BuildQueueMap(raw);
  ASSERT_EQ(m.controllers[0].flows.size(), 2u);
  EXPECT_EQ(m.controllers[0].flows[0].qid, 0);
  // The admin queue's work is unbound; its TX queue was never recorded.
  EXPECT_FALSE(m.controllers[0].flows[0].io_cpu.has_value());
  EXPECT_THAT(m.controllers[0].flows[0].queue_unknown, HasSubstr("unbound"));
  EXPECT_THAT(m.controllers[0].flows[0].nic_queue_unknown,
              HasSubstr("none recorded on the socket"));
  EXPECT_EQ(m.controllers[0].flows[1].qid, 1);
  EXPECT_EQ(m.controllers[0].flows[1].io_cpu, 0);
  EXPECT_EQ(m.controllers[0].flows[1].tx_queue, 1);
  EXPECT_EQ(m.controllers[0].flows[1].rx_queue, 1);
  EXPECT_EQ(m.controllers[0].flows[1].queue_unknown, "");
  ASSERT_EQ(m.controllers[1].flows.size(), 1u);
  EXPECT_EQ(m.controllers[1].flows[0].socket.local_port, 40003);
  EXPECT_TRUE(m.bpf_queues);
}

TEST(QueueMap, InterfaceForAddress) {
  std::vector<InterfaceAddress> a = {{"eth0", "10.0.0.1"}, {"eth1", "fd00::1"}};
  EXPECT_EQ(InterfaceForAddress("fd00::1", a), "eth1");
  EXPECT_EQ(InterfaceForAddress("10.0.0.9", a), "");
  EXPECT_EQ(InterfaceForAddress("", a), "");
}

class ScanTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise_queue_scan_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& rel, const std::string& content) {
    const std::filesystem::path p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  void Link(const std::string& rel, const std::string& target) {
    const std::filesystem::path p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_symlink(target, p);
  }
  std::filesystem::path root_;
};

TEST_F(ScanTree, ReadsControllersQueuesAndIrqs) {
  Write("sys/devices/system/cpu/online", "0-1\n");
  Write("sys/class/nvme/nvme0/transport", "tcp\n");
  Write("sys/class/nvme/nvme0/address",
        "traddr=10.77.1.2,trsvcid=4420,src_addr=10.77.1.1\n");
  Write("sys/class/nvme/nvme0/queue_count", "3\n");
  std::filesystem::create_directories(root_ / "sys/class/nvme/nvme0/nvme0c0n1");
  Write("sys/block/nvme0c0n1/mq/0/cpu_list", "0\n");
  Write("sys/block/nvme0c0n1/mq/1/cpu_list", "1\n");
  Write("sys/class/nvme/nvme1/transport", "pcie\n");
  Write("sys/devices/virtio0/net/eth0/ifindex", "2\n");
  Link("sys/devices/virtio0/driver", "../../bus/virtio/drivers/virtio_net");
  Link("sys/devices/virtio0/net/eth0/device", "../../../virtio0");
  Link("sys/class/net/eth0", "../../devices/virtio0/net/eth0");
  Write("sys/devices/virtio0/net/eth0/queues/tx-0/xps_cpus", "1\n");
  Write("sys/devices/virtio0/net/eth0/queues/tx-1/xps_cpus", "2\n");
  Write("sys/devices/virtio0/net/eth0/queues/rx-0/rps_cpus", "0\n");
  Write("sys/devices/virtio0/net/eth0/queues/rx-1/rps_cpus", "3\n");
  Write("proc/interrupts",
        "           CPU0       CPU1\n"
        " 25:  1  2  PCI-MSIX-0000:00:02.0   1-edge      virtio0-input.0\n"
        " 26:  1  2  PCI-MSIX-0000:00:02.0   2-edge      virtio0-output.0\n"
        " 30:  1  2  IO-APIC   4-edge      ttyS0\n");
  Write("proc/irq/25/smp_affinity_list", "1\n");
  Write("proc/irq/25/effective_affinity_list", "1\n");
  Write("proc/irq/26/smp_affinity_list", "0-1\n");

  std::vector<std::string> asked;
  RawQueueScan raw = ScanQueues(
      {(root_ / "sys").string(), (root_ / "proc").string(),
       [&](const std::string& dev) -> absl::StatusOr<model::NicChannels> {
         asked.push_back(dev);
         return model::NicChannels{.max_combined = 2, .combined = 2};
       }});
  EXPECT_THAT(asked, ElementsAre("eth0"));
  EXPECT_EQ(raw.online_cpus, 2);
  ASSERT_EQ(raw.controllers.size(), 1u);
  EXPECT_EQ(raw.controllers[0].name, "nvme0");
  EXPECT_EQ(raw.controllers[0].queue_count, 3);
  EXPECT_EQ(raw.controllers[0].block_device, "nvme0c0n1");
  EXPECT_THAT(raw.controllers[0].hctxs,
              ElementsAre(model::Hctx{0, {0}}, model::Hctx{1, {1}}));
  ASSERT_EQ(raw.netdevs.size(), 1u);
  const RawNetdev& d = raw.netdevs[0];
  EXPECT_EQ(d.ifindex, 2);
  EXPECT_EQ(d.driver, "virtio_net");
  EXPECT_EQ(d.bus_device, "virtio0");
  ASSERT_EQ(d.tx.size(), 2u);
  EXPECT_THAT(d.tx[1].steering_cpus, ElementsAre(1));
  EXPECT_TRUE(d.rx[0].steering_known);
  EXPECT_THAT(d.rx[0].steering_cpus, IsEmpty());
  EXPECT_THAT(d.rx[1].steering_cpus, ElementsAre(0, 1));
  ASSERT_EQ(raw.irqs.size(), 2u);  // not ttyS0
  EXPECT_THAT(raw.irqs[0].affinity, ElementsAre(1));
  EXPECT_THAT(raw.irqs[0].effective_affinity, ElementsAre(1));
  EXPECT_THAT(raw.irqs[1].affinity, ElementsAre(0, 1));
  EXPECT_TRUE(raw.sockets_error.empty()) << raw.sockets_error;
  ASSERT_TRUE(d.channels.has_value());
  EXPECT_EQ(d.channels->max_combined, 2);
  EXPECT_EQ(d.channels_unknown, "");
  // The join carries them to the model.
  const model::Netdev nd = MatchNetdevIrqs(d, raw.irqs);
  EXPECT_EQ(nd.channels, d.channels);
}

TEST_F(ScanTree, ChannelsUnknownWithTheReason) {
  Write("sys/class/nvme/nvme0/transport", "tcp\n");
  Write("sys/class/net/veth0/ifindex", "5\n");
  RawQueueScan raw = ScanQueues(
      {(root_ / "sys").string(), (root_ / "proc").string(),
       [](const std::string& dev) -> absl::StatusOr<model::NicChannels> {
         return absl::UnimplementedError(dev + ": no channels");
       }});
  ASSERT_EQ(raw.netdevs.size(), 1u);
  EXPECT_FALSE(raw.netdevs[0].channels.has_value());
  EXPECT_EQ(raw.netdevs[0].channels_unknown, "veth0: no channels");
  const model::Netdev nd = MatchNetdevIrqs(raw.netdevs[0], raw.irqs);
  EXPECT_FALSE(nd.channels.has_value());
  EXPECT_EQ(nd.channels_unknown, "veth0: no channels");
}

TEST_F(ScanTree, NoNvmeNoWork) {
  Write("sys/devices/system/cpu/online", "0\n");
  RawQueueScan raw =
      ScanQueues({(root_ / "sys").string(), (root_ / "proc").string()});
  EXPECT_THAT(raw.controllers, IsEmpty());
  EXPECT_THAT(raw.netdevs, IsEmpty());
}

}  // namespace
}  // namespace pathwise::collectors
