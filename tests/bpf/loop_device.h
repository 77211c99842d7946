// SPDX-License-Identifier: Apache-2.0
// Loop devices and fio for the BPF host tests: a loop device over a sparse
// file with merging off (one fio I/O is one request), its sysfs stat, and
// fio issuing an exact number of direct 4 KiB I/Os.
#ifndef PATHWISE_TESTS_BPF_LOOP_DEVICE_H_
#define PATHWISE_TESTS_BPF_LOOP_DEVICE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "model/types.h"

namespace pathwise::bpf {

struct CmdResult {
  int status = -1;
  std::string output;
};

inline CmdResult RunCmd(const std::string& cmd) {
  CmdResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline bool HaveCommand(const std::string& name) {
  return RunCmd(absl::StrCat("command -v ", name)).status == 0;
}

// Fields of /sys/block/<dev>/stat (Documentation/block/stat.rst).
struct BlockStat {
  uint64_t reads = 0, read_sectors = 0, writes = 0, write_sectors = 0;
};

inline std::optional<BlockStat> ReadBlockStat(const std::string& dev) {
  std::ifstream f(absl::StrCat("/sys/block/", dev, "/stat"));
  std::vector<uint64_t> v;
  uint64_t x;
  while (f >> x) v.push_back(x);
  if (v.size() < 11) return std::nullopt;
  return BlockStat{v[0], v[2], v[4], v[6]};
}

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// A loop device over a sparse file, with merging off so that one fio I/O
// is one request.
class LoopDevice {
 public:
  static std::unique_ptr<LoopDevice> Create(std::string* error) {
    char dir_tmpl[] = "/var/tmp/pathwise-bpf-test-XXXXXX";
    if (!mkdtemp(dir_tmpl)) {
      *error = absl::StrCat("mkdtemp: ", strerror(errno));
      return nullptr;
    }
    auto d = std::unique_ptr<LoopDevice>(new LoopDevice);
    d->dir_ = dir_tmpl;
    d->file_ = d->dir_ + "/backing.img";
    {
      const int fd = open(d->file_.c_str(), O_CREAT | O_RDWR, 0600);
      if (fd < 0 || ftruncate(fd, 64 << 20) != 0) {
        *error = absl::StrCat("backing file: ", strerror(errno));
        if (fd >= 0) close(fd);
        return nullptr;
      }
      close(fd);
    }
    CmdResult r =
        RunCmd(absl::StrCat("losetup --find --show --direct-io=on ", d->file_));
    if (r.status != 0) {
      // Backing filesystems without O_DIRECT: buffered backing I/O is fine,
      // the requests on the loop device itself are what the test counts.
      r = RunCmd(absl::StrCat("losetup --find --show ", d->file_));
    }
    if (r.status != 0) {
      *error = absl::StrCat("losetup failed: ", r.output);
      return nullptr;
    }
    d->path_ = std::string(absl::StripAsciiWhitespace(r.output));
    d->name_ = d->path_.substr(d->path_.rfind('/') + 1);
    struct stat st;
    if (stat(d->path_.c_str(), &st) != 0) {
      *error = absl::StrCat("stat ", d->path_, ": ", strerror(errno));
      return nullptr;
    }
    d->dev_ = {major(st.st_rdev), minor(st.st_rdev)};
    std::ofstream(absl::StrCat("/sys/block/", d->name_, "/queue/nomerges"))
        << "2\n";
    d->Settle();
    return d;
  }

  ~LoopDevice() {
    if (!path_.empty()) RunCmd(absl::StrCat("losetup -d ", path_));
    if (!file_.empty()) unlink(file_.c_str());
    if (!dir_.empty()) rmdir(dir_.c_str());
  }

  // Waits until udev probing (if any) is over: stat unchanged for 500 ms.
  void Settle() {
    if (HaveCommand("udevadm")) RunCmd("udevadm settle --timeout=10");
    std::string last = Slurp(StatPath());
    for (int i = 0; i < 50; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::string now = Slurp(StatPath());
      if (now == last) return;
      last = now;
    }
  }

  // Detaches the device and attaches it again to a new backing file: the
  // same name and dev_t, a new diskseq (a new disk to the kernel side).
  bool Reattach(std::string* error) {
    const std::string file2 = dir_ + "/backing2.img";
    const int fd = open(file2.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 64 << 20) != 0) {
      *error = absl::StrCat("backing file: ", strerror(errno));
      if (fd >= 0) close(fd);
      return false;
    }
    close(fd);
    CmdResult r = RunCmd(absl::StrCat("losetup -d ", path_));
    if (r.status != 0) {
      *error = absl::StrCat("losetup -d: ", r.output);
      return false;
    }
    r = RunCmd(absl::StrCat("losetup --direct-io=on ", path_, " ", file2));
    if (r.status != 0) r = RunCmd(absl::StrCat("losetup ", path_, " ", file2));
    if (r.status != 0) {
      *error = absl::StrCat("losetup ", path_, " again: ", r.output);
      return false;
    }
    unlink(file_.c_str());
    file_ = file2;
    std::ofstream(absl::StrCat("/sys/block/", name_, "/queue/nomerges"))
        << "2\n";
    Settle();
    return true;
  }

  // gendisk.diskseq, from sysfs (0 if the kernel has none).
  uint64_t DiskSeq() const {
    std::ifstream f(absl::StrCat("/sys/block/", name_, "/diskseq"));
    uint64_t seq = 0;
    f >> seq;
    return seq;
  }

  std::string StatPath() const {
    return absl::StrCat("/sys/block/", name_, "/stat");
  }
  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  model::DevId dev() const { return dev_; }

 private:
  LoopDevice() = default;
  std::string dir_, file_, path_, name_;
  model::DevId dev_;
};

// Runs fio with exactly `n` direct 4 KiB I/Os of `rw` on `dev`.
inline CmdResult Fio(const std::string& dev, const std::string& rw, uint64_t n,
                     const std::string& engine = "psync", int iodepth = 1) {
  return RunCmd(
      absl::StrCat("fio --name=pathwise-test --filename=", dev, " --rw=", rw,
                   " --bs=4k --direct=1 --ioengine=", engine,
                   " --iodepth=", iodepth, " --size=64M --io_size=", n * 4096,
                   " --randrepeat=1 --group_reporting --output-format=terse"));
}

}  // namespace pathwise::bpf

#endif  // PATHWISE_TESTS_BPF_LOOP_DEVICE_H_
