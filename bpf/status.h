// SPDX-License-Identifier: Apache-2.0
// The kernel side's view of the model vocabulary (model/types.h): which op
// class a kernel REQ_OP_* is, and which class an NVMe status is, computed
// by the same code the BPF programs run. status.cc checks at compile time
// that the model's enums and histogram layout equal bpf/pathwise_bpf.h's.
#ifndef PATHWISE_BPF_STATUS_H_
#define PATHWISE_BPF_STATUS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/histogram.h"
#include "model/types.h"

namespace pathwise::bpf {

using model::DropReason;
using model::kNvmeErrorClassCount;
using model::kNvmeErrorClasses;
using model::kOpCount;
using model::LatencyHistogram;
using model::NvmeStatusClass;
using model::Op;

// Maps a kernel REQ_OP_* name ("REQ_OP_READ", ...) to its op class;
// nullopt for names that are not request operations.
std::optional<Op> OpClassForReqOpName(std::string_view req_op_name);

// Classifies nvme_request.status as the kernel stores it: the CQE status
// field without the phase bit (SC in bits 7:0, SCT in 10:8, CRD 12:11,
// M 13, DNR 14). Only SCT and SC matter; CRD/M/DNR are ignored.
NvmeStatusClass ClassifyNvmeStatus(uint16_t status);

}  // namespace pathwise::bpf

#endif  // PATHWISE_BPF_STATUS_H_
