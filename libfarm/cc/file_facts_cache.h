// What reading one file of a compile's tree told farm-cc (its digest, the headers its text
// names, whether it names a time macro), kept on the build host by the file's path and its
// identity as stat() gives it: device, inode, size, mtime and ctime. A later compile that adds
// the same unchanged file reads and hashes nothing; the headers of a build are the same few
// thousand for every unit, so nearly all of them come from here (ccache's inode cache does
// the same for its hashes).
//
// Only a settled file is kept: one whose mtime and ctime are older than two seconds when it
// is read. A file changed after that gets a newer ctime, which the kernel sets and no one can
// set back, so a kept identity never matches changed bytes; a file changed within the same
// clock tick as its last change is never kept.
//
// The store is one file of batches, each appended by a single write() (O_APPEND: concurrent
// farm-cc calls do not interleave), each with its length and SHA-256, so a torn or damaged
// batch is seen and dropped. A store grown past its limit, or found damaged, is rewritten
// whole, holding the newest facts per path.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "farm/v1/cas.pb.h"
#include "libfarm/cc/source_text_checks.h"

namespace farm::cc {

struct FileFacts {
  farm::v1::Digest digest;
  bool elf = false;  // an ELF file's text is not read
  bool mentions_time_macros = false;
  bool unread_include = false;  // may include by a name IncludedNames cannot read
  std::vector<IncludedName> names;
};

class FileFactsCache {
 public:
  // An empty cache kept nowhere.
  FileFactsCache() = default;

  // The facts kept at `path` (absent: none yet; a damaged batch and all after it are left
  // out, and Save() rewrites the store). Never fails: a store that cannot be read is empty.
  static FileFactsCache Load(std::string path, uint64_t max_bytes);

  // The facts of the file at `absolute_path` whose stat() is `info`, if kept for exactly that
  // identity; nullptr otherwise.
  const FileFacts* Find(const std::string& absolute_path, const struct stat& info) const;

  // Keeps `facts` of the file at `absolute_path`, read while its fstat() was `info`, if the
  // file had settled by `now_ns` (CLOCK_REALTIME nanoseconds).
  void Remember(const std::string& absolute_path, const struct stat& info, FileFacts facts,
                int64_t now_ns);

  // Appends what Remember kept since Load to the store (or rewrites it: see above). A store
  // that is nowhere saves nothing.
  absl::Status Save();

  int hits() const { return hits_; }
  int kept() const { return static_cast<int>(learned_.size()); }

 private:
  struct Identity {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const Identity&) const = default;
  };
  struct Entry {
    Identity identity;
    FileFacts facts;
  };

  static Identity IdentityOf(const struct stat& info);
  static void AppendEntry(const std::string& path, const Entry& entry, std::string& out);
  static std::string Batch(const std::string& records);

  std::string path_;
  uint64_t max_bytes_ = 0;
  uint64_t loaded_bytes_ = 0;
  bool damaged_ = false;
  absl::flat_hash_map<std::string, Entry> entries_;
  std::vector<std::string> learned_;  // paths Remember kept, in order
  mutable int hits_ = 0;
};

}  // namespace farm::cc
