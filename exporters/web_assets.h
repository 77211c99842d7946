// SPDX-License-Identifier: Apache-2.0
// The live page's files (exporters/web/: the page, its script and style,
// and the vendored uPlot charting library), embedded into the binary at
// build time by exporters/web/embed.cmake: the agent serves them with no
// file or network access at run time.
#ifndef PATHWISE_EXPORTERS_WEB_ASSETS_H_
#define PATHWISE_EXPORTERS_WEB_ASSETS_H_

#include <string_view>
#include <vector>

namespace pathwise::exporters {

struct WebAsset {
  std::string_view name;          // file name, e.g. "live.js"
  std::string_view content_type;  // by extension
  std::string_view bytes;
};

// Every embedded file, in exporters/CMakeLists.txt's order.
const std::vector<WebAsset>& WebAssets();

}  // namespace pathwise::exporters

#endif  // PATHWISE_EXPORTERS_WEB_ASSETS_H_
