#include "libfarm/time/proto_time.h"

#include <google/protobuf/util/time_util.h>

namespace farm {

google::protobuf::Timestamp ToProtoTime(absl::Time t) {
  return google::protobuf::util::TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(t));
}

absl::Time FromProtoTime(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixNanos(google::protobuf::util::TimeUtil::TimestampToNanoseconds(ts));
}

}  // namespace farm
