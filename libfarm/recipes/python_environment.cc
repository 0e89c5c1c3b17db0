#include "libfarm/recipes/python_environment.h"

#include "absl/strings/str_cat.h"
#include "libfarm/cas/sha256.h"

namespace farm {
namespace {

void AddField(Sha256& hash, const std::string& field) {
  hash.Update(absl::StrCat(field.size(), ":"));
  hash.Update(field);
  hash.Update("\n");
}

}  // namespace

std::string PythonRequirementsHash(const std::vector<std::string>& requirements) {
  Sha256 hash;
  hash.Update("wheelfarm-python-requirements-1\n");
  for (const std::string& r : requirements) AddField(hash, r);
  return hash.FinishHex().substr(0, 16);
}

std::string PythonEnvironmentKey(const std::string& interpreter_path,
                                 const std::string& interpreter_release,
                                 const std::vector<std::string>& requirements) {
  Sha256 hash;
  hash.Update("wheelfarm-python-environment-1\n");
  AddField(hash, interpreter_path);
  AddField(hash, interpreter_release);
  AddField(hash, PythonRequirementsHash(requirements));
  return hash.FinishHex().substr(0, 24);
}

}  // namespace farm
