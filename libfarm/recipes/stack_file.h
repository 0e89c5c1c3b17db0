// A stack file: the packages `farmctl submit --stack FILE` builds together for one arch set,
//
//   # stacks/t4g-torch.toml
//   archs = "7.5;9.0"                                    # optional; --archs replaces it
//   packages = ["pytorch-2.9.1", "torchvision-0.24.1", "torchaudio-2.9.1"]
//
// The order of `packages` does not matter where a package installs another's wheel
// (farm_requirements): the farm builds that one first. Loading is strict, as for recipes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm {

struct StackFile {
  std::vector<std::string> packages;  // "<recipe>-<version>"
  std::string archs;                  // "" when the file gives none
};

// INVALID_ARGUMENT naming the file, line and key for a file that is not a stack file.
absl::StatusOr<StackFile> LoadStackFile(const std::string& path);

}  // namespace farm
