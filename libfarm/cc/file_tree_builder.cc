#include "libfarm/cc/file_tree_builder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libfarm/cc/source_text_checks.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/file_contents.h"

namespace farm::cc {
namespace {

// Linux's limit on links followed while resolving one path (MAXSYMLINKS).
constexpr int kMaxSymlinks = 40;

std::string Join(const std::vector<std::string>& components) {
  return absl::StrJoin(components, "/");
}

std::deque<std::string> Components(absl::string_view path) {
  std::deque<std::string> components;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    components.emplace_back(part);
  }
  return components;
}

absl::StatusOr<std::string> ReadLink(const std::string& path) {
  std::string target(4096, '\0');
  ssize_t size = readlink(path.c_str(), target.data(), target.size());
  if (size < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the symlink ", path, ": ", strerror(errno)));
  }
  target.resize(size);
  return target;
}

bool IsElf(absl::string_view bytes) {
  return absl::StartsWith(bytes,
                          "\x7f"
                          "ELF");
}

}  // namespace

absl::Status FileTreeBuilder::Add(const std::string& path, const std::string& cwd) {
  if (path.empty()) return absl::InvalidArgumentError("an empty path");
  if (path[0] != '/' && (cwd.empty() || cwd[0] != '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "relative path ", path, " needs an absolute working directory, not '", cwd, "'"));
  }
  const std::string absolute_path = path[0] == '/' ? path : cwd + "/" + path;
  std::deque<std::string> pending = Components(absolute_path);
  std::vector<std::string> resolved;  // the real directories walked so far
  int links_followed = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (!resolved.empty()) {
        left_by_parent_.insert(Join(resolved));
        resolved.pop_back();
      }
      continue;
    }
    resolved.push_back(name);
    std::string candidate = Join(resolved);
    bool last = pending.empty();

    const Entry* known = nullptr;
    if (auto it = entries_.find(candidate); it != entries_.end()) known = &it->second;
    if (known == nullptr && directories_.count(candidate) == 0) {
      struct stat info;
      std::string absolute = "/" + candidate;
      if (lstat(absolute.c_str(), &info) != 0) {
        int error = errno;
        if (error == ENOENT) {
          return absl::NotFoundError(
              absl::StrCat(path, ": ", absolute, " does not exist (resolved from ", cwd, ")"));
        }
        return absl::FailedPreconditionError(
            absl::StrCat(path, ": cannot stat ", absolute, ": ", strerror(error)));
      }
      if (S_ISLNK(info.st_mode)) {
        absl::StatusOr<std::string> target = ReadLink(absolute);
        if (!target.ok()) return target.status();
        known = &(entries_[candidate] = Entry{.symlink_target = *target});
      } else if (S_ISDIR(info.st_mode)) {
        directories_.insert(candidate);
      } else if (S_ISREG(info.st_mode)) {
        if (!last) {
          return absl::FailedPreconditionError(
              absl::StrCat(path, ": ", absolute, " is a file, not a directory"));
        }
        return AddFile(candidate, absolute_path.substr(0, absolute_path.rfind('/')), info);
      } else {
        return absl::FailedPreconditionError(
            absl::StrCat(path, ": ", absolute, " is not a regular file"));
      }
    }
    if (known != nullptr && !known->symlink_target.empty()) {
      if (++links_followed > kMaxSymlinks) {
        return absl::FailedPreconditionError(
            absl::StrCat(path, ": too many levels of symbolic links (a loop?)"));
      }
      resolved.pop_back();
      std::deque<std::string> target = Components(known->symlink_target);
      if (absl::StartsWith(known->symlink_target, "/")) resolved.clear();
      pending.insert(pending.begin(), target.begin(), target.end());
      continue;
    }
    if (known != nullptr) {  // a file added before
      if (!last) {
        return absl::FailedPreconditionError(
            absl::StrCat(path, ": /", candidate, " is a file, not a directory"));
      }
      return absl::OkStatus();
    }
    if (last) {  // a directory
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": /", candidate, " is a directory, not a file"));
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(path, ": resolves to '/', not a file"));
}

absl::StatusOr<FileFacts> FileTreeBuilder::ReadFacts(const std::string& absolute,
                                                     const struct stat& info) {
  if (facts_ != nullptr) {
    if (const FileFacts* known = facts_->Find(absolute, info)) return *known;
  }
  struct stat opened {};
  absl::StatusOr<absl::string_view> bytes = ReadFileContentsInto(absolute, read_buffer_, &opened);
  if (!bytes.ok()) return bytes.status();
  FileFacts facts;
  facts.digest = DigestOfBytes(*bytes);
  facts.elf = IsElf(*bytes);
  if (!facts.elf) {
    facts.mentions_time_macros = MentionsTimeMacros(*bytes);
    facts.names = IncludedNames(*bytes, &facts.unread_include);
  }
  if (facts_ != nullptr) {
    facts_->Remember(absolute, opened, facts, absl::ToUnixNanos(absl::Now()));
  }
  return facts;
}

absl::Status FileTreeBuilder::AddFile(const std::string& relative_path,
                                      const std::string& spelled_directory,
                                      const struct stat& info) {
  const std::string absolute = "/" + relative_path;
  absl::StatusOr<FileFacts> facts = ReadFacts(absolute, info);
  if (!facts.ok()) return facts.status();
  Entry entry;
  entry.digest = std::move(facts->digest);
  entry.executable = (info.st_mode & 0111) != 0;
  if (!facts->elf) {
    mentions_time_macros_ = mentions_time_macros_ || facts->mentions_time_macros;
    if (facts->unread_include && first_unread_include_file_.empty()) {
      first_unread_include_file_ = absolute;
    }
    if (!facts->names.empty()) {
      include_sites_.push_back(
          {spelled_directory.empty() ? "/" : spelled_directory, std::move(facts->names)});
    }
  }
  entries_[relative_path] = std::move(entry);
  return absl::OkStatus();
}

farm::v1::FileTree FileTreeBuilder::Tree() const {
  farm::v1::FileTree tree;
  for (const auto& [path, entry] : entries_) {  // std::map: sorted by path
    farm::v1::InputFile* file = tree.add_files();
    file->set_path(path);
    if (!entry.symlink_target.empty()) {
      file->set_symlink_target(entry.symlink_target);
    } else {
      *file->mutable_digest() = entry.digest;
      file->set_executable(entry.executable);
    }
  }
  return tree;
}

std::vector<std::pair<std::string, farm::v1::Digest>> FileTreeBuilder::FilesToUpload() const {
  std::vector<std::pair<std::string, farm::v1::Digest>> files;
  for (const auto& [path, entry] : entries_) {
    if (entry.symlink_target.empty()) files.emplace_back("/" + path, entry.digest);
  }
  return files;
}

std::set<std::string> FileTreeBuilder::Directories() const {
  std::set<std::string> directories;
  for (const auto& [path, entry] : entries_) {
    std::string dir = "/" + path;
    while (true) {
      dir.resize(dir.rfind('/'));
      std::string shown = dir.empty() ? "/" : dir;
      if (!directories.insert(shown).second || dir.empty()) break;
    }
  }
  return directories;
}

std::vector<std::string> FileTreeBuilder::DirectoriesWithoutEntries() const {
  std::vector<std::string> missing;
  for (const std::string& dir : left_by_parent_) {
    auto below = entries_.lower_bound(dir + "/");
    bool has_entry = below != entries_.end() && absl::StartsWith(below->first, dir + "/");
    if (!has_entry && entries_.count(dir) == 0) missing.push_back("/" + dir);
  }
  return missing;
}

}  // namespace farm::cc
