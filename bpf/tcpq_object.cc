// SPDX-License-Identifier: Apache-2.0
#include "bpf/tcpq_object.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bpf/object_util.h"
#include "pathwise_tcpq.skel.h"

namespace pathwise::bpf {

absl::StatusOr<std::unique_ptr<TcpQueueIterator>> TcpQueueIterator::Load() {
  if (access("/sys/module/nvme_tcp", F_OK) != 0) {
    return absl::FailedPreconditionError("nvme_tcp is not loaded");
  }
  if (access("/sys/kernel/btf/nvme_tcp", F_OK) != 0) {
    return absl::FailedPreconditionError(
        "needs nvme_tcp BTF: /sys/kernel/btf/nvme_tcp is absent (kernel "
        "without CONFIG_DEBUG_INFO_BTF_MODULES)");
  }
  std::string log(kVerifierLogSize, '\0');
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  open_opts.kernel_log_buf = log.data();
  open_opts.kernel_log_size = log.size();
  pathwise_tcpq* skel = pathwise_tcpq__open_opts(&open_opts);
  if (!skel) {
    return absl::InternalError(
        absl::StrCat("opening the nvme_tcp queue BPF object: ", Errno(errno)));
  }
  absl::Cleanup destroy = [&] { pathwise_tcpq__destroy(skel); };
  if (int err = pathwise_tcpq__load(skel); err != 0) {
    return LoadError("loading the nvme_tcp queue iterator (iter/tcp)", err,
                     log.c_str());
  }
  bpf_link* link = bpf_program__attach_iter(skel->progs.pw_tcpq, nullptr);
  if (!link) {
    return absl::FailedPreconditionError(
        absl::StrCat("attaching the iter/tcp program: ", Errno(errno)));
  }
  std::move(destroy).Cancel();
  return std::unique_ptr<TcpQueueIterator>(new TcpQueueIterator(skel, link));
}

TcpQueueIterator::~TcpQueueIterator() {
  bpf_link__destroy(link_);
  pathwise_tcpq__destroy(skel_);
}

absl::StatusOr<std::vector<TcpQueueRecord>> TcpQueueIterator::Read() const {
  const int fd = bpf_iter_create(bpf_link__fd(link_));
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("bpf_iter_create: ", Errno(errno)));
  }
  std::vector<uint8_t> bytes;
  uint8_t buf[8192];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("reading the nvme_tcp queue iterator: ", Errno(err)));
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  close(fd);
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  return DecodeTcpQueueRecords(bytes, cpus > 0 ? static_cast<int>(cpus) : 1);
}

}  // namespace pathwise::bpf
