#include "libfarm/coverage/verify_policy.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/wheel/wheel_filename.h"

namespace farm {

absl::StatusOr<DottedVersion> ParseManylinuxPolicy(absl::string_view text) {
  const PlatformTag legacy = ParsePlatformTag(absl::StrCat(text, "_x86_64"));
  if (legacy.kind == PlatformTag::Kind::kManylinux) {
    return DottedVersion{{legacy.glibc_major, legacy.glibc_minor}};
  }
  absl::string_view rest = text;
  absl::ConsumePrefix(&rest, "manylinux_");
  std::vector<absl::string_view> parts = absl::StrSplit(rest, absl::ByAnyChar("._"));
  int major = 0, minor = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor) || major < 1 || minor < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --manylinux policy \"", text,
        "\": give the glibc version as MAJOR_MINOR, e.g. 2_35 (Ubuntu 22.04), 2_28, 2_17"));
  }
  return DottedVersion{{major, minor}};
}

bool HasSassFor(const InspectedContainer& container, const CudaTarget& target) {
  for (const InspectedEntry& e : container.entries) {
    if (e.kind != FatbinEntryKind::kCubin || e.target.sm != target.sm) continue;
    if (e.target.variant == target.variant || target.variant == ArchVariant::kGeneric) return true;
  }
  return false;
}

bool HasPtxFor(const InspectedContainer& container, const CudaTarget& target) {
  for (const InspectedEntry& e : container.entries) {
    if (e.kind == FatbinEntryKind::kPtx && e.target == target) return true;
  }
  return false;
}

bool ContainerIsChecked(const InspectedContainer& container, uint16_t elf_type,
                        bool file_has_loaded_fatbin) {
  if (container.origin == ContainerOrigin::kDeviceLinkStub) return false;
  if (elf_type == kElfTypeRelocatable) return true;  // everything in an object gets linked
  return container.Loadable() || !file_has_loaded_fatbin;
}

}  // namespace farm
