#include "coordinator/builds/build_log_blocks.h"

#include <algorithm>

#include <google/protobuf/wrappers.pb.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace farm::coordinator {

std::string BuildLogBlocks::Key(const std::string& build_id, uint64_t block) {
  // Length-prefixed, so no build id's keys are a prefix of another's.
  return absl::StrFormat("%08x%s%016x", build_id.size(), build_id, block);
}

uint64_t BuildLogBlocks::FirstKeptOffset(uint64_t end) {
  if (end <= kKeepBytes) return 0;
  return (end - kKeepBytes) / kBlockBytes * kBlockBytes;
}

absl::Status BuildLogBlocks::StageAppend(const StateStore& store, StateBatch& batch,
                                         const std::string& build_id, uint64_t end,
                                         absl::string_view data) {
  if (data.empty()) return absl::OkStatus();
  const uint64_t new_end = end + data.size();
  uint64_t block = end / kBlockBytes;
  google::protobuf::BytesValue current;
  if (end % kBlockBytes != 0) {
    absl::Status s = store.Get(Table::kBuildLogs, Key(build_id, block), &current);
    if (s.code() == absl::StatusCode::kNotFound) {
      return absl::DataLossError(absl::StrCat("the log of build '", build_id, "' lost block ",
                                              block, " in ", store.dir()));
    }
    if (!s.ok()) return s;
  }
  while (!data.empty()) {
    const size_t room = kBlockBytes - current.value().size();
    const size_t take = std::min(room, data.size());
    current.mutable_value()->append(data.data(), take);
    data.remove_prefix(take);
    batch.Put(Table::kBuildLogs, Key(build_id, block), current);
    if (current.value().size() == kBlockBytes) {
      ++block;
      current.clear_value();
    }
  }
  // Staged after the puts, so a block written and dropped in one append ends up deleted.
  for (uint64_t b = FirstKeptOffset(end) / kBlockBytes; b < FirstKeptOffset(new_end) / kBlockBytes;
       ++b) {
    batch.Delete(Table::kBuildLogs, Key(build_id, b));
  }
  return absl::OkStatus();
}

void BuildLogBlocks::StageDelete(StateBatch& batch, const std::string& build_id, uint64_t end) {
  for (uint64_t b = FirstKeptOffset(end) / kBlockBytes; b * kBlockBytes < end; ++b) {
    batch.Delete(Table::kBuildLogs, Key(build_id, b));
  }
}

absl::StatusOr<farm::v1::GetBuildLogsResponse> BuildLogBlocks::Read(const StateStore& store,
                                                                    const std::string& build_id,
                                                                    uint64_t end, uint64_t offset,
                                                                    uint64_t max_bytes) {
  farm::v1::GetBuildLogsResponse out;
  const uint64_t first = FirstKeptOffset(end);
  offset = std::clamp(offset, first, end);
  const uint64_t stop = std::min(end, offset + max_bytes);
  out.set_offset(offset);
  out.set_start_offset(first);
  std::string* data = out.mutable_data();
  uint64_t at = offset;
  while (at < stop) {
    const uint64_t block = at / kBlockBytes;
    google::protobuf::BytesValue value;
    absl::Status s = store.Get(Table::kBuildLogs, Key(build_id, block), &value);
    if (!s.ok()) {
      // An append moved the kept window past this block while we read: start again later.
      if (s.code() == absl::StatusCode::kNotFound) break;
      return s;
    }
    const uint64_t within = at - block * kBlockBytes;
    if (within >= value.value().size()) break;
    const uint64_t take = std::min<uint64_t>(value.value().size() - within, stop - at);
    data->append(value.value(), within, take);
    at += take;
  }
  out.set_next_offset(at);
  return out;
}

}  // namespace farm::coordinator
