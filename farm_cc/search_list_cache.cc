#include "farm_cc/search_list_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "farm_cc/scan_cache.h"
#include "libfarm/cc/dependency_scan.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/logging/logger.h"

namespace farm {
namespace {

// The first line of an entry; changes when what an entry means changes.
constexpr char kEntryVersion[] = "farm-cc search list v1";

std::string EntryPath(const std::string& cache_dir, const farm::v1::Digest& toolchain_digest,
                      const CcInvocation& call, const cc::CcCompilePlan& plan,
                      const std::map<std::string, std::string>& action_env,
                      const std::string& cwd) {
  Sha256 hash;
  auto add = [&hash](absl::string_view word) { hash.UpdateWord(word); };
  add(kEntryVersion);
  add(toolchain_digest.hash());
  add(call.compiler);
  add(std::filesystem::path(plan.source).extension().string());
  add(absl::StrCat(plan.scan_base_args.size()));
  for (const std::string& arg : plan.scan_base_args) add(arg == plan.source ? "" : arg);
  add(cwd);
  for (const auto& [name, value] : action_env) {
    add(name);
    add(value);
  }
  const std::string key = hash.FinishHex();
  return absl::StrCat(cache_dir, "/scans/", key.substr(0, 2), "/", key);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> CachedIncludeSearchList(
    const std::string& cache_dir, uint64_t max_bytes, const farm::v1::Digest& toolchain_digest,
    const CcInvocation& call, const cc::CcCompilePlan& plan,
    const std::map<std::string, std::string>& action_env, const std::string& cwd) {
  const std::string path = EntryPath(cache_dir, toolchain_digest, call, plan, action_env, cwd);
  if (auto text = ReadFileContents(path); text.ok()) {
    std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
    std::vector<std::string> dirs;
    for (size_t i = 1; i < lines.size() && absl::StartsWith(lines[i], "search "); ++i) {
      dirs.push_back(lines[i].substr(7));
    }
    if (!lines.empty() && lines[0] == kEntryVersion && dirs.size() + 1 == lines.size() &&
        !dirs.empty()) {
      ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: the last to be pruned
      return dirs;
    }
    ComponentLogger("farm-cc")->warn("search list entry {} is not one: asking the compiler", path);
  }
  auto dirs = cc::QueryIncludeSearchList(call.compiler, plan, cwd);
  if (!dirs.ok()) return dirs.status();
  std::string text = absl::StrCat(kEntryVersion, "\n");
  for (const std::string& dir : *dirs) {
    if (absl::StrContains(dir, '\n')) return dirs;  // not a line: asked again next time
    absl::StrAppend(&text, "search ", dir, "\n");
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  absl::Status kept =
      ec ? absl::FailedPreconditionError(ec.message()) : WriteFileAtomically(path, text);
  if (!kept.ok()) {
    ComponentLogger("farm-cc")->warn("search list not kept in {}: {}", path, kept.message());
  }
  PruneScanCacheDirectory(path, max_bytes);
  return dirs;
}

}  // namespace farm
