// SPDX-License-Identifier: Apache-2.0
// The queue source end to end without a VM: a sysfs tree with one NVMe/TCP
// controller whose portal is a loopback listener of this test, so that the
// live sock_diag dump finds the test's own connection as its flow; BPF off.
// And the pipeline's view: QueueIoSource fills IoReading::queues.
#include "collectors/queue_source.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pathwise::collectors {
namespace {

using ::testing::HasSubstr;

class QueueSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise_queue_source_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    listen_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listen_, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    ASSERT_EQ(listen(listen_, 1), 0);
    socklen_t len = sizeof(a);
    ASSERT_EQ(getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = ntohs(a.sin_port);
    conn_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(conn_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    sockaddr_in local{};
    len = sizeof(local);
    ASSERT_EQ(getsockname(conn_, reinterpret_cast<sockaddr*>(&local), &len), 0);
    local_port_ = ntohs(local.sin_port);
    Write("sys/devices/system/cpu/online", "0\n");
    Write("sys/class/nvme/nvme3/transport", "tcp\n");
    Write("sys/class/nvme/nvme3/address",
          absl::StrCat("traddr=127.0.0.1,trsvcid=", port_,
                       ",src_addr=127.0.0.1\n"));
    Write("sys/class/nvme/nvme3/queue_count", "1\n");
    Write("proc/interrupts", "           CPU0\n");
  }
  void TearDown() override {
    close(conn_);
    close(listen_);
    std::filesystem::remove_all(root_);
  }
  void Write(const std::string& rel, const std::string& content) {
    const std::filesystem::path p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  QueueScanRoots Roots() const {
    return {(root_ / "sys").string(), (root_ / "proc").string()};
  }

  std::filesystem::path root_;
  int listen_ = -1, conn_ = -1;
  uint16_t port_ = 0, local_port_ = 0;
};

TEST_F(QueueSourceTest, TheLiveConnectionIsTheControllersFlow) {
  QueueSource source(Roots(), /*use_bpf=*/false);
  const model::QueueMap m = source.Collect();
  EXPECT_FALSE(m.bpf_queues);
  EXPECT_EQ(m.bpf_unknown, "BPF off");
  ASSERT_EQ(m.controllers.size(), 1u);
  const model::TcpController& c = m.controllers[0];
  EXPECT_EQ(c.name, "nvme3");
  ASSERT_EQ(c.flows.size(), 1u) << c.flows_unknown;
  EXPECT_EQ(c.flows[0].socket.local_port, local_port_);
  EXPECT_EQ(c.flows[0].socket.remote_port, port_);
  EXPECT_TRUE(c.flows[0].socket.info.has_value());
  EXPECT_THAT(c.flows[0].queue_unknown, HasSubstr("BPF off"));
  EXPECT_EQ(c.flows_unknown, "");
  // 127.0.0.1 is on lo, which the tree (like the map) leaves out.
  EXPECT_EQ(c.netdev, "");
  EXPECT_THAT(c.netdev_unknown, HasSubstr("lo not in sysfs"));
}

TEST_F(QueueSourceTest, AsAnIoSourceItFillsTheReading) {
  QueueIoSource io_source(std::make_unique<QueueSource>(Roots(), false));
  EXPECT_EQ(io_source.name(), "queues");
  model::IoReading io;
  ASSERT_TRUE(io_source.Read(model::Topology{}, io).ok());
  ASSERT_TRUE(io.queues.has_value());
  ASSERT_EQ(io.queues->controllers.size(), 1u);
  EXPECT_EQ(io.queues->controllers[0].flows.size(), 1u);
  // The connection closes: the next reading has no flow and says why.
  close(conn_);
  conn_ = -1;
  ASSERT_TRUE(io_source.Read(model::Topology{}, io).ok());
  EXPECT_TRUE(io.queues->controllers[0].flows.empty());
  EXPECT_THAT(io.queues->controllers[0].flows_unknown,
              HasSubstr("queue_count is 1 but 0 established sockets"));
}

}  // namespace
}  // namespace pathwise::collectors
