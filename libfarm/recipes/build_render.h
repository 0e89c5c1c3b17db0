// Turns a recipe into the exact commands and environment one build runs: placeholders filled
// from the chosen toolkit, archs and host, "$VAR" references resolved against the host's
// environment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

// The request in CMAKE_CUDA_ARCHITECTURES / CUDAARCHS form, exactly, each entry saying what it
// carries: "75-real;80-real;80-virtual;90a-real" for "7.5;8.0+PTX;9.0a". "-real" is SASS
// alone, "-virtual" PTX alone, so a "+PTX" arch gives both; variants keep their suffix. Never
// a bare number, which CMake reads as SASS plus PTX but TORCH_CUDA_ARCH_LIST's form as SASS
// alone: a lone "80" would mean one or the other by who reads it.
std::string CmakeArchs(const ArchList& archs);

// The request as bare SM numbers, "80;90;100;120" for "8.0;9.0;10.0;12.0" (flash-attn's
// FLASH_ATTN_CUDA_ARCHS, bitsandbytes' COMPUTE_CAPABILITY): variants keep their suffix
// ("90a"); PTX is the package's own business, so "+PTX" leaves no mark.
std::string SmArchs(const ArchList& archs);

struct BuildValues {
  ArchList archs;
  ToolkitVersion cuda;
  std::string cuda_home;   // toolkit root on the build host, e.g. /usr/local/cuda-13.0
  uint32_t jobs = 1;       // BuildJobs(...)
  uint32_t farm_jobs = 1;  // FarmBuildJobs(...)
  std::string version;     // the package version being built
};

// The value of every BuildPlaceholders() name.
std::map<std::string, std::string> BuildPlaceholderValues(const Recipe& recipe,
                                                          const BuildValues& values);

struct RenderedBuild {
  std::vector<std::vector<std::string>> prepare;  // argv per step
  std::vector<std::string> command;               // argv
  std::vector<std::string> env;                   // "K=V", sorted by K; added to the host's
};

// Fills every placeholder; environment values then get "$VAR" expanded through `host_env`
// (the build host's environment: PATH = "{cuda_home}/bin:$PATH" extends the host's PATH).
absl::StatusOr<RenderedBuild> RenderBuild(
    const Recipe& recipe, const BuildValues& values,
    const std::function<std::optional<std::string>(const std::string&)>& host_env);

}  // namespace farm
