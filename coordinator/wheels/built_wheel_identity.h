// A build's wheel is hostile input: its file name and metadata are whatever the build's code
// wrote. Before the farm retags, verifies or publishes it, the wheel must be the build's own
// package at the build's own version, so a build of one project never publishes another.
//
// The local version label is not compared: the farm owns it. Retagging replaces whatever
// label the build set ("+git1a2b3c") with the toolkit's ("+cu130"), so a label the build
// chose never reaches a published name.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/wheel/wheel_filename.h"

namespace farm::coordinator {

// The wheel file name a build returned, parsed strictly (ParseWheelFilename), when it names
// `package` (compared PEP 503 normalized) at `version` (PEP 440 canonical, local label aside).
// FAILED_PRECONDITION naming both otherwise; INVALID_ARGUMENT for a malformed name.
absl::StatusOr<WheelFilename> CheckBuiltWheelName(absl::string_view filename,
                                                  absl::string_view package,
                                                  absl::string_view version);

// The same for a wheel file at `path` named `filename`, and its contents: exactly one
// .dist-info folder, matching the name, whose METADATA names the same project and version.
absl::Status CheckBuiltWheel(const std::string& path, absl::string_view filename,
                             absl::string_view package, absl::string_view version);

}  // namespace farm::coordinator
