#include "libfarm/nvcc/private_temp_dir.h"

#include <stdlib.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/process/environment.h"

namespace farm {

absl::StatusOr<PrivateTempDir> PrivateTempDir::Create() {
  std::string pattern = absl::StrCat(GetEnvOr("TMPDIR", "/tmp"), "/farm-nvcc-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a temporary directory like ", pattern));
  }
  return PrivateTempDir(pattern);
}

PrivateTempDir::~PrivateTempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace farm
