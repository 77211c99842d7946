// SPDX-License-Identifier: Apache-2.0
// The acknowledged-write ledger's pure half: what a ledger block holds, and
// which contents each block may have given what was acknowledged and what
// failed. No I/O; ledger_run.h drives it.
//
// Every 4 KiB block the ledger writes carries its block index, the write's
// generation (one per write, run-wide) and the run's id, a filler drawn from
// those, and a CRC32C of the whole block. Operations on one block never
// overlap (the runner claims blocks), so a block's history is a sequence:
// the value of the last acknowledged operation is what it must hold, or the
// value of a failed operation issued after it (a failed write may or may not
// have landed). Once a newer operation is acknowledged, a failed older one
// showing up is a ghost write.
#ifndef PATHWISE_TESTS_DATA_LEDGER_LEDGER_MODEL_H_
#define PATHWISE_TESTS_DATA_LEDGER_LEDGER_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace pathwise::ledger {

inline constexpr size_t kBlock = 4096;

uint32_t Crc32c(const std::byte* data, size_t n);

// Writes the ledger block (run, block, gen) to out[0..kBlock).
void Encode(uint64_t run, uint64_t block, uint64_t gen, std::byte* out);

struct Decoded {
  enum class Kind : uint8_t {
    kZero,       // all zeroes
    kValid,      // a ledger block of this run, at its place
    kTorn,       // the ledger's magic, but the CRC does not match
    kMisplaced,  // valid, but written for another block
    kForeign,    // not a ledger block of this run
  };
  Kind kind = Kind::kZero;
  uint64_t gen = 0;
  uint64_t block = 0;  // kMisplaced: the block it was written for
};
Decoded Decode(uint64_t run, uint64_t block, const std::byte* in);

// What an operation leaves in a block.
struct Value {
  enum class Kind : uint8_t {
    kUnknown,    // not written in this run: anything goes
    kData,       // the write of generation `gen`
    kZero,       // Write Zeroes
    kDiscarded,  // Discard: zeroes or what was there (data `gen`, 0: none)
  };
  Kind kind = Kind::kUnknown;
  uint64_t gen = 0;
  bool operator==(const Value&) const = default;
};

enum class Verdict : uint8_t {
  kOk,
  kLost,       // the value before the last acknowledged one, or zeroes
  kGhost,      // an older write of this block over a newer acknowledged one
  kForeign,    // never written to this block in this run
  kTorn,       // mixed contents
  kMisplaced,  // a block written for another place
};
const char* VerdictName(Verdict v);
std::string Describe(const Value& v);
std::string Describe(const Decoded& d);

// The operations' relative weights.
struct Mix {
  int read = 40, write4k = 20, write64k = 12, write_large = 4, fua = 6,
      flush = 4, write_zeroes = 3, discard = 3;
};
// Sets the weights named in `text` ("write4k=60,read=40": names as in Mix,
// each 0..1000) and leaves the others. Returns "" or what is wrong; on an
// error *mix is unchanged.
std::string ParseMix(std::string_view text, Mix* mix);

class Model {
 public:
  explicit Model(uint64_t blocks = 0) : blocks_(blocks) {}

  uint64_t size() const { return blocks_.size(); }
  // The data generation a Discard of `block` may leave (0: none).
  Value DiscardOf(uint64_t block) const;
  // The operation's outcome for blocks [first, first + n).
  void Acked(uint64_t first, uint64_t n, Value v);
  void Failed(uint64_t first, uint64_t n, Value v);
  // What the block holds now, read back and decoded, against the rules.
  Verdict Check(uint64_t block, const Decoded& d) const;
  // The value it must hold (for reports).
  const Value& Expected(uint64_t block) const { return blocks_[block].acked; }

  nlohmann::json ToJson() const;
  static Model FromJson(const nlohmann::json& j);

 private:
  struct Block {
    Value acked;                   // the last acknowledged operation's
    Value before;                  // the one acknowledged before it
    std::vector<Value> uncertain;  // failed since the last acknowledgement
    std::vector<uint64_t> gens;    // every data generation sent to it
  };
  static bool Matches(const Value& v, const Decoded& d);
  static void Remember(Block& k, uint64_t gen);
  std::vector<Block> blocks_;
};

}  // namespace pathwise::ledger

#endif  // PATHWISE_TESTS_DATA_LEDGER_LEDGER_MODEL_H_
