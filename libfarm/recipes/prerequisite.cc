#include "libfarm/recipes/prerequisite.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/recipes/placeholders.h"

namespace farm {
namespace {

bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-'; }

}  // namespace

std::string Prerequisite::SourceText() const {
  return FromWheel() ? absl::StrCat("wheel = \"", wheel, "\"")
                     : absl::StrCat("host_library = \"", host_library, "\"");
}

const std::vector<std::string>& PrerequisiteWheelPlaceholders() {
  static const auto* names = new std::vector<std::string>{"cuda_major"};
  return *names;
}

const std::vector<std::string>& PrerequisiteEnvPlaceholders() {
  static const auto* names =
      new std::vector<std::string>{"site_packages", "cuda_home", "cuda", "cuda_major"};
  return *names;
}

std::map<std::string, std::string> PrerequisitePlaceholderValues(const PrerequisiteValues& values) {
  return {{"site_packages", values.site_packages},
          {"cuda_home", values.cuda_home},
          {"cuda", values.cuda.ToString()},
          {"cuda_major", absl::StrCat(values.cuda.major)}};
}

absl::StatusOr<std::string> PrerequisiteWheelFor(const Prerequisite& prerequisite,
                                                 const ToolkitVersion& cuda) {
  return ExpandPlaceholders(prerequisite.wheel, {{"cuda_major", absl::StrCat(cuda.major)}});
}

absl::StatusOr<std::string> RequirementProjectName(absl::string_view requirement) {
  requirement = absl::StripLeadingAsciiWhitespace(requirement);
  size_t end = 0;
  while (end < requirement.size() && IsNameChar(requirement[end])) ++end;
  absl::string_view name = requirement.substr(0, end);
  // PEP 508: a name starts and ends with a letter or digit. What follows it must be extras,
  // a specifier, a marker or " @ URL" — not more of a path ("./x.whl", "dir/pkg").
  const absl::string_view rest = absl::StripLeadingAsciiWhitespace(requirement.substr(end));
  const bool rest_ok = rest.empty() || absl::StrContains("[<>=!~;@", rest[0]);
  if (name.empty() || !absl::ascii_isalnum(name.front()) || !absl::ascii_isalnum(name.back()) ||
      !rest_ok || absl::EndsWith(name, ".whl")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", requirement,
        "\" does not name a project: give a pip requirement such as \"nvidia-nccl-cu13>=2.27\""));
  }
  return std::string(name);
}

absl::StatusOr<std::string> LinkerNameFor(absl::string_view versioned_path) {
  const size_t slash = versioned_path.rfind('/');
  const absl::string_view file =
      slash == absl::string_view::npos ? versioned_path : versioned_path.substr(slash + 1);
  const size_t so = file.find(".so.");
  if (!IsSoname(file) || so == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", versioned_path,
        "\" does not end in a versioned library such as libnccl.so.2 (its linker name, "
        "libnccl.so, is what gets added)"));
  }
  return absl::StrCat(versioned_path.substr(0, versioned_path.size() - file.size()),
                      file.substr(0, so + 3));
}

std::string DescribePrerequisite(const Prerequisite& prerequisite, const std::string& recipe_file) {
  return absl::StrCat("[[prerequisites]] \"", prerequisite.name, "\" ", prerequisite.SourceText(),
                      " (", recipe_file, prerequisite.line > 0 ? ":" : "",
                      prerequisite.line > 0 ? absl::StrCat(prerequisite.line) : "", ")");
}

std::string WheelProviding(absl::string_view soname, const ToolkitVersion& cuda) {
  // The libraries NVIDIA ships as per-CUDA-major wheels on PyPI (checked with pip index).
  static const std::pair<const char*, const char*> kWheels[] = {
      {"libcudnn", "nvidia-cudnn-cu"},           {"libnccl", "nvidia-nccl-cu"},
      {"libcusparseLt", "nvidia-cusparselt-cu"}, {"libcudss", "nvidia-cudss-cu"},
      {"libnvshmem", "nvidia-nvshmem-cu"},
  };
  for (const auto& [prefix, wheel] : kWheels) {
    const absl::string_view p(prefix);
    if (absl::StartsWith(soname, p) && soname.size() > p.size() &&
        (soname[p.size()] == '.' || soname[p.size()] == '_')) {
      return absl::StrCat(wheel, cuda.major);
    }
  }
  return "";
}

}  // namespace farm
