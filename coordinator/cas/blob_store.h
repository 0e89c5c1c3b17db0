// The coordinator's content-addressed blob store. Bytes live on disk under
// <data-dir>/cas/blobs/<first two hex>/<hash> (read-only files), metadata (size, stored_at,
// last_access) in RocksDB (Table::kCas), and an in-memory index answers lookups.
//
// Every write goes to <data-dir>/cas/tmp/ while being hashed, is verified against its
// digest, synced, renamed into place, and only then recorded: once a Put returns, the blob
// survives kill -9 and power loss; a crash before that leaves only a temp file, which
// Open() removes. Open() also reconciles disk and RocksDB (a file without a record or a
// record without its file is dropped), so the two never disagree after a restart.
//
// A size quota is kept by evicting the least recently used blobs, never a pinned one. Pins
// are IN MEMORY ONLY: after a restart nothing is pinned until the scheduler pins again, so
// it must re-pin every live build/action's blobs right after Open (Coordinator::Start does
// this before serving; Open itself never evicts).
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/state_store.h"
#include "farm/v1/cas.pb.h"
#include "libfarm/cas/space_budget.h"
#include "libfarm/cas/verified_file_writer.h"

namespace farm::coordinator {

class BlobStore {
 public:
  // `dir` is <data-dir>/cas; `state` must outlive the store.
  static absl::StatusOr<std::unique_ptr<BlobStore>> Open(
      const std::string& dir, StateStore* state, uint64_t quota_bytes,
      std::function<absl::Time()> now = [] { return absl::Now(); });

  // --- writing ---
  // A temp file in the store's tmp dir to stream an upload into. RESOURCE_EXHAUSTED when
  // `size_bytes` alone exceeds the quota, and from Append once the temp files of all writes
  // in flight would exceed it.
  absl::StatusOr<VerifiedFileWriter> BeginWrite(int64_t size_bytes);
  // Verifies `writer`'s bytes against `expected` (INVALID_ARGUMENT naming expected and
  // actual digests on mismatch; the bytes are discarded) and stores them. A blob already
  // present is a no-op. Returns once the blob and its record are durable.
  absl::StatusOr<farm::v1::Digest> Commit(VerifiedFileWriter writer,
                                          const farm::v1::Digest& expected);
  // For in-process writers (logs, results): hashes and stores the file, consuming it (it is
  // moved into the store, or copied and removed when on another filesystem).
  absl::StatusOr<farm::v1::Digest> PutFile(const std::string& temp_path);
  absl::StatusOr<farm::v1::Digest> PutBytes(absl::string_view bytes);

  // --- reading --- (size_bytes -1 in a lookup: any size)
  bool Contains(const farm::v1::Digest& digest);
  // The full digest of a stored blob, or NOT_FOUND.
  absl::StatusOr<farm::v1::Digest> Lookup(const farm::v1::Digest& digest);
  // Path of the blob's file, for in-process readers; counts as an access. The file may be
  // evicted later unless pinned: pin what you will read.
  absl::StatusOr<std::string> PathOf(const farm::v1::Digest& digest);
  // A small blob's bytes (a file tree): NOT_FOUND when it is not stored (or was evicted while
  // read), RESOURCE_EXHAUSTED when it is larger than `max_bytes`. Counts as an access.
  absl::StatusOr<std::string> Read(const farm::v1::Digest& digest, int64_t max_bytes);
  // Marks an access (LRU order); persisted at most once a minute per blob.
  void Touch(const std::string& hash);
  farm::v1::StatResponse Stat(const farm::v1::Digest& digest);

  // --- pins --- (see the note at the top: in memory only)
  // Adds `digests` to what `owner` (a build or action id) holds; blobs need not exist yet.
  void Pin(const std::string& owner, const std::vector<farm::v1::Digest>& digests);
  // Releases everything `owner` holds.
  void Unpin(const std::string& owner);

  // For a backup: pins every stored blob under `owner` and runs `snapshot` while no blob is
  // stored or evicted, so what `snapshot` records of the CAS is exactly what is returned and
  // stays on disk until Unpin(owner). Returns each blob's digest and file.
  absl::StatusOr<std::vector<std::pair<farm::v1::Digest, std::string>>> PinAllWhile(
      const std::string& owner, const std::function<absl::Status()>& snapshot);

  uint64_t bytes_stored();
  uint64_t blob_count();
  uint64_t quota_bytes() const { return quota_; }
  uint64_t evictions();

 private:
  struct Entry {
    int64_t size = 0;
    absl::Time stored_at;
    absl::Time last_access;
    absl::Time persisted_access;
    std::list<std::string>::iterator lru;
  };

  BlobStore(std::string dir, StateStore* state, uint64_t quota, std::function<absl::Time()> now);
  absl::Status Load();
  std::string BlobPath(const std::string& hash) const;
  // Moves a verified, synced temp file into place and records it.
  absl::StatusOr<farm::v1::Digest> Adopt(VerifiedFileWriter& writer, const farm::v1::Digest& digest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Evicts LRU unpinned blobs until `incoming` more bytes fit the quota.
  absl::Status MakeRoom(int64_t incoming) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void Insert(const std::string& hash, Entry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Erase(const std::string& hash) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Entry* Find(const farm::v1::Digest& digest) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PersistRecord(const std::string& hash, const Entry& entry);
  // Touch's write of a blob's last access, under the write lock it managed to take.
  void PersistAccess(const std::string& hash, const Entry& snapshot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const std::string dir_;
  const std::string blobs_dir_;
  const std::string tmp_dir_;
  StateStore* const state_;
  const uint64_t quota_;
  const std::function<absl::Time()> now_;
  // Temp files of writes in flight, bounded by the quota too: a client cannot fill the disk
  // through cas/tmp with uploads that never finish or never declare their size.
  const std::shared_ptr<SpaceBudget> temp_space_;

  // Serialises changes to files and records (commit, evict, access persistence) so that
  // disk and RocksDB change together. Held across I/O; readers never take it.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Guards the in-memory index; held only briefly.
  absl::Mutex mu_;
  std::unordered_map<std::string, Entry> index_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // front: most recently used
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evictions_ ABSL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, int> pin_counts_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::vector<std::string>> pins_by_owner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
