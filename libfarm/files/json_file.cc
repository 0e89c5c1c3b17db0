#include "libfarm/files/json_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "libfarm/files/file_contents.h"

namespace farm {

absl::Status WriteJsonFileAtomically(const std::string& path, const nlohmann::json& value) {
  return WriteFileAtomically(path, value.dump(2) + "\n");
}

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json value = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return absl::DataLossError(absl::StrCat(path, " is not valid JSON"));
  }
  return value;
}

}  // namespace farm
