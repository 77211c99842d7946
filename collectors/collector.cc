#include "collectors/collector.h"

#include <chrono>
#include <exception>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace pathwise::collectors {

void ErrorList::Add(const absl::Status& status) {
  if (status.ok()) return;
  if (count_ == 0) first_ = status;
  ++count_;
}

absl::Status ErrorList::ToStatus() const {
  if (count_ == 0) return absl::OkStatus();
  if (count_ == 1) return first_;
  return absl::Status(first_.code(), absl::StrCat(first_.message(), " (and ",
                                                  count_ - 1, " more)"));
}

void CollectorRegistry::Add(std::unique_ptr<Collector> collector) {
  entries_.push_back(Entry{std::move(collector), absl::OkStatus(), ""});
}

void CollectorRegistry::InitAll() {
  for (Entry& e : entries_) {
    try {
      e.init_status = e.collector->Init();
    } catch (const std::exception& ex) {
      e.init_status =
          absl::InternalError(absl::StrCat("exception: ", ex.what()));
    } catch (...) {
      e.init_status = absl::InternalError("unknown exception");
    }
    if (!e.init_status.ok()) {
      spdlog::error("collector {} disabled: {}",
                    std::string(e.collector->name()), e.init_status.ToString());
      e.last_error = std::string(e.init_status.message());
    }
  }
}

void CollectorRegistry::CollectAll(model::Snapshot& snapshot) {
  for (Entry& e : entries_) {
    model::CollectorResult result;
    result.name = std::string(e.collector->name());
    absl::Status status = e.init_status;
    const auto start = std::chrono::steady_clock::now();
    if (status.ok()) {
      try {
        status = e.collector->Collect(snapshot);
      } catch (const std::exception& ex) {
        status = absl::InternalError(absl::StrCat("exception: ", ex.what()));
      } catch (...) {
        status = absl::InternalError("unknown exception");
      }
    }
    result.duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    result.success = status.ok();
    if (!status.ok()) {
      result.error = std::string(status.message());
      if (result.error != e.last_error) {
        spdlog::warn("collector {} failed: {}", result.name, result.error);
      }
    } else if (!e.last_error.empty()) {
      spdlog::info("collector {} recovered", result.name);
    }
    e.last_error = result.error;
    snapshot.collectors.push_back(std::move(result));
  }
}

}  // namespace pathwise::collectors
