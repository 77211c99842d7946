// SPDX-License-Identifier: Apache-2.0
// pathwise-ledger: the acknowledged-write ledger (README.md here).
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"
#include "tests/data_ledger/ledger_run.h"

namespace pathwise::ledger {
namespace {

std::atomic<bool> g_stop{false};  // set by SIGTERM/SIGINT
void OnSignal(int) { g_stop = true; }

int Fail(const std::string& line) {
  std::fprintf(stderr, "pathwise-ledger: %s\n", line.c_str());
  return 2;
}

// Twice the device's largest request (so the block layer splits it),
// within 256 KiB..8 MiB.
uint32_t LargeBytes(const std::string& device) {
  const std::string name = device.substr(device.rfind('/') + 1);
  std::ifstream f("/sys/block/" + name + "/queue/max_sectors_kb");
  uint64_t kb = 512;
  f >> kb;
  return static_cast<uint32_t>(
      std::clamp<uint64_t>(2 * kb * 1024, 256 << 10, 8 << 20));
}

nlohmann::json Report(const Ledger& l, const Config& c, const Verification& v,
                      const std::string& command, bool verify_only) {
  const Counters& k = l.counters();
  nlohmann::json j;
  j["command"] = command;
  j["seed"] = c.seed;
  j["run"] = c.run;
  j["verify_only"] = verify_only;
  j["region"] = {{"device", c.device}, {"offset", c.offset}, {"size", c.size}};
  j["counts"] = {{"writes_acked", k.writes_acked},
                 {"writes_failed", k.writes_failed},
                 {"fua_writes_acked", k.fua_writes_acked},
                 {"large_writes_acked", k.large_writes_acked},
                 {"large_write_bytes", c.large_bytes},
                 {"bytes_written", k.bytes_written},
                 {"reads_ok", k.reads_ok},
                 {"reads_failed", k.reads_failed},
                 {"read_checks", k.read_checks},
                 {"bytes_read", k.bytes_read},
                 {"flushes_ok", k.flushes_ok},
                 {"flushes_failed", k.flushes_failed},
                 {"write_zeroes_ok", k.write_zeroes_ok},
                 {"write_zeroes_failed", k.write_zeroes_failed},
                 {"write_zeroes_unsupported", k.write_zeroes_unsupported},
                 {"discards_ok", k.discards_ok},
                 {"discards_failed", k.discards_failed},
                 {"discards_unsupported", k.discards_unsupported},
                 {"errors", k.errors}};
  j["verification"] = {{"blocks", v.blocks},
                       {"blocks_ok", v.blocks_ok},
                       {"unreadable", v.unreadable}};
  nlohmann::json viol = {{"total", l.violations()}};
  for (const char* kind : {"lost", "ghost", "foreign", "torn", "misplaced"}) {
    const auto it = l.violation_counts().find(kind);
    viol[kind] = it == l.violation_counts().end() ? 0 : it->second;
  }
  nlohmann::json first = nlohmann::json::array();
  for (const Violation& x : l.first_violations()) {
    first.push_back({{"block", x.block},
                     {"kind", x.kind},
                     {"expected", x.expected},
                     {"found", x.found},
                     {"when", x.when}});
  }
  viol["first"] = first;
  j["violations"] = viol;
  return j;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "the acknowledged-write ledger: writes blocks that name "
      "themselves, records every acknowledgement, checks reads and "
      "a final pass over the region"};
  Config c;
  std::string report_file, state_file;
  bool verify_only = false, no_discard = false, no_write_zeroes = false,
       init = true;
  app.add_option("--device", c.device, "block device")->required();
  app.add_option("--offset", c.offset, "region start, bytes (4 KiB multiple)");
  app.add_option("--size", c.size, "region size, bytes; 0: to the end");
  app.add_option("--seconds", c.seconds, "run time; 0: until stopped");
  app.add_option("--stop-file", c.stop_file, "stop when this file exists");
  app.add_option("--jobs", c.jobs, "threads, one operation each at a time");
  app.add_option("--seed", c.seed, "the operation schedule's seed");
  app.add_option("--verify-retry-seconds", c.verify_retry_seconds,
                 "the final pass retries a failing read this long");
  app.add_option("--report", report_file, "JSON report");
  app.add_option("--state", state_file, "the model, written at the end");
  app.add_flag("--verify-only", verify_only,
               "load --state and only verify the region on --device");
  std::string mix;
  app.add_option("--mix", mix,
                 "operation weights, e.g. write4k=60,read=40 (README)");
  app.add_flag("--no-discard", no_discard, "no Discard");
  app.add_flag("--no-write-zeroes", no_write_zeroes, "no Write Zeroes");
  app.add_flag("--init,!--no-init", init, "write the region once first");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code() == 0 ? app.exit(e) : Fail(e.what());
  }
  if (const std::string e = ParseMix(mix, &c.mix); !e.empty()) return Fail(e);
  std::string command;
  for (int i = 0; i < argc; ++i)
    command += (i ? " " : "") + std::string(argv[i]);
  const int fd = open(c.device.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return Fail(c.device + ": " + std::strerror(errno));
  uint64_t dev_bytes = 0;
  if (ioctl(fd, BLKGETSIZE64, &dev_bytes) != 0) {
    return Fail(c.device + " is not a block device");
  }
  Model model;
  if (verify_only) {
    std::ifstream in(state_file);
    nlohmann::json s = nlohmann::json::parse(in, nullptr, false);
    if (s.is_discarded()) return Fail("--verify-only needs a readable --state");
    c.offset = s.at("offset");
    c.size = s.at("size");
    c.run = s.at("run");
    c.seed = s.at("seed");
    model = Model::FromJson(s.at("blocks"));
  }
  if (c.size == 0 && c.offset < dev_bytes) c.size = dev_bytes - c.offset;
  if (c.offset % kBlock || c.size % kBlock || c.size == 0 ||
      c.offset + c.size > dev_bytes || c.jobs < 1 || c.jobs > 256) {
    return Fail("the region (offset " + std::to_string(c.offset) + ", size " +
                std::to_string(c.size) + ") must be 4 KiB multiples within " +
                c.device + " (" + std::to_string(dev_bytes) +
                " bytes), jobs 1..256");
  }
  if (!verify_only) {
    c.run = (c.seed << 20) ^ static_cast<uint64_t>(std::time(nullptr));
    model = Model(c.size / kBlock);
  }
  c.large_bytes = LargeBytes(c.device);
  if (no_discard) c.mix.discard = 0;
  if (no_write_zeroes) c.mix.write_zeroes = 0;
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  Ledger ledger(c, fd, std::move(model));
  std::fprintf(stderr, "pathwise-ledger: seed %llu, replay: %s\n",
               static_cast<unsigned long long>(c.seed), command.c_str());
  if (!verify_only) {
    std::string error;
    if (init && !ledger.Init(&error)) return Fail("init: " + error);
    std::fprintf(stderr, "ledger: running (region initialised)\n");
    ledger.Run(&g_stop);
  }
  const Verification v = ledger.Verify();
  const nlohmann::json r = Report(ledger, c, v, command, verify_only);
  if (!report_file.empty()) std::ofstream(report_file) << r.dump(2) << "\n";
  if (!state_file.empty() && !verify_only) {
    std::ofstream(state_file)
        << nlohmann::json{{"offset", c.offset},
                          {"size", c.size},
                          {"run", c.run},
                          {"seed", c.seed},
                          {"blocks", ledger.model().ToJson()}};
  }
  const Counters& k = ledger.counters();
  std::printf(
      "ledger: %llu writes acked, %llu failed, %llu reads, %llu "
      "violations; verified %llu/%llu blocks, %llu unreadable\n",
      static_cast<unsigned long long>(k.writes_acked),
      static_cast<unsigned long long>(k.writes_failed),
      static_cast<unsigned long long>(k.reads_ok),
      static_cast<unsigned long long>(ledger.violations()),
      static_cast<unsigned long long>(v.blocks_ok),
      static_cast<unsigned long long>(v.blocks),
      static_cast<unsigned long long>(v.unreadable));
  if (ledger.violations() > 0) return 1;
  return v.unreadable > 0 ? 3 : 0;
}

}  // namespace
}  // namespace pathwise::ledger

int main(int argc, char** argv) {
  try {
    return pathwise::ledger::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pathwise-ledger: %s\n", e.what());
    return 2;
  }
}
