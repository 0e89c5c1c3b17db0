#include "libfarm/file_tree/subtrees.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"

namespace farm {
namespace {

constexpr int kMaxSubtreeDepth = 256;
constexpr size_t kMaxTreePathBytes = 4096;  // as ValidateRelativePath

// "a/b/c" -> {"a/b", "c"}; "c" -> {"", "c"}.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

bool IsSubtree(const farm::v1::InputFile& entry) {
  return entry.directory() && !entry.digest().hash().empty();
}

}  // namespace

SplitFileTree SplitIntoSubtrees(const farm::v1::FileTree& flat) {
  // Every directory that holds an entry, its ancestors too.
  std::set<std::string> holding;
  for (const farm::v1::InputFile& entry : flat.files()) {
    for (std::string dir = SplitPath(entry.path()).first; !dir.empty();
         dir = SplitPath(dir).first) {
      if (!holding.insert(dir).second) break;
    }
  }
  std::map<std::string, farm::v1::FileTree> directories;  // "" is the root
  directories[""];
  for (const std::string& dir : holding) directories[dir];
  for (const farm::v1::InputFile& entry : flat.files()) {
    // An empty directory's entry says the directory exists; one holding entries is its subtree.
    if (entry.directory() && holding.count(entry.path()) != 0) continue;
    auto [dir, name] = SplitPath(entry.path());
    farm::v1::InputFile* placed = directories[dir].add_files();
    *placed = entry;
    placed->set_path(name);
  }
  SplitFileTree split;
  std::set<std::string> stored;
  // A child's path sorts after its parent's, so in reverse every subtree is made before the
  // directory that names it.
  for (auto it = directories.rbegin(); it != directories.rend(); ++it) {
    std::string bytes = SerializeFileTree(it->second);
    farm::v1::Digest digest = DigestOfBytes(bytes);
    if (it->first.empty()) {
      split.root = std::move(digest);
      split.root_bytes = std::move(bytes);
      break;
    }
    auto [parent, name] = SplitPath(it->first);
    farm::v1::InputFile* entry = directories[parent].add_files();
    entry->set_path(name);
    entry->set_directory(true);
    *entry->mutable_digest() = digest;
    if (stored.insert(digest.hash()).second) {
      split.subtrees.emplace_back(std::move(digest), std::move(bytes));
    }
  }
  std::sort(split.subtrees.begin(), split.subtrees.end(),
            [](const auto& a, const auto& b) { return a.first.hash() < b.first.hash(); });
  return split;
}

absl::StatusOr<farm::v1::FileTree> ExpandFileTree(const farm::v1::Digest& root,
                                                  TreeBlobReader read) {
  struct Pending {
    std::string prefix;  // "" for the root, else the directory's path and '/'
    farm::v1::Digest digest;
    int depth;
  };
  std::vector<Pending> pending = {{"", root, 0}};
  farm::v1::FileTree flat;
  // Each blob read and parsed once, however often the tree names it: what the expansion costs
  // is bounded by the entries it adds.
  std::map<std::string, farm::v1::FileTree> parsed;
  int64_t bytes_read = 0;
  int entries = 0;
  bool expanded = false;
  while (!pending.empty()) {
    Pending next = std::move(pending.back());
    pending.pop_back();
    auto known = parsed.find(next.digest.hash());
    if (known == parsed.end()) {
      const int64_t left = kMaxFileTreeBytes - bytes_read;
      if (next.digest.size_bytes() < 0 || next.digest.size_bytes() > left) {
        return absl::InvalidArgumentError(absl::StrCat("the file tree's blobs add up to more than ",
                                                       kMaxFileTreeBytes, " bytes (at '",
                                                       next.prefix.substr(0, 200), "')"));
      }
      absl::StatusOr<std::string> bytes = read(next.digest, left);
      if (!bytes.ok()) return bytes.status();
      bytes_read += static_cast<int64_t>(bytes->size());
      if (bytes_read > kMaxFileTreeBytes) {
        return absl::InvalidArgumentError(absl::StrCat("the file tree's blobs add up to more than ",
                                                       kMaxFileTreeBytes, " bytes"));
      }
      farm::v1::FileTree tree;
      if (!tree.ParseFromArray(bytes->data(), static_cast<int>(bytes->size()))) {
        return absl::InvalidArgumentError(absl::StrCat("file tree blob ", next.digest.hash(), " ('",
                                                       next.prefix.substr(0, 200),
                                                       "') does not parse as a farm.v1.FileTree"));
      }
      known = parsed.emplace(next.digest.hash(), std::move(tree)).first;
    }
    const farm::v1::FileTree& part = known->second;
    if (part.files_size() == 0 && !next.prefix.empty()) {
      // An empty subtree is an empty directory.
      farm::v1::InputFile* dir = flat.add_files();
      dir->set_path(next.prefix.substr(0, next.prefix.size() - 1));
      dir->set_directory(true);
    }
    for (const farm::v1::InputFile& entry : part.files()) {
      if (++entries > kMaxFileTreeEntries) {
        return absl::InvalidArgumentError(
            absl::StrCat("file tree of more than ", kMaxFileTreeEntries,
                         " entries, its subtrees counted; the limit is ", kMaxFileTreeEntries));
      }
      if (entry.path().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("file tree blob ", next.digest.hash(), " has an entry without a path"));
      }
      std::string path = next.prefix + entry.path();
      // Checked now, not only with the whole tree: a long name under a blob named many times
      // would otherwise be copied into every entry below it.
      if (path.size() > kMaxTreePathBytes) {
        return absl::InvalidArgumentError(absl::StrCat("file tree entry '", path.substr(0, 200),
                                                       "...' is longer than ", kMaxTreePathBytes,
                                                       " bytes"));
      }
      if (!IsSubtree(entry)) {
        farm::v1::InputFile* placed = flat.add_files();
        *placed = entry;
        placed->set_path(std::move(path));
        continue;
      }
      if (!entry.symlink_target().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("file tree entry '", path.substr(0, 200), "' is a link and a subtree"));
      }
      if (next.depth + 1 > kMaxSubtreeDepth) {
        return absl::InvalidArgumentError(absl::StrCat("file tree subtrees nest deeper than ",
                                                       kMaxSubtreeDepth, " at '",
                                                       path.substr(0, 200), "'"));
      }
      expanded = true;
      pending.push_back({absl::StrCat(path, "/"), entry.digest(), next.depth + 1});
    }
  }
  if (expanded) {
    std::sort(flat.mutable_files()->begin(), flat.mutable_files()->end(),
              [](const farm::v1::InputFile& a, const farm::v1::InputFile& b) {
                return a.path() < b.path();
              });
  }
  if (absl::Status s = ValidateFileTree(flat); !s.ok()) return s;
  return flat;
}

}  // namespace farm
