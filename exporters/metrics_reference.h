// SPDX-License-Identifier: Apache-2.0
// The metrics reference (docs/metrics-reference.md), generated from the
// families the exporter renders: agent/metrics_reference_main.cc renders
// snapshots with every source populated and hands the families here, which
// joins them with the table of sources (metrics_reference.cc: which source
// feeds each family, and what a scraper sees when that source is absent)
// and writes the Markdown.
//
// The table is the one hand-written part. A family the exporter renders
// without a row, or a row whose family was not rendered, is an error, so
// the reference cannot silently miss a family or keep a removed one.
#ifndef PATHWISE_EXPORTERS_METRICS_REFERENCE_H_
#define PATHWISE_EXPORTERS_METRICS_REFERENCE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace pathwise::exporters {

// One row of the table of sources.
struct MetricSource {
  std::string_view family;
  // The section of the reference the family is listed in.
  std::string_view area;
  // What feeds it (a collector, the eBPF sampler, an actuator, ...).
  std::string_view source;
  // What a scraper sees when that source is absent or off.
  std::string_view absent;
};

// Every family the agent and the datapath can export, in reference order.
const std::vector<MetricSource>& MetricSources();

// One family as the reference shows it: the exposition's name, type, help
// and label names (the union over its series, in first-seen order; a
// histogram's `le` is left out) and its row of the table.
struct FamilyDoc {
  std::string name;
  std::string type;  // counter, gauge, histogram, ...
  std::string help;
  std::vector<std::string> labels;
  MetricSource source;
};

// A column of the reference's tables: its header and its cell for a family.
// A column is added by appending one to DefaultReferenceColumns(), e.g. the
// metrics profile a family is exported in:
//   {"profile", [](const FamilyDoc& d) { return ProfileOf(d.name); }}
struct ReferenceColumn {
  std::string header;
  std::function<std::string(const FamilyDoc&)> cell;
};
std::vector<ReferenceColumn> DefaultReferenceColumns();

// Joins `families` (possibly several renderings, with families repeated:
// their label names are merged; a differing type or help is an error) with
// MetricSources(). Errors name every family without a row and every row
// without a family.
absl::StatusOr<std::vector<FamilyDoc>> DocumentFamilies(
    const std::vector<prometheus::MetricFamily>& families);

// The Markdown of docs/metrics-reference.md: `intro`, then one table per
// area with `columns`.
std::string MetricsReferenceMarkdown(
    const std::vector<FamilyDoc>& docs,
    const std::vector<ReferenceColumn>& columns, std::string_view intro);

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_METRICS_REFERENCE_H_
