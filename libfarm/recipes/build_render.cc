#include "libfarm/recipes/build_render.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/recipes/placeholders.h"

namespace farm {
namespace {

absl::StatusOr<std::vector<std::string>> RenderCommand(
    const RecipeCommand& command, const std::map<std::string, std::string>& values) {
  std::vector<std::string> argv;
  for (const std::string& part : command.Argv()) {
    auto expanded = ExpandPlaceholders(part, values);
    if (!expanded.ok()) return expanded.status();
    argv.push_back(std::move(*expanded));
  }
  return argv;
}

}  // namespace

std::string CmakeArchs(const ArchList& archs) {
  std::vector<std::string> items;
  for (const ArchRequest& r : archs.requests) {
    // CMAKE_CUDA_ARCHITECTURES: "-real" is SASS alone, "-virtual" PTX alone. Never a bare
    // entry (SASS and PTX to CMake, SASS alone in TORCH_CUDA_ARCH_LIST's form): a list of
    // one would read either way.
    const std::string arch = absl::StrCat(r.target.sm, r.target.Suffix());
    items.push_back(absl::StrCat(arch, "-real"));
    if (r.ptx) items.push_back(absl::StrCat(arch, "-virtual"));
  }
  return absl::StrJoin(items, ";");
}

std::string SmArchs(const ArchList& archs) {
  std::vector<std::string> items;
  for (const ArchRequest& r : archs.requests)
    items.push_back(absl::StrCat(r.target.sm, r.target.Suffix()));
  return absl::StrJoin(items, ";");
}

std::map<std::string, std::string> BuildPlaceholderValues(const Recipe& recipe,
                                                          const BuildValues& values) {
  return {
      {"archs", values.archs.ToString()},
      {"cmake_archs", CmakeArchs(values.archs)},
      {"sm_archs", SmArchs(values.archs)},
      {"jobs", absl::StrCat(values.jobs)},
      {"farm_jobs", absl::StrCat(values.farm_jobs)},
      {"cuda", values.cuda.ToString()},
      {"cuda_home", values.cuda_home},
      {"python", recipe.python},
      {"version", values.version},
  };
}

absl::StatusOr<RenderedBuild> RenderBuild(
    const Recipe& recipe, const BuildValues& values,
    const std::function<std::optional<std::string>(const std::string&)>& host_env) {
  const std::map<std::string, std::string> placeholders = BuildPlaceholderValues(recipe, values);
  RenderedBuild out;
  for (const RecipeCommand& step : recipe.build.prepare) {
    auto argv = RenderCommand(step, placeholders);
    if (!argv.ok()) return argv.status();
    out.prepare.push_back(std::move(*argv));
  }
  auto command = RenderCommand(recipe.build.command, placeholders);
  if (!command.ok()) return command.status();
  out.command = std::move(*command);
  for (const auto& [name, value] : recipe.build.env) {
    auto expanded = ExpandPlaceholders(value, placeholders);
    if (!expanded.ok()) return expanded.status();
    out.env.push_back(absl::StrCat(name, "=", ExpandHostVariables(*expanded, host_env)));
  }
  return out;
}

}  // namespace farm
