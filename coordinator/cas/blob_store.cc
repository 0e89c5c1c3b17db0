#include "coordinator/cas/blob_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/units/byte_size.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

// Access times reach RocksDB at most this often per blob: LRU order only needs to be about
// right after a restart, and a synced write per download would cost more than the download.
constexpr absl::Duration kPersistAccessEvery = absl::Minutes(1);

void ToProto(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

absl::Time FromProto(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace

absl::StatusOr<std::unique_ptr<BlobStore>> BlobStore::Open(const std::string& dir,
                                                           StateStore* state, uint64_t quota_bytes,
                                                           std::function<absl::Time()> now) {
  std::unique_ptr<BlobStore> store(new BlobStore(dir, state, quota_bytes, std::move(now)));
  std::error_code ec;
  // Temp files are uploads that never finished; nobody was told they were stored.
  fs::remove_all(store->tmp_dir_, ec);
  for (const std::string& d : {store->blobs_dir_, store->tmp_dir_}) {
    fs::create_directories(d, ec);
    if (ec) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create the CAS directory ", d, ": ", ec.message(),
                       ". Fix: make the data dir writable, or choose another --data-dir"));
    }
  }
  FARM_RETURN_IF_ERROR(store->Load());
  ComponentLogger("coordinator")
      ->info("CAS in {}: {} blobs, {} of the {} quota", dir, store->blob_count(),
             FormatByteSize(store->bytes_stored()), FormatByteSize(quota_bytes));
  return store;
}

BlobStore::BlobStore(std::string dir, StateStore* state, uint64_t quota,
                     std::function<absl::Time()> now)
    : dir_(std::move(dir)),
      blobs_dir_((fs::path(dir_) / "blobs").string()),
      tmp_dir_((fs::path(dir_) / "tmp").string()),
      state_(state),
      quota_(quota),
      now_(std::move(now)),
      temp_space_(std::make_shared<SpaceBudget>(
          quota, "the CAS temp space (bounded by --cas-quota)",
          "retry once other uploads finish, or raise farm-coordinator --cas-quota")) {}

std::string BlobStore::BlobPath(const std::string& hash) const {
  // Sharded by the first byte so no directory holds more than 1/256 of the blobs.
  return absl::StrCat(blobs_dir_, "/", hash.substr(0, 2), "/", hash);
}

absl::Status BlobStore::Load() {
  auto log = ComponentLogger("coordinator");
  std::unordered_map<std::string, farm::v1::BlobRecord> records;
  std::vector<std::string> dead_records;
  absl::Status s = state_->ForEach(Table::kCas, [&](const std::string& key, const std::string& v) {
    farm::v1::BlobRecord r;
    if (!ValidateHash(key).ok() || !r.ParseFromString(v)) {
      dead_records.push_back(key);
    } else {
      records[key] = r;
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;

  std::vector<std::pair<std::string, Entry>> live;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(blobs_dir_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string hash = it->path().filename().string();
    auto rec = records.find(hash);
    const bool placed =
        ValidateHash(hash).ok() && it->path().parent_path().filename() == hash.substr(0, 2);
    if (placed && rec != records.end() &&
        static_cast<int64_t>(it->file_size()) == rec->second.size_bytes()) {
      Entry e;
      e.size = rec->second.size_bytes();
      e.stored_at = FromProto(rec->second.stored_at());
      e.last_access = e.persisted_access = FromProto(rec->second.last_access());
      live.emplace_back(hash, e);
      records.erase(rec);
      continue;
    }
    // A blob renamed into place by a commit that crashed before recording it: never
    // acknowledged, so dropping it loses nothing anyone was promised.
    log->warn("CAS: removing unrecorded or damaged file {}", it->path().string());
    fs::remove(it->path(), ec);
    ec.clear();
    if (rec != records.end()) {
      dead_records.push_back(hash);
      records.erase(rec);
    }
  }
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read the CAS directory ", blobs_dir_, ": ", ec.message()));
  }
  for (const auto& [hash, r] : records) {
    log->warn("CAS: blob {} is recorded but its file is gone; forgetting it", hash);
    dead_records.push_back(hash);
  }
  if (!dead_records.empty()) {
    StateBatch batch;
    for (const auto& h : dead_records) batch.Delete(Table::kCas, h);
    if (absl::Status w = state_->Write(batch); !w.ok()) return w;
  }
  // Oldest access first, so each insert at the front leaves the most recent in front.
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
    return a.second.last_access < b.second.last_access;
  });
  absl::MutexLock lock(&mu_);
  for (auto& [hash, e] : live) Insert(hash, e);
  return absl::OkStatus();
}

void BlobStore::Insert(const std::string& hash, Entry entry) {
  lru_.push_front(hash);
  entry.lru = lru_.begin();
  bytes_ += static_cast<uint64_t>(entry.size);
  index_[hash] = entry;
}

void BlobStore::Erase(const std::string& hash) {
  auto it = index_.find(hash);
  if (it == index_.end()) return;
  bytes_ -= static_cast<uint64_t>(it->second.size);
  lru_.erase(it->second.lru);
  index_.erase(it);
}

BlobStore::Entry* BlobStore::Find(const farm::v1::Digest& digest) {
  auto it = index_.find(digest.hash());
  if (it == index_.end()) return nullptr;
  if (digest.size_bytes() >= 0 && digest.size_bytes() != it->second.size) return nullptr;
  return &it->second;
}

absl::Status BlobStore::PersistRecord(const std::string& hash, const Entry& entry) {
  farm::v1::BlobRecord r;
  r.set_size_bytes(entry.size);
  ToProto(entry.stored_at, r.mutable_stored_at());
  ToProto(entry.last_access, r.mutable_last_access());
  return state_->Put(Table::kCas, hash, r);
}

absl::StatusOr<VerifiedFileWriter> BlobStore::BeginWrite(int64_t size_bytes) {
  if (size_bytes > 0 && static_cast<uint64_t>(size_bytes) > quota_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a blob of ", FormatByteSize(static_cast<uint64_t>(size_bytes)),
                     " is larger than the whole CAS quota (", FormatByteSize(quota_),
                     "). Fix: raise farm-coordinator --cas-quota"));
  }
  auto writer = VerifiedFileWriter::Create(tmp_dir_, 0444);
  if (writer.ok()) writer->DrawFrom(temp_space_);
  return writer;
}

absl::StatusOr<farm::v1::Digest> BlobStore::Commit(VerifiedFileWriter writer,
                                                   const farm::v1::Digest& expected) {
  // Hash check and fsync happen outside the locks: they take as long as the blob is big.
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest actual, writer.FinishExpecting(expected));
  absl::MutexLock write_lock(&write_mu_);
  return Adopt(writer, actual);
}

absl::StatusOr<farm::v1::Digest> BlobStore::Adopt(VerifiedFileWriter& writer,
                                                  const farm::v1::Digest& digest) {
  {
    absl::MutexLock lock(&mu_);
    if (Find(digest) != nullptr) {
      // Already stored (a concurrent upload won): ours is discarded with the writer.
      lru_.splice(lru_.begin(), lru_, index_[digest.hash()].lru);
      return digest;
    }
  }
  FARM_RETURN_IF_ERROR(MakeRoom(digest.size_bytes()));
  const std::string path = BlobPath(digest.hash());
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  FARM_RETURN_IF_ERROR(writer.MoveTo(path));
  Entry e;
  e.size = digest.size_bytes();
  e.stored_at = e.last_access = e.persisted_access = now_();
  if (absl::Status s = PersistRecord(digest.hash(), e); !s.ok()) {
    ::unlink(path.c_str());
    return s;
  }
  absl::MutexLock lock(&mu_);
  Insert(digest.hash(), e);
  return digest;
}

absl::StatusOr<std::vector<std::pair<farm::v1::Digest, std::string>>> BlobStore::PinAllWhile(
    const std::string& owner, const std::function<absl::Status()>& snapshot) {
  absl::MutexLock write_lock(&write_mu_);
  std::vector<std::pair<farm::v1::Digest, std::string>> blobs;
  std::vector<farm::v1::Digest> digests;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [hash, entry] : index_) {
      farm::v1::Digest d;
      d.set_hash(hash);
      d.set_size_bytes(entry.size);
      digests.push_back(d);
      blobs.emplace_back(d, BlobPath(hash));
    }
  }
  Pin(owner, digests);
  if (absl::Status s = snapshot(); !s.ok()) {
    Unpin(owner);
    return s;
  }
  return blobs;
}

absl::Status BlobStore::MakeRoom(int64_t incoming) {
  std::vector<std::pair<std::string, int64_t>> victims;
  {
    absl::MutexLock lock(&mu_);
    uint64_t projected = bytes_ + static_cast<uint64_t>(std::max<int64_t>(0, incoming));
    if (projected <= quota_) return absl::OkStatus();
    for (auto it = lru_.rbegin(); it != lru_.rend() && projected > quota_; ++it) {
      if (pin_counts_.contains(*it)) continue;
      const int64_t size = index_[*it].size;
      victims.emplace_back(*it, size);
      projected -= static_cast<uint64_t>(size);
    }
    if (projected > quota_) {
      // Evict nothing: emptying the cache would not make this blob fit either.
      return absl::ResourceExhaustedError(absl::StrCat(
          "the CAS quota (", FormatByteSize(quota_),
          ") is full of blobs pinned by live "
          "builds and actions; cannot store ",
          FormatByteSize(static_cast<uint64_t>(incoming)),
          " more. Fix: wait for builds to finish, or raise farm-coordinator --cas-quota"));
    }
    for (const auto& [hash, size] : victims) Erase(hash);
    evictions_ += victims.size();
  }
  StateBatch batch;
  uint64_t freed = 0;
  for (const auto& [hash, size] : victims) {
    // Open readers keep reading an unlinked file; new ones get NOT_FOUND.
    ::unlink(BlobPath(hash).c_str());
    batch.Delete(Table::kCas, hash);
    freed += static_cast<uint64_t>(size);
  }
  ComponentLogger("coordinator")
      ->info("CAS: evicted {} least recently used blob(s), {}, to stay within {}", victims.size(),
             FormatByteSize(freed), FormatByteSize(quota_));
  // If this fails the records point at missing files; Load() forgets them on restart.
  return state_->Write(batch);
}

absl::StatusOr<farm::v1::Digest> BlobStore::PutBytes(absl::string_view bytes) {
  FARM_ASSIGN_OR_RETURN(VerifiedFileWriter writer, BeginWrite(static_cast<int64_t>(bytes.size())));
  FARM_RETURN_IF_ERROR(writer.Append(bytes));
  return Commit(std::move(writer), DigestOfBytes(bytes));
}

absl::StatusOr<farm::v1::Digest> BlobStore::PutFile(const std::string& temp_path) {
  // Copied rather than renamed, so the caller's file may live on any filesystem; blobs the
  // coordinator writes itself (logs, results) are small next to uploads.
  const int fd = ::open(temp_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", temp_path, ": ", std::strerror(errno)));
  }
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  struct stat st {};
  ::fstat(fd, &st);
  FARM_ASSIGN_OR_RETURN(VerifiedFileWriter writer, BeginWrite(st.st_size));
  std::string buf(kCasChunkBytes, '\0');
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::InternalError(absl::StrCat("reading ", temp_path, ": ", std::strerror(errno)));
    if (n == 0) break;
    FARM_RETURN_IF_ERROR(writer.Append(absl::string_view(buf.data(), static_cast<size_t>(n))));
  }
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest digest, writer.Finish());
  absl::StatusOr<farm::v1::Digest> stored;
  {
    absl::MutexLock write_lock(&write_mu_);
    stored = Adopt(writer, digest);
  }
  if (stored.ok()) ::unlink(temp_path.c_str());
  return stored;
}

bool BlobStore::Contains(const farm::v1::Digest& digest) {
  absl::MutexLock lock(&mu_);
  return Find(digest) != nullptr;
}

absl::StatusOr<farm::v1::Digest> BlobStore::Lookup(const farm::v1::Digest& digest) {
  FARM_RETURN_IF_ERROR(ValidateHash(digest.hash()));
  absl::MutexLock lock(&mu_);
  Entry* e = Find(digest);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat("blob ", DigestToString(digest), " is not in the CAS"));
  }
  farm::v1::Digest full;
  full.set_hash(digest.hash());
  full.set_size_bytes(e->size);
  return full;
}

absl::StatusOr<std::string> BlobStore::PathOf(const farm::v1::Digest& digest) {
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest found, Lookup(digest));
  Touch(found.hash());
  return BlobPath(found.hash());
}

absl::StatusOr<std::string> BlobStore::Read(const farm::v1::Digest& digest, int64_t max_bytes) {
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest found, Lookup(digest));
  if (found.size_bytes() > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "blob ", digest.hash(), " holds ", found.size_bytes(), " bytes; the limit is ", max_bytes));
  }
  Touch(found.hash());
  absl::StatusOr<std::string> bytes = ReadFileContents(BlobPath(found.hash()));
  // Evicted since the lookup: read as not stored.
  if (!bytes.ok()) return absl::NotFoundError(bytes.status().message());
  return bytes;
}

void BlobStore::Touch(const std::string& hash) {
  Entry snapshot;
  {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(hash);
    if (it == index_.end()) return;
    Entry& e = it->second;
    e.last_access = now_();
    lru_.splice(lru_.begin(), lru_, e.lru);
    if (e.last_access - e.persisted_access < kPersistAccessEvery) return;
    e.persisted_access = e.last_access;
    snapshot = e;
  }
  // Best effort: when a commit or eviction holds the write lock, skip; the next access
  // after a minute persists instead.
  if (!write_mu_.TryLock()) return;
  PersistAccess(hash, snapshot);
  write_mu_.Unlock();
}

void BlobStore::PersistAccess(const std::string& hash, const Entry& snapshot) {
  bool still_there = false;
  {
    absl::MutexLock lock(&mu_);
    still_there = index_.contains(hash);
  }
  if (!still_there) return;
  if (absl::Status s = PersistRecord(hash, snapshot); !s.ok()) {
    ComponentLogger("coordinator")->warn("CAS: cannot record access to {}: {}", hash, s.message());
  }
}

farm::v1::StatResponse BlobStore::Stat(const farm::v1::Digest& digest) {
  farm::v1::StatResponse resp;
  farm::v1::Digest query = digest;
  if (query.size_bytes() == 0) query.set_size_bytes(-1);  // 0 may mean "unknown" in Stat
  absl::MutexLock lock(&mu_);
  *resp.mutable_digest() = digest;
  if (auto pin = pin_counts_.find(digest.hash()); pin != pin_counts_.end()) {
    resp.set_pins(static_cast<uint32_t>(pin->second));
  }
  Entry* e = Find(query);
  if (e == nullptr) return resp;
  resp.set_present(true);
  resp.mutable_digest()->set_size_bytes(e->size);
  ToProto(e->stored_at, resp.mutable_stored_at());
  ToProto(e->last_access, resp.mutable_last_access());
  return resp;
}

void BlobStore::Pin(const std::string& owner, const std::vector<farm::v1::Digest>& digests) {
  absl::MutexLock lock(&mu_);
  auto& held = pins_by_owner_[owner];
  for (const auto& d : digests) {
    if (!ValidateHash(d.hash()).ok()) continue;
    held.push_back(d.hash());
    ++pin_counts_[d.hash()];
  }
}

void BlobStore::Unpin(const std::string& owner) {
  absl::MutexLock lock(&mu_);
  auto it = pins_by_owner_.find(owner);
  if (it == pins_by_owner_.end()) return;
  for (const auto& hash : it->second) {
    auto c = pin_counts_.find(hash);
    if (c != pin_counts_.end() && --c->second <= 0) pin_counts_.erase(c);
  }
  pins_by_owner_.erase(it);
}

uint64_t BlobStore::bytes_stored() {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

uint64_t BlobStore::blob_count() {
  absl::MutexLock lock(&mu_);
  return index_.size();
}

uint64_t BlobStore::evictions() {
  absl::MutexLock lock(&mu_);
  return evictions_;
}

}  // namespace farm::coordinator
