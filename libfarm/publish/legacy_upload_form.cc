#include "libfarm/publish/legacy_upload_form.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"

namespace farm {
namespace {

// Multi-use Core Metadata fields and the form names Warehouse expects for them.
const std::map<std::string, std::string>& MultiUseFieldNames() {
  static const auto* kNames = new std::map<std::string, std::string>{
      {"classifier", "classifiers"},
      {"dynamic", "dynamic"},
      {"license-file", "license_files"},
      {"obsoletes", "obsoletes"},
      {"obsoletes-dist", "obsoletes_dist"},
      {"platform", "platform"},
      {"project-url", "project_urls"},
      {"provides", "provides"},
      {"provides-dist", "provides_dist"},
      {"provides-extra", "provides_extra"},
      {"requires", "requires"},
      {"requires-dist", "requires_dist"},
      {"requires-external", "requires_external"},
      {"supported-platform", "supported_platform"},
  };
  return *kNames;
}

std::string FormName(const std::string& header) {
  std::string key = absl::AsciiStrToLower(header);
  if (auto it = MultiUseFieldNames().find(key); it != MultiUseFieldNames().end()) {
    return it->second;
  }
  for (char& c : key) {
    if (c == '-') c = '_';
  }
  return key;
}

}  // namespace

std::string UploadProjectName(const std::string& name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.') {
      out.push_back(c);
      in_run = false;
    } else if (!in_run) {
      out.push_back('-');
      in_run = true;
    }
  }
  return out;
}

FormFields LegacyUploadFields(const WheelPackage& wheel, const UploadDigests& digests) {
  const std::vector<std::string> python_tags = wheel.parsed.python_tags;
  FormFields fields = {
      {":action", "file_upload"},
      {"protocol_version", "1"},
      {"filetype", "bdist_wheel"},
      {"pyversion", absl::StrJoin(python_tags, ".")},
      {"metadata_version", wheel.metadata.metadata_version()},
      {"name", UploadProjectName(wheel.metadata.name())},
      {"version", wheel.metadata.version()},
      {"sha256_digest", digests.sha256_hex},
      {"md5_digest", digests.md5_hex},
  };
  for (const auto& [header, value] : wheel.metadata.headers) {
    const std::string name = FormName(header);
    if (name == "name" || name == "version" || name == "metadata_version") continue;
    fields.emplace_back(name, value);
  }
  if (!wheel.metadata.body.empty() && wheel.metadata.Get("Description").empty()) {
    fields.emplace_back("description", wheel.metadata.body);
  }
  return fields;
}

}  // namespace farm
