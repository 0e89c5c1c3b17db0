// The dashboard's files (coordinator/dashboard/assets/), compiled into the binary.
#pragma once

#include <string_view>
#include <vector>

namespace farm::coordinator {

struct EmbeddedAsset {
  std::string_view name;  // file name, e.g. "app.js"
  std::string_view content_type;
  std::string_view data;
};

const std::vector<EmbeddedAsset>& DashboardAssets();

}  // namespace farm::coordinator
