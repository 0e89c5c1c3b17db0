// The worker's bounded cache of CAS blobs, so inputs that repeat across actions (toolkit
// headers, preprocessed sources, libraries) are fetched from the coordinator once.
// Files live at <dir>/<first two hex>/<hash>, read-only; downloads are verified against
// their digest before they appear, and every copy handed to an action is verified again.
// Least recently used blobs go beyond `max_bytes`. Linked copies (LinkAt) live at
// <dir>/links/<hash>-<mtime>-<r|x> and count towards `max_bytes` too: all of them go when
// they hold more than half of it, and on each start.
//
// Thread-safe: concurrent Fetch calls of one digest share a single download.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "farm/v1/cas.pb.h"
#include "libfarm/cas/cas_client.h"

namespace farm::worker {

class BlobCache {
 public:
  // `client` must outlive the cache. Blobs already in `dir` (from an earlier run) are
  // reused, oldest first to go.
  BlobCache(std::string dir, uint64_t max_bytes, CasClient* client);

  // A path to a verified local copy, downloading on a miss. The path stays valid until the
  // blob is evicted by later fetches: prefer MaterializeAt, which links it at once.
  absl::StatusOr<std::string> Fetch(const farm::v1::Digest& digest);

  // Puts a copy of the blob at `dest` (parents created; mode 0444, or 0555 when executable),
  // hashed while it is copied. Never a link: an action owns its inputs and may change them
  // without touching the cache. A cached file whose bytes no longer match its digest (changed
  // on disk behind the cache's back) is dropped and fetched again, never handed out.
  absl::Status MaterializeAt(const farm::v1::Digest& digest, const std::string& dest,
                             bool executable);
  // The same, with the copy's mtime set to `mtime_seconds`.
  absl::Status MaterializeAt(const farm::v1::Digest& digest, const std::string& dest,
                             bool executable, int64_t mtime_seconds);

  // Puts the blob at `dest` as a hard link to a read-only copy stamped with `mtime_seconds`,
  // made (and verified) once per blob, mtime and mode: laying out a header costs a link, not a
  // new file. Only for a path the action sees read-only (sandbox.h's image_writable): a
  // writable link would let one action change the next one's inputs. Where no link can be made
  // (another filesystem, the link limit) it is a copy, as MaterializeAt makes.
  absl::Status LinkAt(const farm::v1::Digest& digest, const std::string& dest, bool executable,
                      int64_t mtime_seconds);

  // Downloads, `parallel` at a time, those of `digests` not cached or on their way, so a
  // tree's first layout waits for one round of downloads rather than one per file. A blob
  // that fails here is fetched again (and its error reported) by the MaterializeAt that needs it.
  void Prefetch(const std::vector<farm::v1::Digest>& digests, int parallel);

  uint64_t bytes_cached();
  uint64_t hits();
  uint64_t misses();

 private:
  struct Entry {
    int64_t size = 0;
    int in_use = 0;  // MaterializeAt calls holding it
    std::list<std::string>::iterator lru;
  };
  struct Pending {
    absl::Notification done;
    absl::Status status;
  };

  std::string PathFor(const std::string& hash) const;
  void Load() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictBeyondLimit() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fetch, and mark the entry in use so eviction leaves it until Release.
  absl::StatusOr<std::string> Acquire(const farm::v1::Digest& digest, bool hold);
  void Release(const std::string& hash);
  // Forgets a cached blob found corrupt and removes its file.
  void Drop(const std::string& hash);
  // Makes LinkAt's read-only copy `name` in <dir>/links.
  absl::Status MakeLinkedCopy(const farm::v1::Digest& digest, const std::string& name,
                              bool executable, int64_t mtime_seconds);
  void DropLinkedCopies() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const uint64_t max_bytes_;
  CasClient* const client_;

  absl::Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // front: most recently used
  std::unordered_map<std::string, std::shared_ptr<Pending>> pending_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, int64_t> linked_ ABSL_GUARDED_BY(mu_);  // name -> size
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;                               // blobs and linked copies
  uint64_t linked_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace farm::worker
