#include "worker/blob_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/logging/logger.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

absl::Status SetMtime(const std::string& path, int64_t mtime_seconds) {
  const struct timespec times[2] = {{mtime_seconds, 0}, {mtime_seconds, 0}};
  if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot set the mtime of ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Copies `from` to a new file `dest` with `mode`, hashing the bytes on the way: false (and no
// `dest`) when they are not the bytes of `digest`.
absl::StatusOr<bool> CopyVerified(const std::string& from, const farm::v1::Digest& digest,
                                  const std::string& dest, mode_t mode) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", from, ": ", std::strerror(errno)));
  }
  absl::Cleanup close_in = [in] { ::close(in); };
  ::unlink(dest.c_str());
  const int out = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (out < 0) {
    return absl::InternalError(absl::StrCat("cannot create ", dest, ": ", std::strerror(errno)));
  }
  bool kept = false;
  absl::Cleanup close_out = [&] {
    ::close(out);
    if (!kept) ::unlink(dest.c_str());
  };
  Sha256 sha;
  int64_t size = 0;
  // Sized to the blob (one byte more, to read the end in the same call): a fresh 1 MiB per
  // header cost an action of ~500 headers some 0.1 s in page faults alone.
  std::vector<char> buffer(
      static_cast<size_t>(std::clamp<int64_t>(digest.size_bytes() + 1, 1, 1 << 20)));
  while (true) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(absl::StrCat("cannot read ", from, ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    sha.Update(absl::string_view(buffer.data(), static_cast<size_t>(n)));
    size += n;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        return absl::InternalError(absl::StrCat("cannot write ", dest, ": ", std::strerror(errno)));
      }
      done += w;
    }
  }
  if (size != digest.size_bytes() || sha.FinishHex() != digest.hash()) return false;
  // The umask may have narrowed the mode open() was given.
  if (::fchmod(out, mode) != 0) {
    return absl::InternalError(absl::StrCat("chmod ", dest, ": ", std::strerror(errno)));
  }
  kept = true;
  return true;
}

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
  // Linked copies are cheap to make again (a local copy each): past half the budget they all go
  // at once; files already linked into a layout keep their bytes until that layout goes.
  if (bytes_ > max_bytes_ && linked_bytes_ > max_bytes_ / 2) DropLinkedCopies();
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

void BlobCache::Prefetch(const std::vector<farm::v1::Digest>& digests, int parallel) {
  std::vector<const farm::v1::Digest*> missing;
  {
    absl::MutexLock lock(&mu_);
    std::unordered_set<std::string> seen;
    for (const farm::v1::Digest& d : digests) {
      if (entries_.count(d.hash()) == 0 && pending_.count(d.hash()) == 0 &&
          seen.insert(d.hash()).second) {
        missing.push_back(&d);
      }
    }
  }
  const size_t threads =
      std::min<size_t>(static_cast<size_t>(std::max(parallel, 1)), missing.size());
  if (threads < 2) return;  // one download: MaterializeAt's own is as quick
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t i = 0; i < threads; ++i) {
    pool.emplace_back([&] {
      for (size_t k; (k = next.fetch_add(1)) < missing.size();) {
        if (auto path = Fetch(*missing[k]); !path.ok()) {
          ComponentLogger("worker")->debug("prefetch of {}: {}", DigestToString(*missing[k]),
                                           path.status().message());
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
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
    // Read-only, as a first guard; copies are verified anyway (MaterializeAt).
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

void BlobCache::Drop(const std::string& hash) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(hash);
  if (it == entries_.end()) return;
  std::error_code ec;
  fs::remove(PathFor(hash), ec);
  bytes_ -= static_cast<uint64_t>(it->second.size);
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

absl::Status BlobCache::MaterializeAt(const farm::v1::Digest& digest, const std::string& dest,
                                      bool executable) {
  auto log = ComponentLogger("worker");
  const mode_t mode = executable ? 0555 : 0444;
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  // A second try after a corrupt cached copy, which is then a fresh download.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto path = Acquire(digest, true);
    if (!path.ok()) return path.status();
    absl::StatusOr<bool> intact = false;
    {
      absl::Cleanup release = [this, &digest] { Release(digest.hash()); };
      intact = CopyVerified(*path, digest, dest, mode);
    }
    if (!intact.ok()) return intact.status();
    if (*intact) return absl::OkStatus();
    log->error(
        "cached blob {} no longer matches its digest (changed on disk); dropped and "
        "fetched again",
        DigestToString(digest));
    Drop(digest.hash());
  }
  return absl::DataLossError(absl::StrCat("blob ", DigestToString(digest),
                                          " is corrupt even when fetched again into ", dir_,
                                          ". Fix: check the disk under the worker's --work-dir"));
}

void BlobCache::DropLinkedCopies() {
  std::error_code ec;
  fs::remove_all(absl::StrCat(dir_, "/links"), ec);
  bytes_ -= linked_bytes_;
  linked_bytes_ = 0;
  linked_.clear();
}

absl::Status BlobCache::MakeLinkedCopy(const farm::v1::Digest& digest, const std::string& name,
                                       bool executable, int64_t mtime_seconds) {
  const std::string dir = absl::StrCat(dir_, "/links");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string path = absl::StrCat(dir, "/", name);
  const std::string temp =
      absl::StrCat(path, ".", std::hash<std::thread::id>{}(std::this_thread::get_id()));
  if (absl::Status s = MaterializeAt(digest, temp, executable, mtime_seconds); !s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  // Under the lock, so a DropLinkedCopies never runs between the rename and the count.
  absl::MutexLock lock(&mu_);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", temp, ": ", std::strerror(error)));
  }
  if (linked_.emplace(name, digest.size_bytes()).second) {
    bytes_ += static_cast<uint64_t>(digest.size_bytes());
    linked_bytes_ += static_cast<uint64_t>(digest.size_bytes());
    EvictBeyondLimit();
  }
  return absl::OkStatus();
}

absl::Status BlobCache::LinkAt(const farm::v1::Digest& digest, const std::string& dest,
                               bool executable, int64_t mtime_seconds) {
  if (absl::Status s = ValidateDigest(digest); !s.ok()) return s;
  const std::string name =
      absl::StrCat(digest.hash(), "-", mtime_seconds, executable ? "-x" : "-r");
  const std::string linked = absl::StrCat(dir_, "/links/", name);
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  // A second try when the copy went between its making and the link (DropLinkedCopies, which
  // may also take a copy being made). Whatever fails, a plain copy still serves, and says why
  // if it cannot.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::link(linked.c_str(), dest.c_str()) == 0) return absl::OkStatus();
    if (errno != ENOENT || !MakeLinkedCopy(digest, name, executable, mtime_seconds).ok()) break;
  }
  return MaterializeAt(digest, dest, executable, mtime_seconds);
}

absl::Status BlobCache::MaterializeAt(const farm::v1::Digest& digest, const std::string& dest,
                                      bool executable, int64_t mtime_seconds) {
  if (absl::Status s = MaterializeAt(digest, dest, executable); !s.ok()) return s;
  return SetMtime(dest, mtime_seconds);
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
