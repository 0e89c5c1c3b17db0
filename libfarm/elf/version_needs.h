// Versioned symbol requirements (.gnu.version_r): what decides a library's manylinux floor.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/elf/elf_file.h"

namespace farm {

// One needed version, e.g. {"libc.so.6", "GLIBC_2.34", {"pthread_create"}}.
struct VersionNeed {
  std::string library;
  std::string version;
  std::vector<std::string> symbols;  // dynamic symbols bound to this version (.gnu.version)
  bool operator==(const VersionNeed&) const = default;
};

// A dotted version such as 2.34 or 3.4.30, compared component by component.
struct DottedVersion {
  std::vector<int> parts;
  auto operator<=>(const DottedVersion&) const = default;
  std::string ToString() const;
};

// Splits "GLIBCXX_3.4.30" into ("GLIBCXX", 3.4.30); nullopt for names without a numeric
// version such as "GLIBC_PRIVATE".
std::optional<std::pair<std::string, DottedVersion>> SplitSymbolVersion(absl::string_view name);

// All entries of .gnu.version_r, in file order, with the symbols that use each (from
// .gnu.version and .dynsym); empty when the section is absent.
absl::StatusOr<std::vector<VersionNeed>> ReadVersionNeeds(const ElfFile& elf);

// The highest GLIBC_x.y needed (as x.y), ignoring the dynamic loader's own versions the way
// auditwheel does; nullopt when no glibc version is needed.
std::optional<DottedVersion> GlibcFloor(const std::vector<VersionNeed>& needs);

}  // namespace farm
