#include "worker/blob_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "libfarm/cas/digest.h"
#include "libfarm/logging/logger.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

}  // namespace

BlobCache::BlobCache(std::string dir, uint64_t max_bytes, CasClient* client)
    : dir_(std::move(dir)), max_bytes_(max_bytes), client_(client) {
  absl::MutexLock lock(&mu_);
  Load();
}

std::string BlobCache::PathFor(const std::string& hash) const {
  return absl::StrCat(dir_, "/", hash.substr(0, 2), "/", hash);
}

void BlobCache::Load() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::vector<std::pair<fs::file_time_type, std::string>> found;
  for (auto it = fs::recursive_directory_iterator(dir_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string name = it->path().filename().string();
    // Leftover temp files of interrupted downloads, or anything not ours.
    if (!ValidateHash(name).ok() || it->path().parent_path().filename() != name.substr(0, 2)) {
      fs::remove(it->path(), ec);
      ec.clear();
      continue;
    }
    found.emplace_back(it->last_write_time(), name);
  }
  // Oldest first, so the most recently used ends at the front.
  std::sort(found.begin(), found.end());
  for (const auto& [mtime, hash] : found) {
    Entry e;
    e.size = static_cast<int64_t>(fs::file_size(PathFor(hash), ec));
    lru_.push_front(hash);
    e.lru = lru_.begin();
    bytes_ += static_cast<uint64_t>(e.size);
    entries_[hash] = e;
  }
  EvictBeyondLimit();
}

void BlobCache::EvictBeyondLimit() {
  for (auto it = lru_.end(); bytes_ > max_bytes_ && it != lru_.begin();) {
    --it;
    Entry& e = entries_[*it];
    if (e.in_use > 0) continue;
    std::error_code ec;
    fs::remove(PathFor(*it), ec);
    bytes_ -= static_cast<uint64_t>(e.size);
    entries_.erase(*it);
    it = lru_.erase(it);
  }
}

absl::StatusOr<std::string> BlobCache::Fetch(const farm::v1::Digest& digest) {
  return Acquire(digest, false);
}

absl::StatusOr<std::string> BlobCache::Acquire(const farm::v1::Digest& digest, bool hold) {
  if (absl::Status s = ValidateDigest(digest); !s.ok()) return s;
  const std::string& hash = digest.hash();
  const std::string path = PathFor(hash);
  std::shared_ptr<Pending> pending;
  bool downloader = false;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = entries_.find(hash); it != entries_.end()) {
      if (it->second.size != digest.size_bytes()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "digest ", DigestToString(digest), " names a blob of ", it->second.size, " bytes"));
      }
      ++hits_;
      if (hold) ++it->second.in_use;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return path;
    }
    auto p = pending_.find(hash);
    if (p == pending_.end()) {
      pending = std::make_shared<Pending>();
      pending_[hash] = pending;
      downloader = true;
      ++misses_;
    } else {
      pending = p->second;
    }
  }
  if (downloader) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    absl::Status s = client_->DownloadToFile(digest, path);
    // Read-only: an action that tries to write its (hard-linked) input fails instead of
    // corrupting the cache for every later action.
    if (s.ok() && ::chmod(path.c_str(), 0444) != 0) {
      s = absl::InternalError(absl::StrCat("chmod ", path, ": ", std::strerror(errno)));
    }
    absl::MutexLock lock(&mu_);
    if (s.ok()) {
      Entry e;
      e.size = digest.size_bytes();
      lru_.push_front(hash);
      e.lru = lru_.begin();
      // Held while we evict, so a cache smaller than this blob still hands it out once.
      e.in_use = 1;
      entries_[hash] = e;
      bytes_ += static_cast<uint64_t>(e.size);
      EvictBeyondLimit();
      if (!hold) entries_[hash].in_use = 0;
    }
    pending->status = s;
    pending_.erase(hash);
    pending->done.Notify();
    if (!s.ok()) return s;
    return path;
  }
  pending->done.WaitForNotification();
  if (!pending->status.ok()) return pending->status;
  // The downloader finished; take it as a hit (and hold it) under the lock.
  return Acquire(digest, hold);
}

void BlobCache::Release(const std::string& hash) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(hash);
  if (it != entries_.end() && it->second.in_use > 0) --it->second.in_use;
  EvictBeyondLimit();
}

absl::Status BlobCache::MaterializeAt(const farm::v1::Digest& digest, const std::string& dest,
                                      bool executable) {
  auto path = Acquire(digest, true);
  if (!path.ok()) return path.status();
  absl::Cleanup release = [this, &digest] { Release(digest.hash()); };
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  fs::remove(dest, ec);
  if (!executable && ::link(path->c_str(), dest.c_str()) == 0) return absl::OkStatus();
  if (!executable && errno != EXDEV && errno != EPERM && errno != EMLINK) {
    return absl::InternalError(
        absl::StrCat("cannot link ", *path, " to ", dest, ": ", std::strerror(errno)));
  }
  ec.clear();
  fs::copy_file(*path, dest, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot copy ", *path, " to ", dest, ": ", ec.message()));
  }
  fs::permissions(dest, executable ? fs::perms(0555) : fs::perms(0444), ec);
  return absl::OkStatus();
}

uint64_t BlobCache::bytes_cached() {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

uint64_t BlobCache::hits() {
  absl::MutexLock lock(&mu_);
  return hits_;
}

uint64_t BlobCache::misses() {
  absl::MutexLock lock(&mu_);
  return misses_;
}

}  // namespace farm::worker
