// SPDX-License-Identifier: Apache-2.0
#include "tests/data_ledger/ledger_model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <utility>

namespace pathwise::ledger {
namespace {

constexpr char kMagic[8] = {'P', 'W', 'L', 'E', 'D', 'G', 'R', '1'};
// Header layout: magic, block, gen, run (8 bytes each), crc at 32..35.
constexpr size_t kCrcAt = 32;
constexpr size_t kFillAt = 40;

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    t[i] = c;
  }
  return t;
}

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Get64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t BlockCrc(const std::byte* in) {
  std::array<std::byte, kBlock> copy;
  std::memcpy(copy.data(), in, kBlock);
  std::memset(copy.data() + kCrcAt, 0, 4);
  return Crc32c(copy.data(), kBlock);
}

}  // namespace

uint32_t Crc32c(const std::byte* data, size_t n) {
  static const std::array<uint32_t, 256> table = MakeTable();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c = table[(c ^ std::to_integer<uint32_t>(data[i])) & 0xff] ^ (c >> 8);
  }
  return ~c;
}

void Encode(uint64_t run, uint64_t block, uint64_t gen, std::byte* out) {
  std::memset(out, 0, kFillAt);
  std::memcpy(out, kMagic, 8);
  std::memcpy(out + 8, &block, 8);
  std::memcpy(out + 16, &gen, 8);
  std::memcpy(out + 24, &run, 8);
  uint64_t x = run ^ (block * 0x100000001b3ull) ^ (gen << 17);
  for (size_t at = kFillAt; at < kBlock; at += 8) {
    const uint64_t r = SplitMix(x);
    std::memcpy(out + at, &r, 8);
  }
  const uint32_t crc = BlockCrc(out);
  std::memcpy(out + kCrcAt, &crc, 4);
}

Decoded Decode(uint64_t run, uint64_t block, const std::byte* in) {
  Decoded d;
  if (std::all_of(in, in + kBlock,
                  [](std::byte b) { return b == std::byte{0}; })) {
    return d;
  }
  if (std::memcmp(in, kMagic, 8) != 0 || Get64(in + 24) != run) {
    d.kind = Decoded::Kind::kForeign;
    return d;
  }
  uint32_t crc;
  std::memcpy(&crc, in + kCrcAt, 4);
  d.gen = Get64(in + 16);
  d.block = Get64(in + 8);
  if (crc != BlockCrc(in)) {
    d.kind = Decoded::Kind::kTorn;
  } else if (d.block != block) {
    d.kind = Decoded::Kind::kMisplaced;
  } else {
    d.kind = Decoded::Kind::kValid;
  }
  return d;
}

std::string ParseMix(std::string_view text, Mix* mix) {
  Mix m = *mix;
  const std::pair<std::string_view, int*> fields[] = {
      {"read", &m.read},
      {"write4k", &m.write4k},
      {"write64k", &m.write64k},
      {"write_large", &m.write_large},
      {"fua", &m.fua},
      {"flush", &m.flush},
      {"write_zeroes", &m.write_zeroes},
      {"discard", &m.discard}};
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? "" : text.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    int* field = nullptr;
    for (const auto& [n, f] : fields) {
      if (n == name) field = f;
    }
    if (field == nullptr || eq == std::string_view::npos) {
      return "--mix: \"" + std::string(item) +
             "\" is not NAME=WEIGHT with NAME one of read, write4k, "
             "write64k, write_large, fua, flush, write_zeroes, discard";
    }
    const std::string_view value = item.substr(eq + 1);
    int w = 0;
    const auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), w);
    if (value.empty() || ec != std::errc() ||
        end != value.data() + value.size() || w < 0 || w > 1000) {
      return "--mix: the weight of " + std::string(name) +
             " must be 0..1000, not \"" + std::string(value) + "\"";
    }
    *field = w;
  }
  if (m.read + m.write4k + m.write64k + m.write_large + m.fua + m.flush +
          m.write_zeroes + m.discard ==
      0) {
    return "--mix: every weight is 0";
  }
  *mix = m;
  return "";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kLost:
      return "lost";
    case Verdict::kGhost:
      return "ghost";
    case Verdict::kForeign:
      return "foreign";
    case Verdict::kTorn:
      return "torn";
    case Verdict::kMisplaced:
      return "misplaced";
  }
  return "?";
}

std::string Describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUnknown:
      return "unknown";
    case Value::Kind::kData:
      return "gen " + std::to_string(v.gen);
    case Value::Kind::kZero:
      return "zeroes";
    case Value::Kind::kDiscarded:
      return "discarded (zeroes or gen " + std::to_string(v.gen) + ")";
  }
  return "?";
}

std::string Describe(const Decoded& d) {
  switch (d.kind) {
    case Decoded::Kind::kZero:
      return "zeroes";
    case Decoded::Kind::kValid:
      return "gen " + std::to_string(d.gen);
    case Decoded::Kind::kTorn:
      return "torn (header gen " + std::to_string(d.gen) + ")";
    case Decoded::Kind::kMisplaced:
      return "gen " + std::to_string(d.gen) + " of block " +
             std::to_string(d.block);
    case Decoded::Kind::kForeign:
      return "foreign data";
  }
  return "?";
}

Value Model::DiscardOf(uint64_t block) const {
  const Value& a = blocks_[block].acked;
  return {Value::Kind::kDiscarded,
          a.kind == Value::Kind::kData || a.kind == Value::Kind::kDiscarded
              ? a.gen
              : 0};
}

void Model::Acked(uint64_t first, uint64_t n, Value v) {
  for (uint64_t b = first; b < first + n && b < blocks_.size(); ++b) {
    Block& k = blocks_[b];
    const bool discard = v.kind == Value::Kind::kDiscarded;
    Value bv = discard ? DiscardOf(b) : v;
    k.before = k.acked;
    k.acked = bv;
    // A Discard may leave the block as it was, a failed write that landed
    // included: those stay allowed until data or zeroes are acknowledged.
    if (!discard) k.uncertain.clear();
    if (v.kind == Value::Kind::kData) Remember(k, v.gen);
  }
}

void Model::Failed(uint64_t first, uint64_t n, Value v) {
  for (uint64_t b = first; b < first + n && b < blocks_.size(); ++b) {
    Block& k = blocks_[b];
    k.uncertain.push_back(v.kind == Value::Kind::kDiscarded ? DiscardOf(b) : v);
    if (v.kind == Value::Kind::kData) Remember(k, v.gen);
  }
}

// The generations kept per block, to tell a ghost from foreign data: the
// newest 64 (a long soak would otherwise keep every write in memory and in
// the state file); an older one seen again counts as foreign.
void Model::Remember(Block& k, uint64_t gen) {
  if (k.gens.size() >= 64) k.gens.erase(k.gens.begin());
  k.gens.push_back(gen);
}

bool Model::Matches(const Value& v, const Decoded& d) {
  const bool zero = d.kind == Decoded::Kind::kZero;
  const bool valid = d.kind == Decoded::Kind::kValid;
  switch (v.kind) {
    case Value::Kind::kUnknown:
      return true;
    case Value::Kind::kData:
      return valid && d.gen == v.gen;
    case Value::Kind::kZero:
      return zero;
    case Value::Kind::kDiscarded:
      return zero || (valid && v.gen != 0 && d.gen == v.gen);
  }
  return false;
}

Verdict Model::Check(uint64_t block, const Decoded& d) const {
  switch (d.kind) {
    case Decoded::Kind::kTorn:
      return Verdict::kTorn;
    case Decoded::Kind::kMisplaced:
      return Verdict::kMisplaced;
    case Decoded::Kind::kForeign:
      return blocks_[block].acked.kind == Value::Kind::kUnknown
                 ? Verdict::kOk
                 : Verdict::kForeign;
    default:
      break;
  }
  const Block& k = blocks_[block];
  if (Matches(k.acked, d)) return Verdict::kOk;
  for (const Value& u : k.uncertain) {
    if (Matches(u, d)) return Verdict::kOk;
  }
  if (d.kind == Decoded::Kind::kZero || Matches(k.before, d)) {
    return Verdict::kLost;
  }
  if (std::find(k.gens.begin(), k.gens.end(), d.gen) != k.gens.end()) {
    return Verdict::kGhost;
  }
  return Verdict::kForeign;
}

namespace {
nlohmann::json ValueJson(const Value& v) {
  return {static_cast<int>(v.kind), v.gen};
}
Value ValueOf(const nlohmann::json& j) {
  return {static_cast<Value::Kind>(j.at(0).get<int>()),
          j.at(1).get<uint64_t>()};
}
}  // namespace

nlohmann::json Model::ToJson() const {
  nlohmann::json blocks = nlohmann::json::array();
  for (const Block& k : blocks_) {
    nlohmann::json u = nlohmann::json::array();
    for (const Value& v : k.uncertain) u.push_back(ValueJson(v));
    blocks.push_back({ValueJson(k.acked), ValueJson(k.before), u, k.gens});
  }
  return blocks;
}

Model Model::FromJson(const nlohmann::json& j) {
  Model m(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    Block& k = m.blocks_[i];
    const nlohmann::json& b = j.at(i);
    k.acked = ValueOf(b.at(0));
    k.before = ValueOf(b.at(1));
    for (const auto& u : b.at(2)) k.uncertain.push_back(ValueOf(u));
    k.gens = b.at(3).get<std::vector<uint64_t>>();
  }
  return m;
}

}  // namespace pathwise::ledger
