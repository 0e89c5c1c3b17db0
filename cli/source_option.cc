#include "cli/source_option.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/digest/digest.h"
#include "libfarm/recipes/recipe.h"
#include "libfarm/recipes/source_archive_name.h"

namespace farm::cli {
namespace {

namespace fs = std::filesystem;

bool IsRecipeName(absl::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

bool IsSha256(absl::string_view hex) {
  return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
           return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

// Whether `path` is a directory (false: an archive file); errors name the value and the fix.
absl::StatusOr<bool> IsTree(const std::string& value, const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return absl::NotFoundError(absl::StrCat(
        "--source ", value, ": ", path,
        " does not exist. Nothing was submitted. Fix: give a directory (the package's tree) or "
        "a source archive file (.tar.gz)"));
  }
  if (fs::is_directory(st)) return true;
  if (!fs::is_regular_file(st)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--source ", value, ": ", path,
                     " is neither a directory nor a file. Nothing was submitted. Fix: give a "
                     "directory or a source archive file"));
  }
  if (absl::Status s = CheckSourceArchiveName(fs::path(path).filename().string()); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--source ", value, ": ", s.message(),
                     ". Nothing was submitted. Fix: give the package's directory, or its release "
                     "archive as a .tar.gz (.tgz, .tar.xz, .txz, .tar.bz2, .tbz2)"));
  }
  return false;
}

}  // namespace

SourceArg ParseSourceArg(const std::string& value) {
  const size_t eq = value.find('=');
  std::error_code ec;
  if (eq != std::string::npos && IsRecipeName(value.substr(0, eq)) && !fs::exists(value, ec)) {
    return {.recipe = value.substr(0, eq), .path = value.substr(eq + 1)};
  }
  return {.path = value};
}

absl::StatusOr<std::vector<SourceArg>> ClassifySources(const std::vector<std::string>& values,
                                                       const std::vector<std::string>& refs) {
  std::vector<std::string> names;
  for (const std::string& ref : refs) {
    if (auto parsed = ParseRecipeRef(ref); parsed.ok()) names.push_back(parsed->name);
  }
  const std::string packages = absl::StrJoin(names, ", ");
  std::vector<SourceArg> out;
  std::set<std::string> seen;
  for (const std::string& value : values) {
    SourceArg arg = ParseSourceArg(value);
    if (arg.recipe.empty()) {
      if (refs.size() != 1 || values.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--source ", value, " names no package, and this submit has ",
            refs.size() != 1 ? absl::StrCat(refs.size(), " packages") : "several --source",
            ". Nothing was submitted. Fix: --source NAME=PATH for each, NAME one of ",
            packages.empty() ? "the recipes submitted" : packages));
      }
      if (!names.empty()) arg.recipe = names.front();
    } else if (std::find(names.begin(), names.end(), arg.recipe) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--source ", value, ": '", arg.recipe, "' is not a package of this submit (",
          packages.empty() ? "none" : packages,
          "). Nothing was submitted. Fix: NAME=PATH with NAME one of those recipe names"));
    }
    if (!arg.recipe.empty() && !seen.insert(arg.recipe).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--source names '", arg.recipe,
                       "' twice; each package builds one source. Nothing was submitted. Fix: "
                       "give one --source ",
                       arg.recipe, "=PATH"));
    }
    if (arg.path.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--source ", value, " gives no path. Nothing was submitted. Fix: --source NAME=PATH"));
    }
    auto tree = IsTree(value, arg.path);
    if (!tree.ok()) return tree.status();
    arg.archive = !*tree;
    out.push_back(std::move(arg));
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> ParseSha256Sums(const std::string& text) {
  std::map<std::string, std::string> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripTrailingAsciiWhitespace(line);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    // "HEX  NAME" (text mode) or "HEX *NAME" (binary mode): 64 hex digits, a space, a mode
    // character, the name as written.
    const std::string hex = absl::AsciiStrToLower(line.substr(0, 64));
    if (line.size() < 67 || !IsSha256(hex) || line[64] != ' ' ||
        (line[65] != ' ' && line[65] != '*')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", line_number, " is not sha256sum's \"HEX  NAME\": ", absl::CHexEscape(line)));
    }
    absl::string_view name = line.substr(66);
    absl::ConsumePrefix(&name, "./");
    out[std::string(name)] = hex;
  }
  return out;
}

absl::StatusOr<std::optional<std::string>> ListedSha256(const std::string& archive) {
  const fs::path sums = fs::path(archive).parent_path() / "SHA256SUMS";
  std::error_code ec;
  if (!fs::is_regular_file(sums, ec)) return std::nullopt;
  std::ifstream in(sums, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read ", sums.string(), ". Nothing was submitted. Fix: make it readable"));
  }
  auto parsed = ParseSha256Sums(text.str());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(sums.string(), ": ", parsed.status().message(),
                     ". Nothing was submitted. Fix: write it with sha256sum, or remove it"));
  }
  const auto it = parsed->find(fs::path(archive).filename().string());
  if (it == parsed->end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::string> CheckArchiveAgainstSums(const std::string& archive, bool* listed) {
  auto expected = ListedSha256(archive);
  if (!expected.ok()) return expected.status();
  auto digest = DigestOfFile(archive);
  if (!digest.ok()) {
    return absl::Status(digest.status().code(),
                        absl::StrCat("reading ", archive, ": ", digest.status().message()));
  }
  *listed = expected->has_value();
  if (*listed && **expected != digest->hash()) {
    const fs::path sums = fs::path(archive).parent_path() / "SHA256SUMS";
    return absl::FailedPreconditionError(absl::StrCat(
        "the archive ", archive, " has sha256 ", digest->hash(), ", but ", sums.string(), " lists ",
        **expected,
        " for it: refused, nothing was submitted. Fix: fetch the archive "
        "again (it is not the one SHA256SUMS names), or correct SHA256SUMS if this archive is "
        "the one to build"));
  }
  return digest->hash();
}

}  // namespace farm::cli
