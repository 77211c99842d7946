// SPDX-License-Identifier: Apache-2.0
// The queue map's views: the JSON document's shape and values, the text
// table with mismatches marked, the Prometheus families (only when the
// snapshot has a queue map, i.e. --queues) and promtool's verdict on them.
#include "exporters/queues_view.h"

#include <cstdio>
#include <fstream>

#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "tests/unit/collectors/queue_fixture.h"
#include "tests/unit/promtool.h"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const BuildInfo kBuild{"0.0.0-test", "queues"};

TEST(QueuesJson, ChainPerFlow) {
  const nlohmann::json j =
      QueueMapToJson(collectors::testing::FourQueuesOnTwoChannels());
  EXPECT_EQ(j["online_cpus"], 4);
  EXPECT_EQ(j["bpf"]["queues"], true);
  const nlohmann::json& c = j["controllers"][0];
  EXPECT_EQ(c["name"], "nvme0");
  EXPECT_EQ(c["io_queues"], 4);
  EXPECT_EQ(c["netdev"], "eth0");
  EXPECT_EQ(c["hctxs"][1]["qid"], 2);
  EXPECT_EQ(c["hctxs"][1]["cpus"], nlohmann::json::array({1}));
  ASSERT_EQ(c["flows"].size(), 5u);
  const nlohmann::json& f = c["flows"][2];
  EXPECT_EQ(f["qid"], 2);
  EXPECT_EQ(f["io_cpu"], 1);
  EXPECT_EQ(f["local_port"], 40002);
  EXPECT_EQ(f["tcp"]["rtt_us"], 252);
  EXPECT_EQ(f["rx_queue"], 0);
  EXPECT_EQ(f["rx_irq"], 40);
  EXPECT_EQ(f["rx_irq_cpus"], nlohmann::json::array({0}));
  const nlohmann::json& d = j["netdevs"][0];
  EXPECT_EQ(d["driver"], "mlx5_core");
  EXPECT_EQ(d["rx"][1]["irq"], 41);
  EXPECT_EQ(d["rx"][1]["rps_cpus"], nlohmann::json::array());
  EXPECT_EQ(j["mismatches"].size(), 8u);
  EXPECT_EQ(j["mismatches"][0]["kind"], "rx_irq_off_worker");
  EXPECT_EQ(j["mismatches"][7]["kind"], "oversubscribed");
}

TEST(QueuesJson, UnknownsAreNullWithReasons) {
  collectors::RawQueueScan raw =
      collectors::testing::FourQueuesOnTwoChannelsScan();
  raw.bpf.reset();
  raw.bpf_unknown = "needs nvme_tcp BTF";
  const nlohmann::json j = QueueMapToJson(collectors::BuildQueueMap(raw));
  const nlohmann::json& f = j["controllers"][0]["flows"][0];
  EXPECT_TRUE(f["qid"].is_null());
  EXPECT_TRUE(f["io_cpu"].is_null());
  EXPECT_TRUE(f["tx_queue"].is_null());
  EXPECT_THAT(f["queue_unknown"].get<std::string>(),
              HasSubstr("needs nvme_tcp BTF"));
  EXPECT_THAT(f["nic_queue_unknown"].get<std::string>(),
              HasSubstr("eth0 has 2 TX and 2 RX queues"));
  EXPECT_EQ(j["bpf"]["unknown"], "needs nvme_tcp BTF");
}

TEST(QueuesJson, ChannelsKnownAndUnknown) {
  collectors::RawQueueScan raw =
      collectors::testing::FourQueuesOnTwoChannelsScan();
  raw.netdevs[0].channels =
      model::NicChannels{.max_combined = 8, .combined = 2};
  nlohmann::json j = QueueMapToJson(collectors::BuildQueueMap(raw));
  EXPECT_EQ(j["netdevs"][0]["channels"]["max_combined"], 8);
  EXPECT_EQ(j["netdevs"][0]["channels"]["combined"], 2);
  EXPECT_EQ(j["netdevs"][0]["channels_unknown"], "");
  EXPECT_THAT(QueueMapToText(collectors::BuildQueueMap(raw)),
              HasSubstr("  channels: combined 2 of max 8, rx 0 of 0"));
  raw.netdevs[0].channels.reset();
  raw.netdevs[0].channels_unknown = "eth0: no channels";
  j = QueueMapToJson(collectors::BuildQueueMap(raw));
  EXPECT_TRUE(j["netdevs"][0]["channels"].is_null());
  EXPECT_EQ(j["netdevs"][0]["channels_unknown"], "eth0: no channels");
  EXPECT_THAT(QueueMapToText(collectors::BuildQueueMap(raw)),
              HasSubstr("  channels: ? (eth0: no channels)\n"));
}

TEST(QueuesText, FlowsAndMarkedMismatches) {
  const std::string t =
      QueueMapToText(collectors::testing::FourQueuesOnTwoChannels());
  EXPECT_THAT(t, HasSubstr("nvme0 tcp 192.168.7.2:4420 from 192.168.7.1 via "
                           "eth0, 4 I/O queues"));
  EXPECT_THAT(t, HasSubstr("hctx 3 = qid 4, submitted from CPU 3"));
  EXPECT_THAT(t, HasSubstr("192.168.7.1:40002"));
  EXPECT_THAT(t, HasSubstr("! rx_irq_off_worker: nvme0 qid 2 io_work on CPU "
                           "1, its RX IRQ (eth0 rx-0) on CPU 0"));
  EXPECT_THAT(t, HasSubstr("! shared_nic_queue: eth0 tx-0 carries I/O queues "
                           "nvme0:1 nvme0:2"));
  EXPECT_THAT(t, HasSubstr("! oversubscribed: nvme0 has 4 I/O queues, eth0 "
                           "has 2 queue pairs"));
  EXPECT_THAT(t, HasSubstr("rx-1 rps off irq 41 (mlx5_comp1@pci:0000:3b:00.0) "
                           "on CPU 1"));
  EXPECT_EQ(QueueMapToText({}), "no NVMe/TCP controllers\n");
}

TEST(CpuListText, Ranges) {
  EXPECT_EQ(CpuListText({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(CpuListText({}), "");
}

model::Snapshot WithQueues() {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  s.queues = collectors::testing::FourQueuesOnTwoChannels();
  return s;
}

TEST(QueuesExposition, FamiliesOnlyWithTheMap) {
  const model::Snapshot s = WithQueues();
  const std::string text = SerializeText(BuildFamilies(&s, kBuild));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_map_bpf 1"));
  EXPECT_THAT(text,
              HasSubstr("pathwise_queue_io_queues{controller=\"nvme0\"} 4"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_flows{controller=\"nvme0\"} 5"));
  EXPECT_THAT(text, HasSubstr("pathwise_flow_rtt_seconds{controller=\"nvme0\","
                              "qid=\"2\",local_port=\"40002\"} 0.000252"));
  EXPECT_THAT(text, HasSubstr("pathwise_flow_io_cpu{controller=\"nvme0\","
                              "qid=\"3\",local_port=\"40003\"} 2"));
  EXPECT_THAT(text, HasSubstr("pathwise_flow_nic_queue{controller=\"nvme0\","
                              "qid=\"3\",local_port=\"40003\",direction="
                              "\"rx\"} 1"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_mismatches{kind=\"shared_nic_"
                              "queue\"} 4"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_mismatches{kind=\"oversubscribed"
                              "\"} 1"));
  EXPECT_THAT(text, HasSubstr("pathwise_queue_nic_irq_cpus{netdev=\"eth0\","
                              "direction=\"rx\",queue=\"1\",irq=\"41\",cpus="
                              "\"1\"} 1"));
  const model::Snapshot off = model::MakeSyntheticSnapshot({});
  EXPECT_THAT(SerializeText(BuildFamilies(&off, kBuild)),
              Not(HasSubstr("pathwise_queue")));
}

TEST(QueuesSnapshotJson, OnlyWithTheMap) {
  const nlohmann::json j = SnapshotToJson(WithQueues());
  EXPECT_EQ(j["queues"]["controllers"][0]["name"], "nvme0");
  EXPECT_FALSE(
      SnapshotToJson(model::MakeSyntheticSnapshot({})).contains("queues"));
}

TEST(QueuesExposition, PromtoolAcceptsIt) {
  const model::Snapshot s = WithQueues();
  testing_util::ExpectPromtoolAccepts(SerializeText(BuildFamilies(&s, kBuild)),
                                      "queues.prom");
}

}  // namespace
}  // namespace pathwise::exporters
