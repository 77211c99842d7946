// SPDX-License-Identifier: Apache-2.0
// Scenario families: scenarios drawn at random from documented
// distributions, so that a policy is judged over many cases nobody tuned it
// for, and each drawn case can be written out as a .scn file to reproduce
// it or keep it as a regression case.
//
// The family (every draw independent, from a PRNG seeded by (seed, index)):
//   paths           2..8, uniform
//   round trip      20 us (PCIe) .. 40 ms (WAN), log-uniform for the first
//                   path; each other path 0.5x..4x it, log-uniform
//   spread          0..0.5x the path's round trip, uniform
//   target          capacity-bound (half): parallelism 16/32/64/128,
//                   service 50 us..4 ms log-uniform; else latency-bound:
//                   no concurrency limit, service 20 us..2 ms log-uniform
//   write cost      40 % of paths: a write's service 0.25x..4x a read's,
//                   log-uniform; else the same
//   bandwidth       every path a link, log-uniform: 30 % slow (100 MiB/s..
//                   1 GiB/s), else 1..12.5 GB/s (10-100 Gbit/s, PCIe)
//   ana             90 % optimized, 10 % non-optimized (never all paths)
//   workload        numjobs 1..64 and iodepth 1..128, log-uniform (at most
//                   8192 outstanding); bs 4k/8k/16k/64k/128k/256k/1M;
//                   read share 100/70/50/0 %
//   host            1/2/4/8/16 CPUs (at most numjobs), 2..20 us of CPU per
//                   I/O, log-uniform
//   events          0..4 over 20 s of simulated time, each on one path:
//                   a delay step (1x..50x the round trip, cleared later),
//                   loss 1..10 % for a while, down then up after 1..10 s,
//                   ANA inaccessible (or non-optimized) then optimized;
//                   one path at a time, so that one always serves
#ifndef PATHWISE_LAB_GENERATE_H_
#define PATHWISE_LAB_GENERATE_H_

#include <cstdint>
#include <string>

#include "lab/scenario.h"

namespace pathwise::lab {

// The scenario `index` of the family drawn with `seed`; the same pair gives
// the same scenario. Named "gen-SEED-INDEX".
Scenario DrawScenario(uint64_t seed, int index);

// `s` as .scn text that ParseScenario reads back to the same scenario (its
// paths, workload, events and header; policy parameters stay default).
std::string ScenarioText(const Scenario& s);

}  // namespace pathwise::lab

#endif  // PATHWISE_LAB_GENERATE_H_
