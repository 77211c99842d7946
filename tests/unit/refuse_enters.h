// SPDX-License-Identifier: Apache-2.0
// Makes the calling thread's io_uring_enter() calls that submit fail with
// EAGAIN, as the kernel answers them when it cannot allocate for a request
// (and EBUSY while its completion queue overflows), for the tests of what
// a ring does with a command its enter refused. A seccomp filter holds for
// the thread that installs it and its children only: run it in a thread
// of its own.
#ifndef PATHWISE_TESTS_UNIT_REFUSE_ENTERS_H_
#define PATHWISE_TESTS_UNIT_REFUSE_ENTERS_H_

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace pathwise::testing {

inline void FailSubmittingEnters() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 0, 3),
      // to_submit, the second argument (its low word on x86-64).
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
  ASSERT_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
  ASSERT_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
  // The filter is on: a submitting enter on no ring fails with EAGAIN,
  // not EBADF.
  ASSERT_EQ(syscall(__NR_io_uring_enter, -1, 1, 0, 0, nullptr, 0), -1);
  ASSERT_EQ(errno, EAGAIN);
}

}  // namespace pathwise::testing

#endif  // PATHWISE_TESTS_UNIT_REFUSE_ENTERS_H_
