// SPDX-License-Identifier: Apache-2.0
// Where `pathwise top` gets its snapshots: a running agent's
// /api/v1/snapshot over HTTP(S), or (wired by the agent binary) a pipeline
// of its own sampling locally.
#ifndef PATHWISE_UI_SOURCE_H_
#define PATHWISE_UI_SOURCE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/topology.h"

namespace pathwise::ui {

class SnapshotSource {
 public:
  virtual ~SnapshotSource() = default;
  // The current snapshot. Errors are one line, meant for the user:
  //   Unavailable         nothing answers at the address (no agent);
  //   Aborted             the agent has not collected yet (try again);
  //   FailedPrecondition  an HTTP error status, or a TLS/auth problem;
  //   InvalidArgument     the answer is not a pathwise snapshot.
  virtual absl::StatusOr<std::shared_ptr<const model::Snapshot>> Next() = 0;
  // For the title line: the URL, or what the local source is.
  virtual std::string Describe() const = 0;
};

// The URL of the snapshot route for --url: http(s)://HOST[:PORT][/PREFIX],
// /api/v1/snapshot appended unless it ends with it already.
// InvalidArgument (one line, quoting the URL) for anything else.
absl::StatusOr<std::string> SnapshotUrl(absl::string_view url);

// GETs SnapshotUrl(url) each Next(), giving up after `timeout`. Credentials
// for an agent with basic auth go in the URL (https://user:pass@host:9877).
class HttpSnapshotSource : public SnapshotSource {
 public:
  // `url` as given to --url (checked with SnapshotUrl first).
  static absl::StatusOr<std::unique_ptr<HttpSnapshotSource>> Create(
      absl::string_view url, absl::Duration timeout);
  absl::StatusOr<std::shared_ptr<const model::Snapshot>> Next() override;
  std::string Describe() const override { return display_; }

 private:
  HttpSnapshotSource(std::string url, std::string display,
                     absl::Duration timeout)
      : url_(std::move(url)), display_(std::move(display)), timeout_(timeout) {}
  std::string url_;
  std::string display_;  // the URL as given, without credentials
  absl::Duration timeout_;
};

// Two successive snapshots of one source: a new one replaces the older only
// when the agent has collected since (a later collected_at), so polling
// faster than the agent collects keeps the last real interval.
class SnapshotPair {
 public:
  void Push(std::shared_ptr<const model::Snapshot> s);
  const model::Snapshot* earlier() const { return earlier_.get(); }
  const model::Snapshot* now() const { return now_.get(); }
  // Whether there is an interval to compute rates over.
  bool complete() const { return earlier_ != nullptr && now_ != nullptr; }

 private:
  std::shared_ptr<const model::Snapshot> earlier_;
  std::shared_ptr<const model::Snapshot> now_;
};

}  // namespace pathwise::ui

#endif  // PATHWISE_UI_SOURCE_H_
