#include "libfarm/file_tree/file_tree.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/relative_path.h"

namespace farm {
namespace {

constexpr size_t kMaxLinkTargetBytes = 4096;

bool IsLink(const farm::v1::InputFile& entry) { return !entry.symlink_target().empty(); }

}  // namespace

absl::Status CheckNotBelowLink(const std::string& path, const std::set<std::string>& links) {
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string parent = path.substr(0, slash);
    if (links.count(parent) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("file tree entry '", path, "' lies below the link '", parent, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateFileTree(const farm::v1::FileTree& tree) {
  if (tree.files_size() > kMaxFileTreeEntries) {
    return absl::InvalidArgumentError(absl::StrCat("file tree of ", tree.files_size(),
                                                   " entries; the limit is ", kMaxFileTreeEntries));
  }
  std::set<std::string> paths;
  std::set<std::string> links;
  for (const farm::v1::InputFile& entry : tree.files()) {
    if (absl::Status s = ValidateRelativePath(entry.path()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("file tree entry: ", s.message()));
    }
    if (entry.path() == "proc" || entry.path() == "dev" ||
        absl::StartsWith(entry.path(), "proc/") || absl::StartsWith(entry.path(), "dev/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("file tree entry '", entry.path(), "' is under /proc or /dev"));
    }
    if (!paths.insert(entry.path()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("file tree entry '", entry.path(), "' appears twice"));
    }
    if (entry.directory()) {
      if (IsLink(entry) || !entry.digest().hash().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "file tree entry '", entry.path(), "' is a directory and a file or link at once"));
      }
    } else if (IsLink(entry)) {
      if (entry.symlink_target().size() > kMaxLinkTargetBytes ||
          entry.symlink_target().find('\0') != std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("file tree link '", entry.path(), "' has a malformed target"));
      }
      links.insert(entry.path());
    } else if (absl::Status s = ValidateDigest(entry.digest()); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("file tree entry '", entry.path(), "': ", s.message()));
    }
  }
  for (const std::string& path : paths) {
    if (absl::Status s = CheckNotBelowLink(path, links); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveFileInTree(const farm::v1::FileTree& tree,
                                              const std::string& path) {
  constexpr int kMaxLinks = 40;  // the kernel's limit
  std::map<std::string, const farm::v1::InputFile*> by_path;
  for (const farm::v1::InputFile& entry : tree.files()) by_path[entry.path()] = &entry;
  auto not_found = [&] {
    return absl::NotFoundError(absl::StrCat("'", path.substr(0, 200), "' is no file of the tree"));
  };
  std::string remaining = std::filesystem::path(path).lexically_normal().string();
  for (int links = 0; links <= kMaxLinks; ++links) {
    if (remaining.empty() || remaining[0] != '/') return not_found();
    // Walk from the root until a link: its target replaces what was walked through it.
    std::string walked;
    bool restarted = false;
    size_t start = 1;
    while (start <= remaining.size()) {
      size_t slash = remaining.find('/', start);
      if (slash == std::string::npos) slash = remaining.size();
      const std::string component = remaining.substr(start, slash - start);
      start = slash + 1;
      if (component.empty()) continue;
      walked = walked.empty() ? component : absl::StrCat(walked, "/", component);
      auto it = by_path.find(walked);
      if (it == by_path.end()) {
        if (slash == remaining.size()) return not_found();
        continue;  // a directory that only holds entries
      }
      const farm::v1::InputFile& entry = *it->second;
      const std::string rest = slash < remaining.size() ? remaining.substr(slash) : "";
      if (IsLink(entry)) {
        const std::string& target = entry.symlink_target();
        const std::string base = target[0] == '/'
                                     ? target
                                     : (std::filesystem::path("/") /
                                        std::filesystem::path(walked).parent_path() / target)
                                           .string();
        remaining = std::filesystem::path(base + rest).lexically_normal().string();
        restarted = true;
        break;
      }
      if (entry.directory()) continue;
      return rest.empty() ? absl::StatusOr<std::string>(walked) : not_found();
    }
    if (!restarted) return not_found();
  }
  return absl::NotFoundError(absl::StrCat("'", path.substr(0, 200), "': too many links"));
}

std::string SerializeFileTree(const farm::v1::FileTree& tree) {
  farm::v1::FileTree sorted = tree;
  std::sort(sorted.mutable_files()->begin(), sorted.mutable_files()->end(),
            [](const farm::v1::InputFile& a, const farm::v1::InputFile& b) {
              return a.path() < b.path();
            });
  return DeterministicBytes(sorted);
}

farm::v1::Digest FileTreeDigest(const farm::v1::FileTree& tree) {
  return DigestOfBytes(SerializeFileTree(tree));
}

}  // namespace farm
