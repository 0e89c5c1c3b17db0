// Turns bytes or a path into an Inspection, recursing into archives and wheels.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libfarm/coverage/inspection.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

// True for the formats InspectBinary understands (ELF, ar archive, bare fat binary).
bool LooksLikeBinary(ByteSpan data);

// Appends what `data` holds, named `label`: one file for an ELF or fat binary, one per
// member for an ar archive. Unreadable content becomes a file with `error` set.
void InspectBinary(ByteSpan data, const std::string& label, Inspection& out);

// Inspects a file on disk: any of the above, or a wheel/zip (members named "outer!member").
// Errors only when the path cannot be read or is none of these formats.
absl::StatusOr<Inspection> InspectPath(const std::string& path);

}  // namespace farm
