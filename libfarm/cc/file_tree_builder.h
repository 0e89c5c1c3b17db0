// A set of host files at their absolute paths, with every symbolic link on the way kept as a
// link, so a sandbox whose root is made of it resolves each path as the build host does.
#pragma once

#include <sys/stat.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/cas.pb.h"
#include "libfarm/cc/file_facts_cache.h"
#include "libfarm/cc/source_text_checks.h"

namespace farm::cc {

class FileTreeBuilder {
 public:
  // `facts`, when given, answers for files it kept (stat()ed, not read) and keeps what reading
  // the others told; it must outlive the builder.
  explicit FileTreeBuilder(FileFactsCache* facts = nullptr) : facts_(facts) {}

  // Adds `path` (absolute, or relative to `cwd`) the way the kernel resolves it: walks its
  // components from '/'; each component that is a symlink becomes a link entry (its path and
  // readlink text) and the walk goes on through its target ('..' after a link leaves the
  // link's target, as the kernel's does); the final file becomes a file entry with its sha256
  // digest and executable bit. Directories are implicit. Errors: NOT_FOUND naming the path,
  // FAILED_PRECONDITION for a path that is not a regular file in the end, or a symlink loop.
  // Paths already walked cost no system call; a file is read and hashed once.
  absl::Status Add(const std::string& path, const std::string& cwd);

  // The tree: entries sorted by path (absolute, less the leading '/'); file entries with a
  // digest and executable bit, link entries with symlink_target. No entry lies below a link:
  // every entry's parent directory is a real directory on the host.
  farm::v1::FileTree Tree() const;

  // Local absolute path -> digest of each file entry, to upload.
  std::vector<std::pair<std::string, farm::v1::Digest>> FilesToUpload() const;

  // Whether any added file (ELF files aside) names __DATE__, __TIME__ or __TIMESTAMP__.
  bool mentions_time_macros() const { return mentions_time_macros_; }

  // The first added file (ELF files aside) that may look a header up by a name IncludedNames
  // cannot read (source_text_checks.h), absolute; empty if none. Where there is one, only the
  // compiler's own scan knows what the compile reads.
  const std::string& first_unread_include_file() const { return first_unread_include_file_; }

  // The header names each added file (ELF files aside) includes or probes for, with the
  // directory it was added by (absolute, as spelled: quoted includes are looked up there);
  // AddIncludedHeaders (include_probes.h) adds the files they find.
  struct IncludeSite {
    std::string directory;
    std::vector<IncludedName> names;
  };
  const std::vector<IncludeSite>& include_sites() const { return include_sites_; }

  // Every directory (absolute) that holds an entry, with all its ancestors.
  std::set<std::string> Directories() const;

  // Directories (absolute) a path walked into and left again by '..' ("-Ibuild/../include")
  // below which the tree has no entry: the tree cannot carry an empty directory, so in a
  // sandbox made of it that path would not resolve. Empty for nearly every compile; a caller
  // must create these in the sandbox or compile locally.
  std::vector<std::string> DirectoriesWithoutEntries() const;

 private:
  struct Entry {
    std::string symlink_target;  // set for a link
    farm::v1::Digest digest;     // set for a file
    bool executable = false;
  };

  absl::Status AddFile(const std::string& relative_path, const std::string& spelled_directory,
                       const struct stat& info);
  absl::StatusOr<FileFacts> ReadFacts(const std::string& absolute, const struct stat& info);

  std::map<std::string, Entry> entries_;  // by path less the leading '/'
  std::set<std::string> directories_;     // real directories seen, less the leading '/'
  std::set<std::string> left_by_parent_;  // directories '..' left, less the leading '/'
  bool mentions_time_macros_ = false;
  std::string first_unread_include_file_;
  std::vector<IncludeSite> include_sites_;
  FileFactsCache* facts_;
  std::string read_buffer_;  // every file's bytes, one after another (ReadFileContentsInto)
};

}  // namespace farm::cc
