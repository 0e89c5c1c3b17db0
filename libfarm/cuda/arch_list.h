// CUDA GPU targets: the table of known SMs, which toolkits can compile for them, and the
// one parser for user-typed arch lists ("7.5;9.0;12.1", "sm_90a", "8.0+PTX", ...).
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

// `a` code runs only on that exact SM; `f` code runs on every SM of the family (same major).
enum class ArchVariant { kGeneric, kArchSpecific, kFamily };

struct CudaTarget {
  int sm = 0;  // 75, 90, 121 ...
  ArchVariant variant = ArchVariant::kGeneric;

  std::string Suffix() const;       // "", "a", "f"
  std::string SmName() const;       // "sm_90a"
  std::string ComputeName() const;  // "compute_90a"
  std::string DottedName() const;   // "9.0a"
  auto operator<=>(const CudaTarget&) const = default;
};

// One requested target: SASS for `target`, plus PTX for it when `ptx` ("8.0+PTX").
struct ArchRequest {
  CudaTarget target;
  bool ptx = false;
  auto operator<=>(const ArchRequest&) const = default;
};

struct ArchList {
  std::vector<ArchRequest> requests;  // sorted by target, one per target

  // "7.5;9.0a;12.1+PTX": the form `farmctl submit` records and TORCH_CUDA_ARCH_LIST takes.
  std::string ToString() const;
};

// Parses a list separated by ';', ',' or whitespace, optionally wrapped in quotes. Each item
// is "7.5", "75", "sm_75", with an optional "a"/"f" suffix and "+PTX". Unknown archs and
// variants an SM does not have are refused with the list of valid ones.
absl::StatusOr<ArchList> ParseArchList(absl::string_view text);

// A single item of such a list.
absl::StatusOr<ArchRequest> ParseArchItem(absl::string_view item);

struct ToolkitVersion {
  int major = 0;
  int minor = 0;
  auto operator<=>(const ToolkitVersion&) const = default;
  std::string ToString() const;
};

// Parses "13.0" (also "13.0.88" and "V13.0.88").
absl::StatusOr<ToolkitVersion> ParseToolkitVersion(absl::string_view text);

// The SMs this table knows, in ascending order.
std::vector<int> KnownSms();
bool IsKnownTarget(const CudaTarget& target);
// e.g. "5.0 5.2 ... 12.1 (suffix a: 9.0 10.0 ..., suffix f: 10.0 ...)".
std::string ValidArchsDescription();

// The first toolkit that compiles for `target`; nullopt for an unknown target.
std::optional<ToolkitVersion> MinimumToolkit(const CudaTarget& target);

// OK when toolkit `version` compiles for `target`; otherwise an error naming the arch, the
// toolkit and the versions that would work (e.g. sm_121 needs 12.9, 13.0 dropped sm_70).
absl::Status CheckToolkitSupports(const CudaTarget& target, const ToolkitVersion& version);

}  // namespace farm
