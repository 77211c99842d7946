// SPDX-License-Identifier: Apache-2.0
// The tuning plan on the over-subscribed fixture: ntuple steering to the
// channel whose IRQ is on the worker's CPU, IRQ affinity where no such
// channel exists, XPS masks, channel/queue counts; RPS on a device
// without IRQs; notes without BPF.
#include "control/queue_plan.h"

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/collectors/queue_fixture.h"

namespace pathwise::control {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> Commands(const std::vector<PlanStep>& steps) {
  std::vector<std::string> out;
  for (const PlanStep& s : steps) out.push_back(s.command);
  return out;
}

TEST(CpuMask, SysfsLayout) {
  EXPECT_EQ(CpuMask({0}), "1");
  EXPECT_EQ(CpuMask({0, 1, 2, 3}), "f");
  EXPECT_EQ(CpuMask({0, 33}), "00000002,00000001");
  EXPECT_EQ(CpuMask({}), "0");
}

TEST(QueuePlan, IrqMovesToTheWorkerWhenItsQueueIsFree) {
  // Two I/O queues, both on CPU 2 and 3, channels' IRQs on CPUs 0 and 1:
  // each flow keeps its channel and the channel's IRQ moves.
  collectors::RawQueueScan raw =
      collectors::testing::FourQueuesOnTwoChannelsScan();
  raw.controllers[0].queue_count = 3;
  raw.sockets.resize(3);
  raw.bpf->resize(3);
  (*raw.bpf)[1].io_cpu = 2;
  (*raw.bpf)[2].io_cpu = 3;
  (*raw.bpf)[2].tx_queue = 1;
  (*raw.bpf)[2].rx_queue = 1;
  std::vector<std::string> notes;
  const std::vector<std::string> cmds =
      Commands(BuildQueuePlan(collectors::BuildQueueMap(raw), &notes));
  EXPECT_THAT(cmds, Contains("echo 2 > /proc/irq/40/smp_affinity_list"));
  EXPECT_THAT(cmds, Contains("echo 3 > /proc/irq/41/smp_affinity_list"));
  EXPECT_THAT(cmds, Not(Contains(HasSubstr("ethtool -N"))));
  EXPECT_THAT(notes, IsEmpty());
}

TEST(QueuePlan, OversubscribedChannels) {
  std::vector<std::string> notes;
  const std::vector<PlanStep> steps =
      BuildQueuePlan(collectors::testing::FourQueuesOnTwoChannels(), &notes);
  const std::vector<std::string> cmds = Commands(steps);
  // qid 2 (CPU 1) arrives on channel 0 (IRQ on CPU 0): steer it to
  // channel 1, whose IRQ is on CPU 1.
  EXPECT_THAT(cmds, Contains("ethtool -N eth0 flow-type tcp4 src-ip "
                             "192.168.7.2 dst-ip 192.168.7.1 src-port 4420 "
                             "dst-port 40002 action 1"));
  // qids 3 and 4 (CPUs 2, 3): both channels now serve a CPU of their
  // own, so nothing is left for them; the notes say so.
  EXPECT_THAT(cmds, Not(Contains(HasSubstr("smp_affinity_list"))));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("nvme0 qid 3 (CPU 2): no RX queue of eth0"));
  // XPS: CPU 0 on tx-0, CPU 1 on tx-1 (its IRQ's), CPUs 2-3 on tx-1.
  EXPECT_THAT(cmds,
              Contains("echo 1 > /sys/class/net/eth0/queues/tx-0/xps_cpus"));
  EXPECT_THAT(cmds,
              Contains("echo e > /sys/class/net/eth0/queues/tx-1/xps_cpus"));
  EXPECT_THAT(cmds, Contains("ethtool -L eth0 combined 4"));
  EXPECT_THAT(cmds, Contains(HasSubstr("--nr-io-queues=2")));
  for (const PlanStep& s : steps) EXPECT_FALSE(s.why.empty()) << s.command;
  // The aligned qid 1 needs no receive step.
  EXPECT_THAT(cmds, Not(Contains(HasSubstr("dst-port 40001"))));
  EXPECT_THAT(cmds, Not(Contains(HasSubstr("/proc/irq/40/"))));
}

TEST(QueuePlan, RpsOnADeviceWithoutIrqs) {
  collectors::RawQueueScan raw =
      collectors::testing::FourQueuesOnTwoChannelsScan();
  raw.irqs.clear();
  raw.netdevs[0].driver = "";
  model::QueueMap m = collectors::BuildQueueMap(raw);
  m.mismatches = collectors::FindMismatches(m);
  std::vector<std::string> notes;
  const std::vector<std::string> cmds = Commands(BuildQueuePlan(m, &notes));
  // rx-0 carries qids 1 and 2 (CPUs 0, 1), rx-1 qids 3 and 4 (CPUs 2, 3).
  EXPECT_THAT(cmds,
              Contains("echo 3 > /sys/class/net/eth0/queues/rx-0/rps_cpus"));
  EXPECT_THAT(cmds,
              Contains("echo c > /sys/class/net/eth0/queues/rx-1/rps_cpus"));
  EXPECT_THAT(cmds, Not(Contains(HasSubstr("ethtool -N"))));
  // XPS spreads the CPUs over the TX queues none completes on: CPU 0 on
  // tx-0, CPU 1 on tx-1, then 2 and 3 where their flows already are.
  EXPECT_THAT(cmds,
              Contains("echo 1 > /sys/class/net/eth0/queues/tx-0/xps_cpus"));
  EXPECT_THAT(cmds,
              Contains("echo e > /sys/class/net/eth0/queues/tx-1/xps_cpus"));
  // A virtual device's queue count is fixed: only fewer I/O queues.
  EXPECT_THAT(cmds, Not(Contains(HasSubstr("ethtool -L"))));
  EXPECT_THAT(cmds, Contains(HasSubstr("--nr-io-queues=2")));
}

TEST(QueuePlan, WithoutBpfOnlyNotesAndQueueCounts) {
  collectors::RawQueueScan raw =
      collectors::testing::FourQueuesOnTwoChannelsScan();
  raw.bpf.reset();
  raw.bpf_unknown = "needs nvme_tcp BTF";
  model::QueueMap m = collectors::BuildQueueMap(raw);
  m.mismatches = collectors::FindMismatches(m);
  std::vector<std::string> notes;
  const std::vector<std::string> cmds = Commands(BuildQueuePlan(m, &notes));
  EXPECT_THAT(cmds, Contains("ethtool -L eth0 combined 4"));
  EXPECT_EQ(cmds.size(), 2u) << absl::StrJoin(cmds, "\n");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("5 flows whose queue or io_cpu is unknown"));
  EXPECT_THAT(notes[0], HasSubstr("needs nvme_tcp BTF"));
}

// The fixture's eth0 (mlx5_core, 2 queue pairs) under nvme0's 4 I/O
// queues, with the channels its driver reports.
model::QueueMap WithChannels(std::optional<model::NicChannels> channels,
                             std::string unknown = "") {
  collectors::RawQueueScan raw =
      collectors::testing::FourQueuesOnTwoChannelsScan();
  raw.netdevs[0].channels = channels;
  raw.netdevs[0].channels_unknown = std::move(unknown);
  model::QueueMap m = collectors::BuildQueueMap(raw);
  m.mismatches = collectors::FindMismatches(m);
  return m;
}

const PlanStep* StepWith(const std::vector<PlanStep>& steps,
                         const std::string& part) {
  for (const PlanStep& s : steps) {
    if (s.command.find(part) != std::string::npos) return &s;
  }
  return nullptr;
}

TEST(QueuePlan, ChannelsUpToTheIoQueuesWhenTheNicHasThem) {
  std::vector<std::string> notes;
  const std::vector<PlanStep> steps = BuildQueuePlan(
      WithChannels(model::NicChannels{.max_combined = 8, .combined = 2}),
      &notes);
  const PlanStep* l = StepWith(steps, "ethtool -L");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->command, "ethtool -L eth0 combined 4");
  EXPECT_THAT(l->why, HasSubstr("eth0 takes up to 8"));
  EXPECT_THAT(Commands(steps), Contains(HasSubstr("--nr-io-queues=2")));
}

TEST(QueuePlan, ChannelsCappedAtTheNicsMaximum) {
  std::vector<std::string> notes;
  const std::vector<PlanStep> steps = BuildQueuePlan(
      WithChannels(model::NicChannels{.max_combined = 3, .combined = 2}),
      &notes);
  const PlanStep* l = StepWith(steps, "ethtool -L");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->command, "ethtool -L eth0 combined 3");
  EXPECT_THAT(l->why, HasSubstr("at most 3 combined channels"));
  // The channels the NIC will have end the sharing only with as many
  // I/O queues.
  const PlanStep* r = StepWith(steps, "--nr-io-queues=");
  ASSERT_NE(r, nullptr);
  EXPECT_THAT(r->command, HasSubstr("--nr-io-queues=3"));
  EXPECT_THAT(r->why, HasSubstr("cannot end the sharing"));
}

TEST(QueuePlan, NoChannelStepWhenTheNicIsAtItsMaximum) {
  std::vector<std::string> notes;
  const std::vector<PlanStep> steps = BuildQueuePlan(
      WithChannels(model::NicChannels{.max_combined = 2, .combined = 2}),
      &notes);
  EXPECT_THAT(Commands(steps), Not(Contains(HasSubstr("ethtool -L"))));
  const PlanStep* r = StepWith(steps, "--nr-io-queues=");
  ASSERT_NE(r, nullptr);
  EXPECT_THAT(r->command, HasSubstr("--nr-io-queues=2"));
  EXPECT_THAT(r->why, HasSubstr("eth0 takes at most 2 combined channels, "
                                "fewer than the 4 I/O queues of nvme0"));
}

TEST(QueuePlan, SeparateRxTxChannels) {
  std::vector<std::string> notes;
  const std::vector<PlanStep> steps =
      BuildQueuePlan(WithChannels(model::NicChannels{
                         .max_rx = 16, .max_tx = 6, .rx = 2, .tx = 2}),
                     &notes);
  EXPECT_THAT(Commands(steps), Contains("ethtool -L eth0 rx 4 tx 4"));
}

TEST(QueuePlan, UnknownMaximumKeepsTheProposalAndSaysSo) {
  std::vector<std::string> notes;
  const std::vector<PlanStep> steps = BuildQueuePlan(
      WithChannels(std::nullopt,
                   "eth0: the driver reports no channels (ETHTOOL_GCHANNELS)"),
      &notes);
  const PlanStep* l = StepWith(steps, "ethtool -L");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->command, "ethtool -L eth0 combined 4");
  EXPECT_THAT(l->why, HasSubstr("maximum is unknown: eth0: the driver "
                                "reports no channels"));
  EXPECT_THAT(Commands(steps), Contains(HasSubstr("--nr-io-queues=2")));
}

}  // namespace
}  // namespace pathwise::control
