// The form fields of a legacy upload API request ("file_upload"), as twine sends them:
// the protocol fields, the digests, and every Core Metadata field in lowercase_underscore
// form, multi-use fields repeated under their plural names (classifiers, requires_dist...).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "libfarm/publish/upload_digests.h"
#include "libfarm/publish/wheel_package.h"

namespace farm {

using FormFields = std::vector<std::pair<std::string, std::string>>;

FormFields LegacyUploadFields(const WheelPackage& wheel, const UploadDigests& digests);

// The project name the way twine sends it: runs of anything but [A-Za-z0-9.] become "-".
std::string UploadProjectName(const std::string& name);

}  // namespace farm
