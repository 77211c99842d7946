// SPDX-License-Identifier: Apache-2.0
#include "ui/source.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ui/snapshot_json.h"

namespace pathwise::ui {
namespace {

constexpr absl::string_view kRoute = "/api/v1/snapshot";
// A snapshot of 256 paths is ~3 MB; far more than that is not an agent.
constexpr size_t kMaxBody = 256u << 20;

size_t Append(char* data, size_t size, size_t n, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * n > kMaxBody) return 0;  // aborts the transfer
  body->append(data, size * n);
  return size * n;
}

// The URL without "user:password@", for messages and the title line.
std::string WithoutCredentials(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == url.npos) return std::string(url);
  const size_t host = scheme + 3;
  const size_t end = url.find('/', host);
  const size_t at = url.substr(0, end).rfind('@');
  if (at == url.npos || at < host) return std::string(url);
  return absl::StrCat(url.substr(0, host), url.substr(at + 1));
}

// The one message of an HTTP error status.
absl::Status HttpError(long code, const std::string& url,
                       const std::string& body) {
  if (code == 503 && absl::StrContains(body, "no collection yet")) {
    return absl::AbortedError(
        absl::StrCat(url, ": the agent has not collected yet"));
  }
  std::string hint;
  if (code == 401) {
    hint =
        ": the agent wants credentials (--url=https://USER:PASSWORD@HOST:PORT)";
  } else if (code == 404) {
    hint = ": not a pathwise agent (no /api/v1/snapshot there)";
  }
  return absl::FailedPreconditionError(
      absl::StrCat(url, ": HTTP ", code, hint));
}

}  // namespace

absl::StatusOr<std::string> SnapshotUrl(absl::string_view url) {
  auto bad = [url](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value \"", url, "\" for --url: ", why));
  };
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return bad("blanks or control characters");
    }
  }
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://") &&
      !absl::ConsumePrefix(&rest, "https://")) {
    return bad("want http://HOST[:PORT] or https://HOST[:PORT]");
  }
  absl::string_view authority = rest.substr(0, rest.find('/'));
  if (const size_t at = authority.rfind('@'); at != authority.npos) {
    authority.remove_prefix(at + 1);
  }
  if (authority.empty() || authority.front() == ':') return bad("no host");
  std::string out(url);
  while (absl::EndsWith(out, "/")) out.pop_back();
  if (!absl::EndsWith(out, kRoute)) absl::StrAppend(&out, kRoute);
  return out;
}

absl::StatusOr<std::unique_ptr<HttpSnapshotSource>> HttpSnapshotSource::Create(
    absl::string_view url, absl::Duration timeout) {
  absl::StatusOr<std::string> full = SnapshotUrl(url);
  if (!full.ok()) return full.status();
  static std::once_flag curl_init;
  std::call_once(curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::string display = WithoutCredentials(url);
  while (absl::EndsWith(display, "/")) display.pop_back();
  return std::unique_ptr<HttpSnapshotSource>(
      new HttpSnapshotSource(*std::move(full), std::move(display), timeout));
}

absl::StatusOr<std::shared_ptr<const model::Snapshot>>
HttpSnapshotSource::Next() {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::string body;
  char err[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url_.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(timeout_)));
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "pathwise-top");
  const CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(curl);
  const std::string where = display_ + std::string(kRoute);
  if (rc != CURLE_OK) {
    const std::string why = err[0] != '\0' ? err : curl_easy_strerror(rc);
    if (rc == CURLE_COULDNT_CONNECT) {
      return absl::UnavailableError(absl::StrCat(display_, ": ", why));
    }
    if (rc == CURLE_WRITE_ERROR) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": not a pathwise agent (answer over ",
                       kMaxBody >> 20, " MiB)"));
    }
    return absl::FailedPreconditionError(absl::StrCat(display_, ": ", why));
  }
  if (code != 200) return HttpError(code, where, body);
  absl::StatusOr<model::Snapshot> snap = SnapshotFromJsonText(body);
  if (!snap.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": not a pathwise agent: ", snap.status().message()));
  }
  return std::make_shared<const model::Snapshot>(*std::move(snap));
}

void SnapshotPair::Push(std::shared_ptr<const model::Snapshot> s) {
  if (s == nullptr) return;
  if (now_ == nullptr) {
    now_ = std::move(s);
    return;
  }
  if (s->collected_at <= now_->collected_at &&
      s->generation == now_->generation) {
    return;  // the same collection again
  }
  if (s->collected_at <= now_->collected_at) {
    // The agent restarted (or its clock went back): start over.
    earlier_ = nullptr;
    now_ = std::move(s);
    return;
  }
  earlier_ = std::move(now_);
  now_ = std::move(s);
}

}  // namespace pathwise::ui
