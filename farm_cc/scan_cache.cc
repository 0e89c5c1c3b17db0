#include "farm_cc/scan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/digest/digest.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/logging/logger.h"

namespace farm {
namespace {

constexpr uint64_t kDirectories = 256;  // by the key's first byte

// The first line of an entry; changes when what an entry means changes.
constexpr char kEntryVersion[] = "farm-cc scan v1";

}  // namespace

void PruneScanCacheDirectory(const std::string& entry_path, uint64_t max_bytes) {
  const std::filesystem::path dir = std::filesystem::path(entry_path).parent_path();
  const uint64_t budget = max_bytes / kDirectories;
  struct Entry {
    std::filesystem::file_time_type used;
    uint64_t size;
    std::filesystem::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!ValidateHash(it->path().filename().string()).ok()) continue;
    std::error_code stat_error;
    const uint64_t size = it->file_size(stat_error);
    const auto used = it->last_write_time(stat_error);
    if (stat_error) continue;
    entries.push_back({used, size, it->path()});
    total += size;
  }
  if (total <= budget) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= budget / 4 * 3) break;
    if (std::filesystem::remove(e.path, ec)) total -= e.size;
  }
}

std::optional<ScanCache> ScanCache::ForCall(const std::string& cache_dir,
                                            const std::optional<cc::BaseDir>& base_dir,
                                            const farm::v1::Digest& toolchain_digest,
                                            const CcInvocation& call,
                                            const std::map<std::string, std::string>& action_env,
                                            const std::string& cwd) {
  std::optional<cc::BaseDir> base;
  if (base_dir && base_dir->Holds(cwd)) base = *base_dir;
  Sha256 hash;
  auto add = [&hash](absl::string_view word) { hash.UpdateWord(word); };
  auto add_word = [&](absl::string_view word) -> bool {
    if (!base) {
      add(word);
      return true;
    }
    auto mapped = base->ToStandInWord(word);
    if (!mapped.ok()) {
      ComponentLogger("farm-cc")->debug("no scan cache: {}", mapped.status().message());
      return false;
    }
    add(*mapped);
    return true;
  };
  add(kEntryVersion);
  add(toolchain_digest.hash());
  if (!add_word(call.compiler)) return std::nullopt;
  add(absl::StrCat(call.args.size()));
  for (const std::string& arg : call.args) {
    if (!add_word(arg)) return std::nullopt;
  }
  add(base ? base->ToStandIn(cwd) : cwd);
  for (const auto& [name, value] : action_env) {
    add(name);
    if (!add_word(value)) return std::nullopt;
  }
  const std::string key = hash.FinishHex();
  return ScanCache(std::move(base), absl::StrCat(cache_dir, "/scans/", key.substr(0, 2), "/", key));
}

std::string ScanCache::TreeKey(const CompileInputs& inputs) const {
  if (!base_dir_) return inputs.digest.hash();
  auto tree = base_dir_->ToStandInTree(inputs.tree);
  return tree.ok() ? FileTreeDigest(*tree).hash() : "";
}

std::optional<ScanCache::KeptScan> ScanCache::Find() const {
  auto text = ReadFileContents(path_);
  if (!text.ok()) return std::nullopt;
  // Used now: the last to go when its directory is pruned.
  ::utimensat(AT_FDCWD, path_.c_str(), nullptr, 0);
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  if (lines.size() < 2 || lines[0] != kEntryVersion || !absl::StartsWith(lines[1], "tree ")) {
    ComponentLogger("farm-cc")->warn("scan cache entry {} is not one: ignored", path_);
    return std::nullopt;
  }
  auto here = [this](absl::string_view path) {
    return base_dir_ && absl::StartsWith(path, cc::kBaseDirStandIn) ? base_dir_->FromStandIn(path)
                                                                    : std::string(path);
  };
  KeptScan kept;
  kept.tree_key = lines[1].substr(5);
  for (size_t i = 2; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    if (absl::StartsWith(line, "search ")) {
      kept.scan.search_dirs.push_back(here(line.substr(7)));
    } else if (absl::StartsWith(line, "file ")) {
      kept.scan.files.push_back(here(line.substr(5)));
    } else {
      ComponentLogger("farm-cc")->warn("scan cache entry {} is not one: ignored", path_);
      return std::nullopt;
    }
  }
  if (kept.scan.files.empty() || kept.scan.search_dirs.empty()) return std::nullopt;
  return kept;
}

bool ScanCache::Holds(const KeptScan& kept, const CompileInputs& inputs) const {
  return !kept.tree_key.empty() && TreeKey(inputs) == kept.tree_key;
}

absl::Status ScanCache::Keep(const cc::DependencyScan& scan, const CompileInputs& inputs,
                             uint64_t max_bytes) const {
  if (scan.search_dirs.empty()) return absl::OkStatus();  // nothing to check new headers by
  const std::string tree_key = TreeKey(inputs);
  if (tree_key.empty()) return absl::OkStatus();
  std::string text = absl::StrCat(kEntryVersion, "\ntree ", tree_key, "\n");
  auto add = [&](absl::string_view kind, const std::string& path) {
    if (path.empty() || absl::StrContains(path, '\n')) return false;
    const bool held = base_dir_ && path[0] == '/' && base_dir_->Holds(path);
    // A path of this host that reads as the stand-in would come back as another one.
    if (!held && absl::StartsWith(path, cc::kBaseDirStandIn)) return false;
    absl::StrAppend(&text, kind, " ", held ? base_dir_->ToStandIn(path) : path, "\n");
    return true;
  };
  for (const std::string& dir : scan.search_dirs) {
    if (!add("search", dir)) return absl::OkStatus();
  }
  for (const std::string& file : scan.files) {
    if (!add("file", file)) return absl::OkStatus();
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the scan cache's directory for ", path_, ": ", ec.message(),
                     ". Fix: point FARM_CC_CACHE_DIR at a writable directory"));
  }
  if (absl::Status s = WriteFileAtomically(path_, text); !s.ok()) return s;
  PruneScanCacheDirectory(path_, max_bytes);
  return absl::OkStatus();
}

}  // namespace farm
