#include "libfarm/cc/base_dir.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;

// Options whose value follows their letters in the same word. Longest first: "-isystem"
// before "-I" would not matter, "-include" before "-imacros" neither, but "-MF" vs "-M" does.
constexpr absl::string_view kJoinedPathOptions[] = {"-iwithprefixbefore",
                                                    "-iwithprefix",
                                                    "-idirafter",
                                                    "-isysroot",
                                                    "-isystem",
                                                    "-imacros",
                                                    "-include",
                                                    "-iprefix",
                                                    "-iquote",
                                                    "-MF",
                                                    "-MT",
                                                    "-MQ",
                                                    "-I",
                                                    "-L",
                                                    "-B",
                                                    "-o"};

bool IsPathChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '+' || c == '~' || c == '-' || c == '/';
}

absl::Status Refuse(absl::string_view word, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("'", word, "' ", why));
}

// Where a path may start in `word`: its first character, after a joined option's letters,
// after each '=' and ':'.
std::set<size_t> PathStarts(absl::string_view word) {
  std::set<size_t> starts = {0};
  for (absl::string_view option : kJoinedPathOptions) {
    if (absl::StartsWith(word, option)) {
      starts.insert(option.size());
      break;
    }
  }
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '=' || word[i] == ':') starts.insert(i + 1);
  }
  return starts;
}

// The path starting at `start`: up to the next '=' or ':'.
absl::string_view PathAt(absl::string_view word, size_t start) {
  const size_t end = word.find_first_of("=:", start);
  return word.substr(start, end == absl::string_view::npos ? word.npos : end - start);
}

// Every occurrence of `from` in `text` that is a whole path prefix (no path character
// before it, none but '/' after it) becomes `to`.
std::string ReplacePathPrefixes(absl::string_view text, absl::string_view from,
                                absl::string_view to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t at = text.find(from, pos);
    if (at == absl::string_view::npos) break;
    const size_t end = at + from.size();
    const bool starts = at == 0 || !IsPathChar(text[at - 1]);
    const bool ends = end == text.size() || text[end] == '/' || !IsPathChar(text[end]);
    absl::StrAppend(&out, text.substr(pos, at - pos), starts && ends ? to : from);
    pos = end;
  }
  absl::StrAppend(&out, text.substr(pos));
  return out;
}

std::string Widened(absl::string_view text, size_t width) {
  std::string out;
  for (char c : text) {
    out += c;
    out.append(width - 1, '\0');
  }
  return out;
}

}  // namespace

absl::StatusOr<BaseDir> BaseDir::Create(const std::string& path) {
  const auto fix =
      " Fix: set FARM_CC_BASEDIR to the absolute directory that holds the "
      "sources and the build tree (e.g. the checkout), or unset it.";
  if (path.empty() || path[0] != '/' || fs::path(path).lexically_normal().string() != path ||
      path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("FARM_CC_BASEDIR '", path, "' is not an absolute normal path.", fix));
  }
  if (!std::all_of(path.begin(), path.end(), IsPathChar)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FARM_CC_BASEDIR '", path,
        "' holds a character a dependency file would escape (only A-Z a-z 0-9 . _ + ~ - /).", fix));
  }
  return BaseDir(path);
}

bool BaseDir::Holds(absl::string_view path) const {
  return path == path_ ||
         (absl::StartsWith(path, path_) && path.size() > path_.size() && path[path_.size()] == '/');
}

std::string BaseDir::ToStandIn(absl::string_view path) const {
  if (!Holds(path)) return std::string(path);
  return absl::StrCat(kBaseDirStandIn, path.substr(path_.size()));
}

std::string BaseDir::FromStandIn(absl::string_view path) const {
  const absl::string_view stand_in = kBaseDirStandIn;
  if (path != stand_in && !absl::StartsWith(path, absl::StrCat(stand_in, "/"))) {
    return std::string(path);
  }
  return absl::StrCat(path_, path.substr(stand_in.size()));
}

absl::StatusOr<std::string> BaseDir::ToStandInWord(absl::string_view word) const {
  const std::set<size_t> starts = PathStarts(word);
  if (absl::StrContains(word, path_) && absl::StartsWith(word, "-D")) {
    return Refuse(word, "defines a macro that names FARM_CC_BASEDIR");
  }
  // A '..' leads through directories by name: from under the base dir it may lead out.
  for (size_t start : starts) {
    const absl::string_view path = PathAt(word, start);
    // "-I/usr/x/../y": the path is the part after the option's letters.
    if (starts.upper_bound(start) != starts.end() &&
        *starts.upper_bound(start) <= start + path.size()) {
      continue;
    }
    const fs::path p{std::string(path)};
    if (std::find(p.begin(), p.end(), fs::path("..")) == p.end()) continue;
    if (path.empty() || path[0] != '/' || Holds(path) || Holds(p.lexically_normal().string())) {
      return Refuse(word, "names a path through '..' that may lead out of FARM_CC_BASEDIR");
    }
  }
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t at = word.find(path_, pos);
    if (at == absl::string_view::npos) break;
    const size_t end = at + path_.size();
    // "/home/u/srcx" and "x/home/u/src" are other names, not the base dir.
    if ((at > 0 && IsPathChar(word[at - 1]) && starts.count(at) == 0) ||
        (end < word.size() && word[end] != '/' && IsPathChar(word[end]))) {
      absl::StrAppend(&out, word.substr(pos, end - pos));
      pos = end;
      continue;
    }
    if (starts.count(at) == 0) {
      return Refuse(word, "names FARM_CC_BASEDIR where farm-cc cannot tell it is a path");
    }
    absl::StrAppend(&out, word.substr(pos, at - pos), kBaseDirStandIn);
    pos = end;
  }
  absl::StrAppend(&out, word.substr(pos));
  return out;
}

absl::StatusOr<farm::v1::FileTree> BaseDir::ToStandInTree(const farm::v1::FileTree& tree) const {
  const std::string stand_in = kBaseDirStandIn;
  auto collides = [&](absl::string_view path) {
    return !Holds(path) &&
           (path == stand_in || absl::StartsWith(path, absl::StrCat(stand_in, "/")));
  };
  farm::v1::FileTree out = tree;
  for (farm::v1::InputFile& f : *out.mutable_files()) {
    const std::string full = "/" + f.path();
    if (collides(full)) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", full, "' lies where farm-cc puts FARM_CC_BASEDIR's stand-in"));
    }
    const std::string mapped = ToStandIn(full);
    const std::string& target = f.symlink_target();
    if (!target.empty()) {
      if (target[0] == '/') {
        if (collides(target)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the link '", full, "' points where farm-cc puts FARM_CC_BASEDIR's stand-in"));
        }
        f.set_symlink_target(ToStandIn(target));
      } else {
        const std::string resolved =
            (fs::path(full).parent_path() / target).lexically_normal().string();
        const std::string resolved_mapped =
            (fs::path(mapped).parent_path() / target).lexically_normal().string();
        if (resolved_mapped != ToStandIn(resolved)) {
          return absl::FailedPreconditionError(absl::StrCat("the link '", full, "' -> '", target,
                                                            "' crosses FARM_CC_BASEDIR's edge"));
        }
      }
    }
    f.set_path(mapped.substr(1));
  }
  return out;
}

std::string BaseDir::TextToStandIn(absl::string_view text) const {
  return ReplacePathPrefixes(text, path_, kBaseDirStandIn);
}

std::string BaseDir::TextFromStandIn(absl::string_view text) const {
  return ReplacePathPrefixes(text, kBaseDirStandIn, path_);
}

bool BaseDir::IsNamedIn(absl::string_view bytes) const {
  for (size_t width : {1, 2, 4}) {
    if (absl::StrContains(bytes, width == 1 ? path_ : Widened(path_, width))) return true;
  }
  return false;
}

}  // namespace farm::cc
