// SPDX-License-Identifier: Apache-2.0
// HTTP basic authentication against bcrypt hashes (basic_auth_users of
// --web.config.file, exporters/web_config.h).
#ifndef PATHWISE_EXPORTERS_BASIC_AUTH_H_
#define PATHWISE_EXPORTERS_BASIC_AUTH_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pathwise::exporters {

// Checks Authorization headers against basic_auth_users. Thread-safe.
//
// bcrypt is deliberately slow (cost 10 is ~70 ms of CPU), which a scrape
// every few seconds should not pay each time: a verified username/password
// pair is remembered as an HMAC-SHA256 under a random per-process key, so
// the cache never holds a password or an unkeyed hash of one. Only
// successes are cached, one entry per configured user, so wrong guesses
// cannot grow it; a wrong password pays bcrypt every time.
class BasicAuthenticator {
 public:
  explicit BasicAuthenticator(std::map<std::string, std::string> users);

  // True if `authorization` (the header's value; null if absent) is "Basic"
  // credentials of a configured user with the right password.
  bool Check(const char* authorization) const;

  // How many times bcrypt ran (tests check the cache with it).
  uint64_t bcrypt_runs() const;

 private:
  using Digest = std::array<unsigned char, 32>;
  bool Verify(const std::string& user, const std::string& password) const;
  Digest Key(const std::string& user, const std::string& password) const;

  std::map<std::string, std::string> users_;
  std::array<unsigned char, 32> cache_key_;
  mutable absl::Mutex mu_;
  mutable std::map<std::string, Digest> verified_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t bcrypt_runs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_BASIC_AUTH_H_
