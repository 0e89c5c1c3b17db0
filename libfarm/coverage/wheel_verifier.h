// `farmctl verify`: checks a wheel against a VerifyPolicy and lists every problem found.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/coverage/inspection.h"
#include "libfarm/coverage/verify_policy.h"

namespace farm {

struct VerifyFinding {
  // "arch", "ptx", "glibc", "record", "tags", "path", "parse", "metadata"
  std::string check;
  std::string path;  // member path inside the wheel ("" for the wheel as a whole)
  std::string message;
  bool operator==(const VerifyFinding&) const = default;
};

struct VerifyReport {
  std::string wheel;
  std::vector<VerifyFinding> failures;
  std::vector<VerifyFinding> notes;  // reported apart, not failures (e.g. device-link stubs)
  Inspection inspection;

  bool Passed() const { return failures.empty(); }
};

// Reads the whole wheel once: member paths, RECORD hashes and sizes, WHEEL tags against the
// file name and content, glibc needs against the tag and the policy, and SASS/PTX for every
// requested arch in every fat-binary container the CUDA runtime would load. Errors only when
// the file cannot be read at all; everything else is a finding (fail closed).
absl::StatusOr<VerifyReport> VerifyWheel(const std::string& wheel_path, const VerifyPolicy& policy);

}  // namespace farm
