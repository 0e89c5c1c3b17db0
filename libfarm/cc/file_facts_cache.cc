#include "libfarm/cc/file_facts_cache.h"

#include <cstring>
#include <filesystem>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "libfarm/digest/digest.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/files/file_contents.h"

namespace farm::cc {
namespace {

// "Wheelfarm file facts", version 1. A batch: this, the body's size (uint32) and the body's
// SHA-256 (64 hex characters), then the body: records, every number in host byte order.
constexpr absl::string_view kMagic = "WFF1";
constexpr size_t kHashSize = 64;
constexpr int64_t kSettledNs = 2'000'000'000;

enum Flags : uint8_t { kElf = 1, kTimeMacros = 2, kUnreadInclude = 4 };

template <typename T>
void Put(std::string& out, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void PutText(std::string& out, absl::string_view text) {
  Put<uint32_t>(out, static_cast<uint32_t>(text.size()));
  out.append(text.data(), text.size());
}

// Reads what Put wrote; every read checks the bytes are there.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }

  template <typename T>
  bool Get(T& value) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool Take(size_t size, absl::string_view& out) {
    if (bytes_.size() - at_ < size) return false;
    out = bytes_.substr(at_, size);
    at_ += size;
    return true;
  }
  bool GetText(std::string& out) {
    uint32_t size = 0;
    absl::string_view text;
    if (!Get(size) || !Take(size, text)) return false;
    out.assign(text.data(), text.size());
    return true;
  }

 private:
  absl::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

FileFactsCache::Identity FileFactsCache::IdentityOf(const struct stat& info) {
  return Identity{.device = static_cast<uint64_t>(info.st_dev),
                  .inode = static_cast<uint64_t>(info.st_ino),
                  .size = static_cast<int64_t>(info.st_size),
                  .mtime_ns = absl::ToUnixNanos(absl::TimeFromTimespec(info.st_mtim)),
                  .ctime_ns = absl::ToUnixNanos(absl::TimeFromTimespec(info.st_ctim))};
}

void FileFactsCache::AppendEntry(const std::string& path, const Entry& entry, std::string& out) {
  PutText(out, path);
  Put(out, entry.identity.device);
  Put(out, entry.identity.inode);
  Put(out, entry.identity.size);
  Put(out, entry.identity.mtime_ns);
  Put(out, entry.identity.ctime_ns);
  PutText(out, entry.facts.digest.hash());
  Put<int64_t>(out, entry.facts.digest.size_bytes());
  Put<uint8_t>(out, (entry.facts.elf ? kElf : 0) |
                        (entry.facts.mentions_time_macros ? kTimeMacros : 0) |
                        (entry.facts.unread_include ? kUnreadInclude : 0));
  Put<uint32_t>(out, static_cast<uint32_t>(entry.facts.names.size()));
  for (const IncludedName& name : entry.facts.names) {
    Put<uint8_t>(out, name.probe ? 1 : 0);
    PutText(out, name.name);
  }
}

std::string FileFactsCache::Batch(const std::string& records) {
  Sha256 hash;
  hash.Update(records);
  std::string batch(kMagic.data(), kMagic.size());
  Put<uint32_t>(batch, static_cast<uint32_t>(records.size()));
  batch += hash.FinishHex();
  batch += records;
  return batch;
}

FileFactsCache FileFactsCache::Load(std::string path, uint64_t max_bytes) {
  FileFactsCache cache;
  cache.path_ = std::move(path);
  cache.max_bytes_ = max_bytes;
  absl::StatusOr<std::string> bytes = ReadFileContents(cache.path_);
  if (!bytes.ok()) return cache;  // none yet (or unreadable: Save says so)
  cache.loaded_bytes_ = bytes->size();
  Reader store(*bytes);
  while (!store.done()) {
    absl::string_view magic, hash, body;
    uint32_t size = 0;
    if (!store.Take(kMagic.size(), magic) || magic != kMagic || !store.Get(size) ||
        !store.Take(kHashSize, hash) || !store.Take(size, body)) {
      cache.damaged_ = true;
      break;
    }
    Sha256 check;
    check.Update(body);
    if (check.FinishHex() != hash) {
      cache.damaged_ = true;
      break;
    }
    Reader records(body);
    while (!records.done()) {
      std::string file;
      Entry entry;
      std::string digest_hash;
      int64_t digest_size = 0;
      uint8_t flags = 0;
      uint32_t count = 0;
      Identity& id = entry.identity;
      if (!records.GetText(file) || !records.Get(id.device) || !records.Get(id.inode) ||
          !records.Get(id.size) || !records.Get(id.mtime_ns) || !records.Get(id.ctime_ns) ||
          !records.GetText(digest_hash) || !records.Get(digest_size) || !records.Get(flags) ||
          !records.Get(count) || count > size) {
        cache.damaged_ = true;
        return cache;
      }
      entry.facts.digest.set_hash(std::move(digest_hash));
      entry.facts.digest.set_size_bytes(digest_size);
      // The checksum finds damage, not a store written to deceive: what goes into a Digest
      // (a protobuf string, sent to the coordinator) must be a digest.
      if (!ValidateDigest(entry.facts.digest).ok()) {
        cache.damaged_ = true;
        return cache;
      }
      entry.facts.elf = (flags & kElf) != 0;
      entry.facts.mentions_time_macros = (flags & kTimeMacros) != 0;
      entry.facts.unread_include = (flags & kUnreadInclude) != 0;
      entry.facts.names.resize(count);
      for (IncludedName& name : entry.facts.names) {
        uint8_t probe = 0;
        if (!records.Get(probe) || !records.GetText(name.name)) {
          cache.damaged_ = true;
          return cache;
        }
        name.probe = probe != 0;
      }
      cache.entries_.insert_or_assign(std::move(file), std::move(entry));
    }
  }
  return cache;
}

const FileFacts* FileFactsCache::Find(const std::string& absolute_path,
                                      const struct stat& info) const {
  auto it = entries_.find(absolute_path);
  if (it == entries_.end() || !(it->second.identity == IdentityOf(info))) return nullptr;
  ++hits_;
  return &it->second.facts;
}

void FileFactsCache::Remember(const std::string& absolute_path, const struct stat& info,
                              FileFacts facts, int64_t now_ns) {
  const Identity identity = IdentityOf(info);
  if (identity.mtime_ns > now_ns - kSettledNs || identity.ctime_ns > now_ns - kSettledNs) return;
  entries_.insert_or_assign(absolute_path, Entry{identity, std::move(facts)});
  learned_.push_back(absolute_path);
}

absl::Status FileFactsCache::Save() {
  if (path_.empty() || (learned_.empty() && !damaged_)) return absl::OkStatus();
  std::error_code ignored;  // an error shows in the write below
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ignored);
  std::string records;
  for (const std::string& file : learned_) AppendEntry(file, entries_.at(file), records);
  if (const std::string batch = Batch(records);
      !damaged_ && loaded_bytes_ + batch.size() <= max_bytes_) {
    learned_.clear();
    loaded_bytes_ += batch.size();
    return AppendToFile(path_, batch);
  }
  // Rewritten whole: what this call learned, then the newest facts of other paths, as many as
  // fit in half the limit (which stay is arbitrary: it is a cache), so the store is not
  // rewritten again at once.
  records.clear();
  auto fits = [&](const std::string& file, const Entry& entry) {
    std::string one;
    AppendEntry(file, entry, one);
    if (records.size() + one.size() > max_bytes_ / 2) return false;
    records += one;
    return true;
  };
  const absl::flat_hash_set<std::string> learned(learned_.begin(), learned_.end());
  for (const std::string& file : learned) {
    if (!fits(file, entries_.at(file))) break;
  }
  for (const auto& [file, entry] : entries_) {
    if (!learned.contains(file) && !fits(file, entry)) break;
  }
  learned_.clear();
  damaged_ = false;
  const std::string batch = Batch(records);
  loaded_bytes_ = batch.size();
  return WriteFileAtomically(path_, batch);
}

}  // namespace farm::cc
