// absl::Time <-> google.protobuf.Timestamp.
#pragma once

#include <google/protobuf/timestamp.pb.h>

#include "absl/time/time.h"

namespace farm {

google::protobuf::Timestamp ToProtoTime(absl::Time t);
absl::Time FromProtoTime(const google::protobuf::Timestamp& ts);

}  // namespace farm
