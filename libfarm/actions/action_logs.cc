#include "libfarm/actions/action_logs.h"

namespace farm {

absl::StatusOr<std::string> ActionLogText(CasClient* cas, const farm::v1::Digest& digest,
                                          const std::string& tail) {
  constexpr int64_t kMaxLogBytes = 16 << 20;
  if (digest.hash().empty() || digest.size_bytes() <= static_cast<int64_t>(tail.size())) {
    return tail;
  }
  return cas->DownloadBytes(digest, kMaxLogBytes);
}

}  // namespace farm
