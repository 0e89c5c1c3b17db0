// Which published file a wheel file name means, compared as pip and PyPI compare them:
// the project name normalized (PEP 503), the version by its PEP 440 canonical form ("2.0",
// "2.0.0" and "v2.00" are one release), the build tag, and the set of compatibility tags
// case-folded and in any order ("PY3", "py2.py3" = "py3.py2"). Two names with one key are
// one file to pip, so the index keeps at most one file per key: "a published name never
// changes" is checked on keys, not on spellings.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libfarm/wheel/wheel_filename.h"

namespace farm::coordinator {

// "probe-ok 2  py3-none-any" (project, version, build tag, tags); INVALID_ARGUMENT when
// the version is not PEP 440.
absl::StatusOr<std::string> ReleaseFileKey(const WheelFilename& name);

}  // namespace farm::coordinator
