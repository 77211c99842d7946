// SPDX-License-Identifier: Apache-2.0
// Strings that are not UTF-8 on their way out: the repair itself, and every
// view of a snapshot whose sysfs strings and collector errors hold raw bytes
// (a serial copied from Identify data, an error quoting it) stays valid: the
// exposition, the JSON documents, /healthz and the text view.
#include "exporters/utf8.h"

#include <memory>
#include <string>
#include <vector>

#include "exporters/http_routes.h"
#include "exporters/prometheus_families.h"
#include "exporters/topology_json.h"
#include "exporters/topology_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/synthetic.h"
#include "nlohmann/json.hpp"

namespace pathwise::exporters {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

// U+FFFD, for expectations.
const std::string R(kReplacementCharacter);

std::string Repaired(std::string s, size_t* replaced = nullptr) {
  const size_t n = ReplaceInvalidUtf8(s);
  if (replaced != nullptr) *replaced = n;
  return s;
}

TEST(Utf8, ValidTextIsLeftAlone) {
  for (const std::string& s : std::vector<std::string>{
           "", "SN12345", "caf\xC3\xA9", "\xE2\x82\xAC 5", "\xF0\x9F\x98\x80",
           "\xF4\x8F\xBF\xBF", std::string("nul\0inside", 10),
           "nqn.2014-08.org.nvmexpress:uuid:caf\xC3\xA9"}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
    size_t n = 1;
    EXPECT_EQ(Repaired(s, &n), s);
    EXPECT_EQ(n, 0u);
  }
}

TEST(Utf8, EachMaximalIllFormedSubpartBecomesOneReplacement) {
  struct Case {
    std::string in, out;
    size_t replaced;
  };
  // (A literal's hex escape would swallow a following hex digit, hence the
  // std::string pieces.)
  const std::string b = "\xFF";
  for (const Case& c : std::vector<Case>{
           // never lead bytes
           {"\xFF\xFE", R + R, 2},
           // one bad byte inside
           {"SN" + b + "42", "SN" + R + "42", 1},
           // truncated at the end
           {"ab\xC3", "ab" + R, 1},
           // truncated 3-byte and 4-byte forms
           {"\xE2\x82" + std::string("x"), R + "x", 1},
           {"\xF0\x9F\x98" + std::string("!"), R + "!", 1},
           // overlong forms
           {"\xC0\xAF", R + R, 2},
           {"\xE0\x80\xAF", R + R + R, 3},
           // a surrogate
           {"\xED\xA0\x80", R + R + R, 3},
           // above U+10FFFF
           {"\xF4\x90\x80\x80", R + R + R + R, 4},
           // stray continuation bytes
           {"\x80" + std::string("a\xBF"), R + "a" + R, 2},
           // past and within the first eight (ASCII) bytes
           {"0123456789" + b, "0123456789" + R, 1},
           {"ab" + b + "cdefghijklmnop", "ab" + R + "cdefghijklmnop", 1},
       }) {
    EXPECT_FALSE(IsValidUtf8(c.in)) << c.in;
    size_t n = 0;
    EXPECT_EQ(Repaired(c.in, &n), c.out) << c.in;
    EXPECT_EQ(n, c.replaced) << c.in;
    EXPECT_TRUE(IsValidUtf8(c.out));
  }
}

// The synthetic snapshot (one subsystem, one head, two controllers with a
// path each) with raw bytes wherever sysfs hands over a string.
model::Snapshot WithRawBytes() {
  model::Snapshot s = model::MakeSyntheticSnapshot({});
  model::Subsystem& sub = s.topology.subsystems.at(0);
  sub.serial = "SN\xFF\xFE";
  sub.model = "Model \xC3";
  sub.nqn = "nqn.2014-08.org.example:\xFF";
  sub.iopolicy = model::Iopolicy::kUnknown;
  sub.unknown_iopolicy = "\xFE";
  s.topology.controllers.at(0).address = "traddr=10.0.0.\xFF";
  s.collectors.at(0).success = false;
  s.collectors.at(0).error = "class/nvme/nvme0/state: unknown \"\xFF\xFE\"";
  return s;
}

double Value(const std::vector<prometheus::MetricFamily>& fams,
             const std::string& name) {
  for (const auto& f : fams) {
    if (f.name == name && f.metric.size() == 1) return f.metric[0].gauge.value;
  }
  return -1;
}

TEST(Utf8Exposition, RawSysfsBytesAreReplacedAndCounted) {
  const model::Snapshot s = WithRawBytes();
  const auto fams = BuildFamilies(&s, {"1.0", "abc"});
  const std::string text = SerializeText(fams);
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_THAT(text, HasSubstr("serial=\"SN" + R + R + "\""));
  EXPECT_THAT(text, HasSubstr("model=\"Model " + R + "\""));
  EXPECT_THAT(text, HasSubstr("iopolicy=\"" + R + "\""));
  // subsystem_info: nqn, iopolicy, model, serial; the address in
  // pathwise_path_info (one path on that controller) and
  // pathwise_controller_info.
  EXPECT_EQ(Value(fams, "pathwise_invalid_utf8_label_values"), 6);
  EXPECT_THAT(text, HasSubstr("\n# TYPE pathwise_invalid_utf8_label_values "
                              "gauge\npathwise_invalid_utf8_label_values 6\n"));
}

TEST(Utf8Exposition, CleanSnapshotHasNoRepairFamily) {
  const model::Snapshot s = model::MakeSyntheticSnapshot({});
  const auto fams = BuildFamilies(&s, {"1.0", "abc"});
  EXPECT_EQ(Value(fams, "pathwise_invalid_utf8_label_values"), -1);
  EXPECT_THAT(SerializeText(fams),
              ::testing::Not(HasSubstr("pathwise_invalid_utf8")));
}

TEST(Utf8Json, SnapshotAndTopologyDocumentsAreValid) {
  const model::Snapshot s = WithRawBytes();
  // nlohmann's default dump() throws type_error 316 on these strings.
  EXPECT_THROW(SnapshotToJson(s).dump(), json::type_error);
  for (const std::string& text :
       {JsonText(SnapshotToJson(s)), JsonText(TopologyToJson(s.topology))}) {
    EXPECT_TRUE(IsValidUtf8(text));
    // The parser checks UTF-8 strictly.
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << text;
    EXPECT_EQ(j["subsystems"][0]["serial"], "SN" + R + R);
    EXPECT_EQ(j["subsystems"][0]["iopolicy"], R);
  }
  const json j = json::parse(JsonText(SnapshotToJson(s)));
  EXPECT_EQ(j["collectors"][0]["error"],
            "class/nvme/nvme0/state: unknown \"" + R + R + "\"");
}

TEST(Utf8Routes, EveryRouteAnswersValidText) {
  model::SnapshotStore store;
  store.Publish(std::make_shared<const model::Snapshot>(WithRawBytes()));
  model::Health health;
  health.stages = WithRawBytes().collectors;
  health.reason = "collector nvme_topology failed";
  HttpRoutes routes =
      MakeAgentRoutes(store, [&health] { return health; }, {"1.0", "abc"});
  for (const char* route :
       {"/metrics", "/healthz", "/api/v1/topology", "/api/v1/snapshot"}) {
    const HttpResponse r = routes.at(route)();
    EXPECT_NE(r.status, 500) << route;
    EXPECT_TRUE(IsValidUtf8(r.Body())) << route;
    EXPECT_THAT(r.Body(), HasSubstr(R)) << route;
  }
}

TEST(Utf8Text, TopologyViewIsValid) {
  const model::Snapshot s = WithRawBytes();
  const std::string text = TopologyToText(s.topology, nullptr);
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_THAT(text, HasSubstr("serial=SN" + R + R));
}

}  // namespace
}  // namespace pathwise::exporters
