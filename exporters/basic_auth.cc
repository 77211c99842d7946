// SPDX-License-Identifier: Apache-2.0
#include "exporters/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cstring>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace pathwise::exporters {

BasicAuthenticator::BasicAuthenticator(std::map<std::string, std::string> users)
    : users_(std::move(users)) {
  // A short read leaves part of the key zero: still unique per process in
  // practice, and the key only hides cached digests from memory readers.
  cache_key_.fill(0);
  (void)!getrandom(cache_key_.data(), cache_key_.size(), 0);
}

BasicAuthenticator::Digest BasicAuthenticator::Key(
    const std::string& user, const std::string& password) const {
  // The NUL separates the two so ("ab","c") and ("a","bc") differ.
  const std::string msg =
      absl::StrCat(user, absl::string_view("\0", 1), password);
  Digest d{};
  unsigned int len = d.size();
  HMAC(EVP_sha256(), cache_key_.data(), cache_key_.size(),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), d.data(),
       &len);
  return d;
}

bool BasicAuthenticator::Verify(const std::string& user,
                                const std::string& password) const {
  auto it = users_.find(user);
  // An unknown user still costs one bcrypt run (against a configured
  // user's hash, so at that hash's cost): response time does not tell which
  // usernames exist.
  const std::string& hash =
      it != users_.end() ? it->second : users_.begin()->second;
  const Digest key = Key(user, password);
  if (it != users_.end()) {
    absl::MutexLock lock(&mu_);
    auto hit = verified_.find(user);
    if (hit != verified_.end() &&
        CRYPTO_memcmp(hit->second.data(), key.data(), key.size()) == 0) {
      return true;
    }
  }
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* out =
      crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
  {
    absl::MutexLock lock(&mu_);
    ++bcrypt_runs_;
  }
  // A password with a NUL cannot be what was hashed; crypt would have seen
  // only its prefix.
  const bool ok = it != users_.end() && out != nullptr &&
                  password.find('\0') == std::string::npos &&
                  std::strlen(out) == hash.size() &&
                  CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
  if (ok) {
    absl::MutexLock lock(&mu_);
    verified_[user] = key;  // one entry per configured user: bounded
  }
  return ok;
}

bool BasicAuthenticator::Check(const char* authorization) const {
  if (authorization == nullptr || users_.empty()) return false;
  absl::string_view h(authorization);
  constexpr absl::string_view kScheme = "basic ";
  if (h.size() < kScheme.size() ||
      !absl::EqualsIgnoreCase(h.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  h.remove_prefix(kScheme.size());
  while (!h.empty() && h.front() == ' ') h.remove_prefix(1);
  while (!h.empty() && h.back() == ' ') h.remove_suffix(1);
  std::string decoded;
  if (!absl::Base64Unescape(h, &decoded)) return false;
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  return Verify(decoded.substr(0, colon), decoded.substr(colon + 1));
}

uint64_t BasicAuthenticator::bcrypt_runs() const {
  absl::MutexLock lock(&mu_);
  return bcrypt_runs_;
}

}  // namespace pathwise::exporters
