// How a build's log lives in the store: fixed-size blocks in the "build_logs" column family,
// addressed by absolute byte offset, of which the last kKeepBytes are kept. The log's end
// offset is kept in the build record (Build.log_bytes) and written in the same batch as
// the blocks, so record and blocks never disagree.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "coordinator/state_store.h"
#include "farm/v1/builds.pb.h"

namespace farm::coordinator {

class BuildLogBlocks {
 public:
  static constexpr uint64_t kBlockBytes = uint64_t{64} << 10;
  static constexpr uint64_t kKeepBytes = uint64_t{8} << 20;

  // The oldest offset still kept of a log that ends at `end`.
  static uint64_t FirstKeptOffset(uint64_t end);

  // Stages into `batch` the blocks that append `data` to the log of `build_id` ending at
  // `end`, and the deletion of blocks that fall out of the kept window. Reads the partial
  // last block from `store`.
  static absl::Status StageAppend(const StateStore& store, StateBatch& batch,
                                  const std::string& build_id, uint64_t end,
                                  absl::string_view data);

  // Stages the deletion of every kept block of the log of `build_id` ending at `end`.
  static void StageDelete(StateBatch& batch, const std::string& build_id, uint64_t end);

  // Up to `max_bytes` from `offset` (clamped into the kept window) of a log ending at `end`.
  static absl::StatusOr<farm::v1::GetBuildLogsResponse> Read(const StateStore& store,
                                                             const std::string& build_id,
                                                             uint64_t end, uint64_t offset,
                                                             uint64_t max_bytes);

 private:
  static std::string Key(const std::string& build_id, uint64_t block);
};

}  // namespace farm::coordinator
