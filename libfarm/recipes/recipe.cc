#include "libfarm/recipes/recipe.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace farm {

std::string RecipeSource::KindName() const {
  switch (kind) {
    case Kind::kGit:
      return "git";
    case Kind::kUpload:
      return "upload";
    case Kind::kPypi:
      return "pypi";
    case Kind::kArchive:
      return "archive";
  }
  return "git";
}

std::string RecipeSource::TagFor(absl::string_view version) const {
  // The loader allows only {version} in the pattern, so a plain replace is exact.
  return absl::StrReplaceAll(tag_pattern, {{"{version}", version}});
}

std::string RecipeSource::ArchiveUrlFor(absl::string_view version) const {
  // The loader allows only {version} in the URL, so a plain replace is exact.
  return absl::StrReplaceAll(archive_url, {{"{version}", version}});
}

std::string CudaRange::ToString() const {
  if (min == max) return min.ToString();
  return absl::StrCat(min.ToString(), "–", max.ToString());
}

std::string PlatformPolicy::ManylinuxCeilingTag(absl::string_view cpu_arch) const {
  const int major = glibc_max.parts.empty() ? 0 : glibc_max.parts[0];
  const int minor = glibc_max.parts.size() < 2 ? 0 : glibc_max.parts[1];
  return absl::StrCat("manylinux_", major, "_", minor, "_", cpu_arch);
}

absl::Status CheckPythonVersion(absl::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(text, '.');
  int major = 0, minor = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor) || major != 3 || minor < 0 || minor > 99) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a Python version: write e.g. \"3.10\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<DottedVersion> ParseGlibcCeiling(absl::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(text, '.');
  int major = 0, minor = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor) || major != 2 || minor < 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text,
                     "\" is not a glibc version: write it like \"2.35\" (Ubuntu 22.04), the "
                     "oldest glibc the wheel must run on"));
  }
  return DottedVersion{{major, minor}};
}

std::vector<std::string> RecipeCommand::Argv() const {
  if (!IsShell()) return argv;
  return {"/bin/sh", "-c", shell};
}

std::string PublishTarget::KindName() const {
  switch (kind) {
    case Kind::kBuiltin:
      return "builtin";
    case Kind::kRepository:
      return "repository";
    case Kind::kCommand:
      return "command";
  }
  return "";
}

std::optional<double> SizeEstimate::EstimateMib(size_t arch_count) const {
  if (!per_arch_mib) return std::nullopt;
  return base_mib.value_or(0.0) + *per_arch_mib * static_cast<double>(arch_count);
}

const RecipeVersion* Recipe::FindVersion(absl::string_view version) const {
  for (const RecipeVersion& v : versions) {
    if (v.version == version) return &v;
  }
  return nullptr;
}

const Recipe& Recipe::ForVersion(const RecipeVersion& version) const {
  return version.own_recipe != nullptr ? *version.own_recipe : *this;
}

std::vector<std::string> Recipe::VersionNames() const {
  std::vector<std::string> names;
  for (const RecipeVersion& v : versions) names.push_back(v.version);
  return names;
}

absl::StatusOr<RecipeRef> ParseRecipeRef(absl::string_view text) {
  for (size_t i = text.size(); i-- > 1;) {
    if (text[i - 1] == '-' && absl::ascii_isdigit(text[i])) {
      if (i - 1 == 0) break;
      return RecipeRef{std::string(text.substr(0, i - 1)), std::string(text.substr(i))};
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", text,
                   "\" is not NAME-VERSION: give a recipe name and one of its versions, e.g. "
                   "pytorch-2.9.1 (farmctl recipes lists them)"));
}

}  // namespace farm
