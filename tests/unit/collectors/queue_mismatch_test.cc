// SPDX-License-Identifier: Apache-2.0
// The mismatch rules on the over-subscribed fixture and on variants that
// are aligned, or where a link of the chain is unknown (nothing flagged).
#include "collectors/queue_mismatch.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/collectors/queue_fixture.h"

namespace pathwise::collectors {
namespace {

using ::testing::ElementsAre;
using testing::FourQueuesOnTwoChannels;
using testing::FourQueuesOnTwoChannelsScan;
using ::testing::IsEmpty;

TEST(QueueMismatch, RxIrqOffWorker) {
  const model::QueueMap m = FourQueuesOnTwoChannels();
  const std::vector<model::QueueMismatch> x = RxIrqOffWorker(m);
  // qid 1 is aligned (CPU 0, IRQ 40 on CPU 0); 2, 3 and 4 are not.
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0].qid, 2);
  EXPECT_EQ(x[0].io_cpu, 1);
  EXPECT_EQ(x[0].nic_queue, 0);
  EXPECT_THAT(x[0].irq_cpus, ElementsAre(0));
  EXPECT_EQ(x[1].qid, 3);
  EXPECT_THAT(x[1].irq_cpus, ElementsAre(1));
  EXPECT_EQ(x[2].qid, 4);
}

TEST(QueueMismatch, TheAdminQueuesIrqIsNotAMismatch) {
  model::QueueMap m = FourQueuesOnTwoChannels();
  // The admin queue's flow on the RX queue whose IRQ is off qid 2's worker,
  // with that worker's CPU (6.1 gives the admin queue one).
  model::TcpController& c = m.controllers[0];
  auto qid2 = std::find_if(c.flows.begin(), c.flows.end(),
                           [](const auto& f) { return f.qid == 2; });
  ASSERT_NE(qid2, c.flows.end());
  model::TcpQueueFlow admin = *qid2;
  admin.qid = 0;
  c.flows.push_back(admin);
  const std::vector<model::QueueMismatch> x = RxIrqOffWorker(m);
  ASSERT_EQ(x.size(), 3u);
  for (const model::QueueMismatch& y : x) EXPECT_NE(y.qid, 0);
}

TEST(QueueMismatch, EffectiveAffinityWinsOverTheRequestedOne) {
  model::QueueMap m = FourQueuesOnTwoChannels();
  // Without an effective affinity the requested one (all CPUs) counts:
  // every io_cpu is in it.
  for (model::Irq& i : m.netdevs[0].irqs) i.effective_affinity.clear();
  EXPECT_THAT(RxIrqOffWorker(m), IsEmpty());
}

TEST(QueueMismatch, SharedNicQueuesPerDirection) {
  const std::vector<model::QueueMismatch> x =
      SharedNicQueues(FourQueuesOnTwoChannels());
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(x[0].direction, model::NicDirection::kTx);
  EXPECT_EQ(x[0].nic_queue, 0);
  // The admin queue (qid 0) shares channel 0 too, but carries no I/O.
  EXPECT_THAT(x[0].queues, ElementsAre("nvme0:1", "nvme0:2"));
  EXPECT_EQ(x[1].direction, model::NicDirection::kTx);
  EXPECT_THAT(x[1].queues, ElementsAre("nvme0:3", "nvme0:4"));
  EXPECT_EQ(x[2].direction, model::NicDirection::kRx);
}

TEST(QueueMismatch, Oversubscribed) {
  const std::vector<model::QueueMismatch> x =
      Oversubscribed(FourQueuesOnTwoChannels());
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0].controller, "nvme0");
  EXPECT_EQ(x[0].netdev, "eth0");
  EXPECT_EQ(x[0].io_queues, 4);
  EXPECT_EQ(x[0].nic_queues, 2);
}

TEST(QueueMismatch, AlignedMapHasNone) {
  RawQueueScan raw = FourQueuesOnTwoChannelsScan();
  raw.controllers[0].queue_count = 3;
  raw.sockets.resize(3);
  raw.bpf->resize(3);
  // qid 1 on CPU 0 / channel 0, qid 2 on CPU 1 / channel 1.
  (*raw.bpf)[2].io_cpu = 1;
  (*raw.bpf)[2].tx_queue = 1;
  (*raw.bpf)[2].rx_queue = 1;
  const model::QueueMap m = BuildQueueMap(raw);
  EXPECT_THAT(FindMismatches(m), IsEmpty());
}

TEST(QueueMismatch, UnknownLinksFlagNothingButOversubscription) {
  RawQueueScan raw = FourQueuesOnTwoChannelsScan();
  raw.bpf.reset();
  raw.bpf_unknown = "needs nvme_tcp BTF";
  const model::QueueMap m = BuildQueueMap(raw);
  EXPECT_THAT(RxIrqOffWorker(m), IsEmpty());
  EXPECT_THAT(SharedNicQueues(m), IsEmpty());
  EXPECT_EQ(Oversubscribed(m).size(), 1u);
  EXPECT_EQ(FindMismatches(m).size(), 1u);
}

}  // namespace
}  // namespace pathwise::collectors
