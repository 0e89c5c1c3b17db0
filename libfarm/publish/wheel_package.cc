#include "libfarm/publish/wheel_package.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/wheel/wheel_metadata.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {
namespace {

std::string VersionKey(absl::string_view v) {
  std::string out = absl::AsciiStrToLower(v);
  for (char& c : out) {
    if (c == '-' || c == '_') c = '.';
  }
  return out;
}

}  // namespace

bool SameVersionSpelling(absl::string_view a, absl::string_view b) {
  return VersionKey(a) == VersionKey(b);
}

absl::StatusOr<WheelFilename> CheckWheelFilename(absl::string_view filename) {
  const std::string shown(filename.substr(0, 120));
  if (filename.empty()) return absl::InvalidArgumentError("the file name is empty");
  for (char c : filename) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\') {
      return absl::InvalidArgumentError(
          absl::StrCat("the file name \"", shown,
                       "\" contains a path separator; send the bare wheel file name"));
    }
    if (u < 0x20 || u >= 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat("the file name \"", absl::CHexEscape(shown),
                       "\" contains control or non-ASCII characters; wheel names are plain ASCII"));
    }
  }
  if (absl::StrContains(filename, "..") || filename.front() == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat("the file name \"", shown, "\" contains \"..\" or starts with a dot"));
  }
  if (absl::EndsWith(filename, ".tar.gz") || absl::EndsWith(filename, ".zip")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", shown,
                     "\" is a source distribution; this index accepts wheels (.whl) only. "
                     "Fix: build a wheel (python -m build --wheel) and upload that"));
  }
  return ParseWheelFilename(filename);
}

absl::StatusOr<WheelPackage> ReadWheelPackage(const std::string& path, absl::string_view filename) {
  auto parsed = CheckWheelFilename(filename);
  if (!parsed.ok()) return parsed.status();
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  auto zip = ZipArchive::Open(file->bytes());
  if (!zip.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename, " is not a readable wheel (zip): ", zip.status().message()));
  }
  std::set<std::string> dist_infos;
  for (const ZipEntry& entry : zip->entries()) {
    if (absl::Status s = CheckMemberPath(entry.name); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(filename, " has an unsafe member path: ", s.message()));
    }
    const size_t slash = entry.name.find('/');
    if (slash != std::string::npos && absl::EndsWith(entry.name.substr(0, slash), ".dist-info")) {
      dist_infos.insert(entry.name.substr(0, slash));
    }
  }
  // pip installs a wheel only with exactly one: a second could carry another project's
  // metadata past a check that reads the first.
  if (dist_infos.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename, " has ", dist_infos.size(), " .dist-info folders (",
                     absl::StrJoin(dist_infos, ", "),
                     "); a wheel has exactly one. Fix: rebuild it from a clean tree"));
  }
  const std::string expected = absl::StrCat(NormalizeDistributionName(parsed->distribution), "-",
                                            VersionKey(parsed->version));
  std::string dist_info;
  for (const std::string& candidate : dist_infos) {
    const std::string stem =
        candidate.substr(0, candidate.size() - std::string(".dist-info").size());
    const size_t dash = stem.find('-');
    if (dash == std::string::npos) continue;
    if (absl::StrCat(NormalizeDistributionName(stem.substr(0, dash)), "-",
                     VersionKey(stem.substr(dash + 1))) == expected) {
      dist_info = candidate;
    }
  }
  if (dist_info.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        filename, " has no ", parsed->distribution, "-", parsed->version,
        ".dist-info/ folder matching its file name (found: ",
        dist_infos.empty() ? "none" : absl::StrJoin(dist_infos, ", "),
        "). Fix: rebuild the wheel; renaming a wheel file does not rename its metadata"));
  }
  const std::string member = dist_info + "/METADATA";
  const ZipEntry* entry = zip->Find(member);
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(filename, " has no ", member));
  }
  auto bytes = zip->Read(*entry, kMaxWheelMetadataBytes);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", member, " in ", filename, ": ", bytes.status().message()));
  }
  WheelPackage package;
  package.filename = std::string(filename);
  package.parsed = *std::move(parsed);
  package.metadata_text = std::string(AsAbslChars(bytes->bytes()));
  package.size_bytes = file->bytes().size();
  auto metadata = ParseCoreMetadata(package.metadata_text);
  if (!metadata.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(member, " in ", filename, ": ", metadata.status().message()));
  }
  package.metadata = *std::move(metadata);
  if (NormalizeProjectName(package.metadata.name()) !=
      NormalizeProjectName(package.parsed.distribution)) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename, ": METADATA says Name: ", package.metadata.name(),
                     " but the file name says ", package.parsed.distribution));
  }
  if (!SameVersionSpelling(package.metadata.version(), package.parsed.version)) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename, ": METADATA says Version: ", package.metadata.version(),
                     " but the file name says ", package.parsed.version));
  }
  return package;
}

}  // namespace farm
