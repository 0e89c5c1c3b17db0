#include "worker/file_tree_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/subtrees.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/status/status_macros.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// Downloads at once when a tree is first laid out: enough to hide the round trips to the
// coordinator, few enough to leave its other callers room.
constexpr int kParallelBlobFetches = 8;

bool IsLink(const farm::v1::InputFile& entry) { return !entry.symlink_target().empty(); }

// The link entries of both trees, by path.
std::set<std::string> LinksOf(const farm::v1::FileTree& toolchain,
                              const farm::v1::FileTree& inputs) {
  std::set<std::string> links;
  for (const auto* tree : {&toolchain, &inputs}) {
    for (const auto& e : tree->files()) {
      if (IsLink(e)) links.insert(e.path());
    }
  }
  return links;
}

// Makes a directory or link entry at `dest` (its parents too); false for a file entry.
absl::StatusOr<bool> MakeDirectoryOrLink(const farm::v1::InputFile& entry, const fs::path& dest) {
  std::error_code ec;
  if (entry.directory()) {
    fs::create_directories(dest, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot make ", dest.string()));
    return true;
  }
  fs::create_directories(dest.parent_path(), ec);
  if (!IsLink(entry)) return false;
  if (::symlink(entry.symlink_target().c_str(), dest.c_str()) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("cannot make the link ", dest.string(), ": ", std::strerror(errno)));
  }
  return true;
}

// Whether a path of the image lies in one of the directories the action may write.
class WritablePaths {
 public:
  explicit WritablePaths(const std::vector<std::string>& dirs) {
    for (const std::string& dir : dirs)
      prefixes_.push_back(dir.empty() ? "" : absl::StrCat(dir, "/"));
  }
  bool Contains(const std::string& path) const {
    return std::any_of(prefixes_.begin(), prefixes_.end(),
                       [&](const std::string& prefix) { return absl::StartsWith(path, prefix); });
  }

 private:
  std::vector<std::string> prefixes_;  // "dir/"; "" for the whole image
};

using LinkedCopy = std::tuple<std::string, int64_t, bool>;  // {hash, mtime, executable}

LinkedCopy LinkedCopyOf(const farm::v1::InputFile& entry) {
  return {entry.digest().hash(), entry.mtime_seconds(), entry.executable()};
}

}  // namespace

absl::StatusOr<farm::v1::FileTree> ReadFileTree(const farm::v1::Digest& root, BlobCache* cache) {
  return ExpandFileTree(
      root,
      [cache](const farm::v1::Digest& digest, int64_t max_bytes) -> absl::StatusOr<std::string> {
        FARM_ASSIGN_OR_RETURN(const std::string path, cache->Fetch(digest));
        FARM_ASSIGN_OR_RETURN(std::string bytes, ReadFileContents(path));
        if (static_cast<int64_t>(bytes.size()) > max_bytes) {
          return absl::InvalidArgumentError(
              absl::StrCat("file tree blob ", digest.hash(), " is over ", max_bytes, " bytes"));
        }
        // The cache hands out a path without re-reading the file: the tree is checked here.
        if (DigestOfBytes(bytes).hash() != digest.hash()) {
          return absl::InternalError(absl::StrCat("the blob cache's copy of file tree blob ",
                                                  digest.hash(), " no longer matches its digest"));
        }
        return bytes;
      });
}

absl::Status CheckTreesAgree(const farm::v1::FileTree& toolchain,
                             const farm::v1::FileTree& inputs) {
  std::map<std::string, const farm::v1::InputFile*> by_path;
  for (const auto& e : toolchain.files()) by_path[e.path()] = &e;
  const std::set<std::string> links = LinksOf(toolchain, inputs);
  for (const auto& e : inputs.files()) {
    auto it = by_path.find(e.path());
    if (it != by_path.end() && (it->second->symlink_target() != e.symlink_target() ||
                                it->second->digest().hash() != e.digest().hash())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'/", e.path(), "' is one thing in the toolchain and another in the input tree"));
    }
    if (absl::Status s = CheckNotBelowLink(e.path(), links); !s.ok()) return s;
  }
  for (const auto& e : toolchain.files()) {
    if (absl::Status s = CheckNotBelowLink(e.path(), links); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckNotThroughLinks(const std::vector<std::string>& paths,
                                  const farm::v1::FileTree& toolchain,
                                  const farm::v1::FileTree& inputs) {
  const std::set<std::string> links = LinksOf(toolchain, inputs);
  for (const std::string& path : paths) {
    if (links.count(path) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("'/", path, "' is a link of the file trees"));
    }
    if (absl::Status s = CheckNotBelowLink(path, links); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status LayOutFileTree(const farm::v1::FileTree& tree, const std::string& root,
                            BlobCache* cache, const std::vector<std::string>& writable_dirs) {
  std::vector<farm::v1::Digest> files;
  for (const farm::v1::InputFile& entry : tree.files()) {
    if (!entry.directory() && !IsLink(entry)) files.push_back(entry.digest());
  }
  cache->Prefetch(files, kParallelBlobFetches);
  const WritablePaths writable(writable_dirs);
  std::set<LinkedCopy> linked;
  std::error_code ec;
  for (const farm::v1::InputFile& entry : tree.files()) {
    const fs::path dest = fs::path(root) / entry.path();
    auto made = MakeDirectoryOrLink(entry, dest);
    if (!made.ok()) return made.status();
    if (*made) continue;
    if (fs::exists(fs::symlink_status(dest, ec))) continue;  // the same file, from the toolchain
    absl::Status s;
    if (!writable.Contains(entry.path()) && linked.insert(LinkedCopyOf(entry)).second) {
      s = cache->LinkAt(entry.digest(), dest.string(), entry.executable(), entry.mtime_seconds());
    } else {
      s = cache->MaterializeAt(entry.digest(), dest.string(), entry.executable(),
                               entry.mtime_seconds());
    }
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("'/", entry.path(), "': ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> MountPointsFor(
    const farm::v1::FileTree& tree, const std::string& tree_root, const std::string& root) {
  std::vector<std::pair<std::string, std::string>> mounts;
  for (const farm::v1::InputFile& entry : tree.files()) {
    const fs::path dest = fs::path(root) / entry.path();
    auto made = MakeDirectoryOrLink(entry, dest);
    if (!made.ok()) return made.status();
    if (*made) continue;
    const int fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);
    if (fd < 0) {
      return absl::InternalError(
          absl::StrCat("cannot make the mount point ", dest.string(), ": ", std::strerror(errno)));
    }
    ::close(fd);
    mounts.emplace_back((fs::path(tree_root) / entry.path()).string(),
                        absl::StrCat("/", entry.path()));
  }
  return mounts;
}

}  // namespace farm::worker
