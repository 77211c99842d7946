// SPDX-License-Identifier: Apache-2.0
// `pathwise datapath`: flag checks, the agent's parsing of the subcommand,
// and the one-line refusals RunDatapath gives before it touches a device
// (native multipath on, no such namespace, one path, ublk_drv missing).
#include "datapath/datapath_cli.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "agent/cli.h"
#include "datapath/ublk/control.h"
#include "gtest/gtest.h"
#include "tests/unit/collectors/sys_fixture.h"

namespace pathwise::datapath {
namespace {

namespace fs = std::filesystem;

std::string CheckError(const DatapathFlags& f) {
  absl::StatusOr<DatapathOptions> o = CheckDatapathArgs(f);
  return o.ok() ? "" : std::string(o.status().message());
}

TEST(DatapathFlagsTest, Checks) {
  DatapathFlags f;
  EXPECT_EQ(CheckError(f),
            "datapath needs --namespace (an identity, nvmeXnY, or auto)");
  f.namespace_spec = "auto";
  EXPECT_EQ(CheckError(f), "");
  f.policy = "numa";
  EXPECT_EQ(CheckError(f),
            "--policy must be round-robin, queue-depth or pathwise, not "
            "\"numa\"");
  f.policy = "queue-depth";
  f.queues = 0;
  EXPECT_EQ(CheckError(f), "--queues must be 1..64, not 0");
  f.queues = 2;
  f.depth = 5000;
  EXPECT_EQ(CheckError(f), "--depth must be 1..4096, not 5000");
  f.depth = 128;
  EXPECT_EQ(CheckDatapathArgs(f)->scheduler, "none");
  f.scheduler = "mq deadline";
  EXPECT_EQ(CheckError(f),
            "--scheduler must be an I/O scheduler's name (none, mq-deadline, "
            "...) or kernel, not 'mq deadline'");
  f.scheduler = "kernel";
  EXPECT_EQ(CheckDatapathArgs(f)->scheduler, "kernel");
  f.no_path_timeout = "soon";
  EXPECT_EQ(CheckError(f),
            "--no-path-timeout must be a positive duration such as 30s, not "
            "\"soon\"");
  f.no_path_timeout = "5s";
  const DatapathOptions o = *CheckDatapathArgs(f);
  EXPECT_EQ(o.policy, policy::Policy::kQueueDepth);
  EXPECT_EQ(o.queues, 2);
  EXPECT_EQ(o.depth, 128);
  EXPECT_EQ(o.no_path_timeout, absl::Seconds(5));
  EXPECT_EQ(o.io_timeout, absl::Seconds(10));
  EXPECT_EQ(o.ana_interval, absl::Seconds(10));
  f.ana_interval = "0s";
  EXPECT_EQ(CheckError(f),
            "--ana-interval must be a positive duration such as 30s, not "
            "\"0s\"");
  f.ana_interval = "2s";
  EXPECT_EQ(CheckDatapathArgs(f)->ana_interval, absl::Seconds(2));
  EXPECT_FALSE(o.write_fence.has_value());  // auto
  EXPECT_EQ(o.defect, SeededDefect::kNone);
  f.write_fence = "0s";
  EXPECT_EQ(CheckDatapathArgs(f)->write_fence, absl::ZeroDuration());
  f.write_fence = "1500ms";
  EXPECT_EQ(CheckDatapathArgs(f)->write_fence, absl::Milliseconds(1500));
  for (const char* bad : {"-1s", "2h", "later"}) {
    f.write_fence = bad;
    EXPECT_EQ(CheckError(f),
              absl::StrCat("--write-fence must be auto or a duration of "
                           "0s..1h, not \"",
                           bad, "\""));
  }
  f.write_fence = "auto";
  f.seed_defect = "retry_timed_out_at_once";
  EXPECT_EQ(CheckDatapathArgs(f)->defect, SeededDefect::kRetryTimedOutAtOnce);
  f.seed_defect = "ack_before_completion";
  EXPECT_EQ(CheckDatapathArgs(f)->defect, SeededDefect::kAckBeforeCompletion);
  f.seed_defect = "none";
  EXPECT_FALSE(CheckDatapathArgs(f)->user_recovery);
  f.user_recovery = true;
  EXPECT_TRUE(CheckDatapathArgs(f)->user_recovery);
  EXPECT_EQ(CheckDatapathArgs(f)->recover_dev_id, -1);
  f.user_recovery = false;
  f.recover = 3;  // taking a device back implies recovery for it again
  EXPECT_TRUE(CheckDatapathArgs(f)->user_recovery);
  EXPECT_EQ(CheckDatapathArgs(f)->recover_dev_id, 3);
  f.recover = -5;
  EXPECT_EQ(CheckError(f), "--recover must be a ublk device id, not -5");
  f.recover = -1;
  f.seed_defect = "lose";
  EXPECT_EQ(CheckError(f),
            "--seed-defect must be none, ack_before_completion or "
            "retry_timed_out_at_once, not \"lose\"");
}

TEST(DatapathFlagsTest, TheAgentParsesTheSubcommand) {
  absl::StatusOr<agent::Options> o =
      agent::ParseArgs({"datapath", "--namespace", "nvme0n1",
                        "--policy=round-robin", "--queues=4", "--depth=32",
                        "--no-path-timeout=10s", "--ana-interval=3s"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->command, agent::Command::kDatapath);
  EXPECT_EQ(o->datapath.namespace_spec, "nvme0n1");
  EXPECT_EQ(o->datapath.policy, policy::Policy::kRoundRobin);
  EXPECT_EQ(o->datapath.queues, 4);
  EXPECT_EQ(o->datapath.depth, 32);
  EXPECT_EQ(o->datapath.no_path_timeout, absl::Seconds(10));
  EXPECT_EQ(o->datapath.ana_interval, absl::Seconds(3));
  EXPECT_EQ(agent::ParseArgs({"datapath", "--policy=hst", "--namespace=a"})
                .status()
                .message(),
            "--policy must be round-robin, queue-depth or pathwise, not "
            "\"hst\"");
  EXPECT_EQ(agent::ParseArgs({"datapath"}).status().message(),
            "datapath needs --namespace (an identity, nvmeXnY, or auto)");
  EXPECT_EQ(agent::ParseArgs({"datapath", "--namespace=a", "--interval=1s"})
                .status()
                .message(),
            "flag --interval does not apply to 'pathwise datapath' "
            "(see 'pathwise datapath --help')");
}

class RunDatapathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pathwise-dpcli-XXXXXX";
    root_ = mkdtemp(tmpl);
    Write("module/nvme_core/parameters/multipath", "N");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& rel, const std::string& value) {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << value << "\n";
  }
  void AddPath(int c) {
    const std::string ctrl = "class/nvme/nvme" + std::to_string(c);
    Write(ctrl + "/subsysnqn", "nqn.test");
    const std::string ns = ctrl + "/nvme" + std::to_string(c) + "n1";
    Write(ns + "/wwid", "uuid.bd074d55-85ae-4557-bd5e-95253987f149");
    Write(ns + "/nsid", "1");
    Write(ns + "/size", "8388608");
  }
  // RunDatapath's exit code; its stderr in err_.
  int Run(const std::string& spec, const std::string& sysfs_root) {
    DatapathOptions o;
    o.namespace_spec = spec;
    o.sysfs_root = sysfs_root;
    o.ublk_control = root_ + "/no-ublk-control";
    std::ostringstream out, err;
    const int rc = RunDatapath(o, out, err);
    EXPECT_EQ(out.str(), "");
    err_ = err.str();
    return rc;
  }

  std::string root_;
  std::string err_;
};

TEST_F(RunDatapathTest, NativeMultipathOn) {
  EXPECT_EQ(Run("auto", testing::FixtureDir("tcp2-6.12")), 2);
  EXPECT_EQ(err_,
            "pathwise: native NVMe multipath is on (nvme_core.multipath=Y): "
            "boot with nvme_core.multipath=N for the datapath, or keep "
            "native multipath and tune it with `pathwise serve --actuate`\n");
}

TEST_F(RunDatapathTest, NoSuchNamespace) {
  AddPath(0);
  AddPath(1);
  EXPECT_EQ(Run("nvme7n1", root_), 2);
  EXPECT_EQ(err_,
            "pathwise: no such namespace: nvme7n1 (want auto, an identity "
            "such as uuid.<uuid>, or a per-controller name such as "
            "nvme0n1)\n");
}

TEST_F(RunDatapathTest, OnePath) {
  AddPath(0);
  EXPECT_EQ(Run("nvme0n1", root_), 2);
  EXPECT_EQ(err_,
            "pathwise: namespace uuid.bd074d55-85ae-4557-bd5e-95253987f149 "
            "(nvme0n1) has one path; the datapath needs two or more\n");
}

TEST_F(RunDatapathTest, NoUblk) {
  if (geteuid() != 0) GTEST_SKIP() << "the ublk check comes after root's";
  AddPath(0);
  AddPath(1);
  EXPECT_EQ(Run("auto", root_), 2);
  EXPECT_EQ(err_, std::string("pathwise: ") + ublk::kNoUblkMessage + "\n");
}

// Run as an unprivileged user: in a child that drops root when the test
// runs as root.
TEST_F(RunDatapathTest, NotRoot) {
  AddPath(0);
  AddPath(1);
  const std::string want =
      "pathwise: the datapath needs root (it opens /dev/ngXnY and "
      "/dev/ublk-control)\n";
  if (geteuid() != 0) {
    EXPECT_EQ(Run("auto", root_), 2);
    EXPECT_EQ(err_, want);
    return;
  }
  fs::permissions(root_, fs::perms::all);  // readable as nobody
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setresuid(65534, 65534, 65534) != 0) _exit(10);
    DatapathOptions o;
    o.sysfs_root = root_;
    std::ostringstream out, err;
    const int rc = RunDatapath(o, out, err);
    _exit(rc == 2 && err.str() == want && out.str().empty() ? 0 : 11);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace pathwise::datapath
