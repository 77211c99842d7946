// SPDX-License-Identifier: Apache-2.0
// ReadBlockLayout / ReadNvmeLayout on synthetic BTF shaped like the
// kernels we support: 6.1 (flags are macros, not in BTF) and >= 6.11
// (QUEUE_FLAG_* and __RQF_* are enumerators).
#include "bpf/kernel_btf.h"

#include <bpf/btf.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pathwise::bpf {
namespace {

struct BtfDeleter {
  void operator()(struct btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<struct btf, BtfDeleter>;

void AddEnum(struct btf* b, const char* name,
             const std::vector<std::pair<const char*, int64_t>>& values) {
  ASSERT_GT(btf__add_enum(b, name, 4), 0);
  for (const auto& [n, v] : values) ASSERT_EQ(btf__add_enum_value(b, n, v), 0);
}

// A BTF with struct request / request_queue / gendisk and the enums the
// sampler reads. `modern` adds the QUEUE_FLAG_* and rqf_flags enums.
BtfPtr KernelBtf(bool modern, bool with_disk_field = true) {
  BtfPtr b(btf__new_empty());
  const int u32 = btf__add_int(b.get(), "unsigned int", 4, 0);
  const int u64 = btf__add_int(b.get(), "long long unsigned int", 8, 0);
  const int ul = btf__add_int(b.get(), "long unsigned int", 8, 0);
  const int gendisk = btf__add_struct(b.get(), "gendisk", 8);
  btf__add_field(b.get(), "major", u32, 0, 0);
  btf__add_field(b.get(), "first_minor", u32, 32, 0);
  const int gendisk_ptr = btf__add_ptr(b.get(), gendisk);
  const int q = btf__add_struct(b.get(), "request_queue", 16);
  btf__add_field(b.get(), "queue_flags", ul, 0, 0);
  if (with_disk_field) btf__add_field(b.get(), "disk", gendisk_ptr, 64, 0);
  const int q_ptr = btf__add_ptr(b.get(), q);
  const int bio = btf__add_fwd(b.get(), "bio", BTF_FWD_STRUCT);
  const int bio_ptr = btf__add_ptr(b.get(), bio);
  btf__add_struct(b.get(), "request", 304);
  btf__add_field(b.get(), "q", q_ptr, 0, 0);
  btf__add_field(b.get(), "cmd_flags", u32, 128, 0);
  btf__add_field(b.get(), "rq_flags", u32, 160, 0);
  btf__add_field(b.get(), "__data_len", u32, 224, 0);
  btf__add_field(b.get(), "bio", bio_ptr, 320, 0);
  btf__add_field(b.get(), "io_start_time_ns", u64, 640, 0);

  AddEnum(b.get(), "req_op",
          {{"REQ_OP_READ", 0},
           {"REQ_OP_WRITE", 1},
           {"REQ_OP_FLUSH", 2},
           {"REQ_OP_DISCARD", 3},
           {"REQ_OP_SECURE_ERASE", 5},
           {"REQ_OP_ZONE_APPEND", modern ? 7 : 13},
           {"REQ_OP_WRITE_ZEROES", 9},
           {"REQ_OP_DRV_IN", 34},
           {"REQ_OP_DRV_OUT", 35},
           {"REQ_OP_LAST", 36}});
  AddEnum(b.get(), "req_flag_bits",
          {{"__REQ_FAILFAST_DEV", 8}, {"__REQ_DRV", modern ? 25 : 26}});
  if (modern) {
    AddEnum(b.get(), nullptr,
            {{"QUEUE_FLAG_DYING", 0}, {"QUEUE_FLAG_STATS", 7}});
    AddEnum(b.get(), "rqf_flags", {{"__RQF_STARTED", 0}, {"__RQF_STATS", 11}});
  }
  return b;
}

TEST(BlockLayout, ModernKernelFromEnumerators) {
  BtfPtr b = KernelBtf(/*modern=*/true);
  absl::StatusOr<BlockLayout> l = ReadBlockLayout(b.get());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->queue_flag_stats_bit, 7u);
  EXPECT_EQ(l->rqf_stats_mask, 1u << 11);
  EXPECT_EQ(l->req_nvme_mpath_mask, 1u << 25);
  EXPECT_TRUE(l->fallbacks.empty());
  EXPECT_EQ(l->op_class[0], Op::kRead);
  EXPECT_EQ(l->op_class[1], Op::kWrite);
  EXPECT_EQ(l->op_class[2], Op::kFlush);
  EXPECT_EQ(l->op_class[3], Op::kDiscard);
  EXPECT_EQ(l->op_class[5], Op::kDiscard);
  EXPECT_EQ(l->op_class[7], Op::kWrite);
  EXPECT_EQ(l->op_class[9], Op::kOther);
  EXPECT_EQ(l->op_class[34], Op::kPassthru);
  EXPECT_EQ(l->op_class[35], Op::kPassthru);
  EXPECT_EQ(l->op_class[36], Op::kOther);   // REQ_OP_LAST is not an op
  EXPECT_EQ(l->op_class[200], Op::kOther);  // unknown
}

TEST(BlockLayout, OldKernelFallsBackToMacroValues) {
  BtfPtr b = KernelBtf(/*modern=*/false);
  absl::StatusOr<BlockLayout> l = ReadBlockLayout(b.get());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->queue_flag_stats_bit, kQueueFlagStatsMacro);
  EXPECT_EQ(l->rqf_stats_mask, kRqfStatsMacro);
  EXPECT_EQ(l->req_nvme_mpath_mask, 1u << 26);
  EXPECT_EQ(l->fallbacks.size(), 2u);
  EXPECT_EQ(l->op_class[13], Op::kWrite);  // ZONE_APPEND on 6.1
}

TEST(BlockLayout, MissingFieldIsAClearError) {
  BtfPtr b = KernelBtf(/*modern=*/true, /*with_disk_field=*/false);
  absl::StatusOr<BlockLayout> l = ReadBlockLayout(b.get());
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("disk"), std::string::npos) << l.status();
}

TEST(BlockLayout, InitIsolationFromBpfProgAux) {
  // A kernel whose struct bpf_prog_aux has `init_owned` skips programs PID 1
  // did not load while a thread of PID 1 is current.
  BtfPtr plain = KernelBtf(/*modern=*/true);
  const int u8 = btf__add_int(plain.get(), "bool", 1, BTF_INT_BOOL);
  btf__add_struct(plain.get(), "bpf_prog_aux", 8);
  btf__add_field(plain.get(), "init_private", u8, 0, 0);
  absl::StatusOr<BlockLayout> l = ReadBlockLayout(plain.get());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_FALSE(l->init_context_hidden);

  BtfPtr patched = KernelBtf(/*modern=*/true);
  const int b8 = btf__add_int(patched.get(), "bool", 1, BTF_INT_BOOL);
  btf__add_struct(patched.get(), "bpf_prog_aux", 8);
  btf__add_field(patched.get(), "init_private", b8, 0, 0);
  btf__add_field(patched.get(), "init_owned", b8, 8, 0);
  l = ReadBlockLayout(patched.get());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(l->init_context_hidden);
}

TEST(BlockLayout, NoBtfIsAnError) {
  EXPECT_FALSE(ReadBlockLayout(nullptr).ok());
}

TEST(FindEnumerator, FindsAnonymousEnumValues) {
  BtfPtr b = KernelBtf(/*modern=*/true);
  EXPECT_EQ(FindEnumerator(b.get(), "QUEUE_FLAG_STATS"), 7);
  EXPECT_EQ(FindEnumerator(b.get(), "NO_SUCH_THING"), std::nullopt);
}

// struct nvme_request as in 6.1 and 6.12: cmd, result, genctr, retries,
// flags, status, [start_time], ctrl.
BtfPtr NvmeBtf(uint32_t retries_bits, uint32_t status_bits) {
  BtfPtr b(btf__new_empty());
  const int u8 = btf__add_int(b.get(), "u8", 1, 0);
  const int u16 = btf__add_int(b.get(), "u16", 2, 0);
  btf__add_struct(b.get(), "nvme_request", 40);
  btf__add_field(b.get(), "retries", u8, retries_bits, 0);
  btf__add_field(b.get(), "status", u16, status_bits, 0);
  return b;
}

TEST(NvmeLayout, ReadsOffsetsAndRequestSize) {
  BtfPtr k = KernelBtf(true);
  BtfPtr n = NvmeBtf(17 * 8, 20 * 8);
  absl::StatusOr<NvmeLayout> l = ReadNvmeLayout(k.get(), n.get());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->request_size, 304u);
  EXPECT_EQ(l->retries_offset, 17u);
  EXPECT_EQ(l->status_offset, 20u);
}

TEST(NvmeLayout, RejectsLayoutsTheProgramCannotRead) {
  BtfPtr k = KernelBtf(true);
  // status before retries, or too far for the 8-byte window.
  EXPECT_FALSE(ReadNvmeLayout(k.get(), NvmeBtf(20 * 8, 17 * 8).get()).ok());
  EXPECT_FALSE(ReadNvmeLayout(k.get(), NvmeBtf(8 * 8, 24 * 8).get()).ok());
  EXPECT_FALSE(ReadNvmeLayout(k.get(), nullptr).ok());
}

}  // namespace
}  // namespace pathwise::bpf
