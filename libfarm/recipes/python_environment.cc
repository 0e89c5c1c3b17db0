#include "libfarm/recipes/python_environment.h"

#include "absl/strings/str_cat.h"
#include "libfarm/digest/sha256.h"

namespace farm {
namespace {

void AddField(Sha256& hash, const std::string& field) {
  hash.Update(absl::StrCat(field.size(), ":"));
  hash.Update(field);
  hash.Update("\n");
}

}  // namespace

absl::StatusOr<EnvironmentContents> EnvironmentContentsFor(const Recipe& recipe,
                                                           const ToolkitVersion& cuda) {
  EnvironmentContents out;
  out.requirements = recipe.python_requirements;
  for (const Prerequisite& p : recipe.prerequisites) {
    if (!p.FromWheel()) continue;
    auto wheel = PrerequisiteWheelFor(p, cuda);
    if (!wheel.ok()) return wheel.status();
    out.requirements.push_back(*wheel);
    out.linker_names.insert(out.linker_names.end(), p.linker_names.begin(), p.linker_names.end());
  }
  return out;
}

std::string PythonRequirementsHash(const std::vector<std::string>& requirements) {
  Sha256 hash;
  hash.Update("wheelfarm-python-requirements-1\n");
  for (const std::string& r : requirements) AddField(hash, r);
  return hash.FinishHex().substr(0, 16);
}

std::string FarmWheelEntry(const std::string& requirement, const std::string& index_path) {
  return absl::StrCat(requirement, " from ", index_path);
}

std::string FallbackWheelEntry(const std::string& requirement, const std::string& index_url) {
  return absl::StrCat(requirement, " from the package index ",
                      index_url.empty() ? "of the build host" : index_url);
}

std::string FarmWheelEntry(const farm::v1::FarmWheel& wheel) {
  return wheel.from_package_index()
             ? FallbackWheelEntry(wheel.requirement(), wheel.package_index_url())
             : FarmWheelEntry(wheel.requirement(), wheel.index_path());
}

std::string EnvironmentContentsHash(const EnvironmentContents& contents) {
  if (contents.linker_names.empty() && contents.farm_wheels.empty()) {
    return PythonRequirementsHash(contents.requirements);
  }
  Sha256 hash;
  hash.Update("wheelfarm-environment-contents-1\n");
  AddField(hash, PythonRequirementsHash(contents.requirements));
  for (const std::string& link : contents.linker_names) AddField(hash, link);
  // Only when there are some: environments made before farm wheels keep their keys.
  if (!contents.farm_wheels.empty()) {
    hash.Update("farm-wheels\n");
    for (const std::string& wheel : contents.farm_wheels) AddField(hash, wheel);
  }
  return hash.FinishHex().substr(0, 16);
}

std::string PythonEnvironmentKey(const std::string& interpreter_path,
                                 const std::string& interpreter_release,
                                 const EnvironmentContents& contents) {
  Sha256 hash;
  hash.Update("wheelfarm-python-environment-1\n");
  AddField(hash, interpreter_path);
  AddField(hash, interpreter_release);
  AddField(hash, EnvironmentContentsHash(contents));
  return hash.FinishHex().substr(0, 24);
}

std::string PythonEnvironmentKey(const std::string& interpreter_path,
                                 const std::string& interpreter_release,
                                 const std::vector<std::string>& requirements) {
  return PythonEnvironmentKey(interpreter_path, interpreter_release,
                              EnvironmentContents{.requirements = requirements});
}

}  // namespace farm
