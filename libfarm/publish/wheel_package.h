// What an index or an uploader needs to know about a wheel file: its checked file name and
// its Core Metadata, read from the archive without unpacking it.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/wheel/wheel_filename.h"

namespace farm {

struct WheelPackage {
  std::string filename;
  WheelFilename parsed;
  std::string metadata_text;  // the METADATA member, byte for byte (served per PEP 658)
  CoreMetadata metadata;
  uint64_t size_bytes = 0;
};

// Refuses anything but a plain wheel file name: path separators, "..", control or
// non-ASCII characters, a leading dot, more than 255 bytes, or not NAME-VER-PY-ABI-PLAT.whl.
// Source distributions are refused on purpose: the farm builds and serves wheels only,
// and every check here (METADATA, tags) needs one.
absl::StatusOr<WheelFilename> CheckWheelFilename(absl::string_view filename);

// Opens the wheel at `path` (its name is `filename`, which may differ from the path's, e.g.
// for an upload in a temp file), checks every member path (no "..", absolute paths, ...),
// and reads {name}-{version}.dist-info/METADATA, whose Name and Version must match the
// file name; a wheel with more than one .dist-info folder is refused, as pip refuses it. Errors are
// INVALID_ARGUMENT and say what to fix.
absl::StatusOr<WheelPackage> ReadWheelPackage(const std::string& path, absl::string_view filename);

// Versions as they appear in wheel names and METADATA compared leniently: case-folded,
// with "-" and "_" read as ".", so "1.0+CU126" == "1.0+cu126".
bool SameVersionSpelling(absl::string_view a, absl::string_view b);

}  // namespace farm
