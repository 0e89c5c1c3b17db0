// Writes a blob to a temp file while hashing it, then moves it into place only once the
// bytes are known to match their digest: a reader never sees a partial or corrupt file,
// and a crash leaves at most a temp file behind.
//
// Writeback starts as each 8 MiB window completes, so Finish's fsync has only the tail left
// to wait for instead of the whole file, and dirty memory stays bounded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "farm/v1/cas.pb.h"
#include "libfarm/cas/space_budget.h"
#include "libfarm/digest/sha256.h"

namespace farm {

class VerifiedFileWriter {
 public:
  // Creates a temp file in `temp_dir` (same filesystem as the final path, so the last step
  // is a rename). `mode` is applied to the finished file.
  static absl::StatusOr<VerifiedFileWriter> Create(const std::string& temp_dir, int mode = 0644);
  VerifiedFileWriter(VerifiedFileWriter&& other) noexcept;
  VerifiedFileWriter& operator=(VerifiedFileWriter&&) = delete;
  // Removes the temp file unless it was moved into place.
  ~VerifiedFileWriter();

  // Every appended byte is first taken from `budget` (an Append it refuses writes nothing);
  // all of it is given back when the file is moved into place or discarded.
  void DrawFrom(std::shared_ptr<SpaceBudget> budget) { budget_ = std::move(budget); }

  // For a file nobody is about to read back: windows two behind the end are waited for and
  // dropped from the page cache, so a large file streams through a few windows of cache
  // instead of filling it (and evicting everything else). The kernel then reuses those
  // pages rather than allocating a fresh one per 4 KiB, which on a VM costs 1.5 s of CPU
  // per GiB written against 0.35 s. The last two windows (16 MiB) stay cached.
  void DropBehind() { drop_behind_ = true; }

  absl::Status Append(absl::string_view data);
  int64_t bytes_written() const { return bytes_; }
  const std::string& temp_path() const { return temp_path_; }

  // Flushes to disk and returns the digest of everything appended. Call once.
  absl::StatusOr<farm::v1::Digest> Finish();
  // Finish(), then INVALID_ARGUMENT naming both digests unless the bytes match `expected`
  // (hash, and size unless expected.size_bytes() is -1).
  absl::StatusOr<farm::v1::Digest> FinishExpecting(const farm::v1::Digest& expected);
  // After Finish: renames the temp file to `final_path` and syncs its directory, so the
  // file survives a crash once this returns.
  absl::Status MoveTo(const std::string& final_path);

 private:
  VerifiedFileWriter(int fd, std::string temp_path, int mode);
  // Starts writeback of the windows completed so far; drops old ones with DropBehind.
  absl::Status StreamBehind();
  void Discard();
  void ReturnBudget();

  int fd_ = -1;
  std::string temp_path_;
  int mode_;
  int64_t bytes_ = 0;
  int64_t writeback_from_ = 0;  // bytes before this have been handed to writeback
  int64_t dropped_to_ = 0;      // bytes before this are on disk and out of the cache
  bool stream_behind_ = true;   // false where the filesystem has no sync_file_range
  bool drop_behind_ = false;
  Sha256 sha_;
  bool finished_ = false;
  bool moved_ = false;
  std::shared_ptr<SpaceBudget> budget_;
};

// fsyncs directory `dir`, making renames and unlinks in it durable.
absl::Status SyncDirectory(const std::string& dir);

}  // namespace farm
