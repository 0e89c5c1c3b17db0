#include "libfarm/host/shared_libraries.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// ldconfig's flag for 64-bit libraries of each CPU arch; "" keeps every entry.
absl::string_view LdconfigArchTag(absl::string_view cpu_arch) {
  if (cpu_arch == "x86_64") return "x86-64";
  if (cpu_arch == "aarch64") return "AArch64";
  return "";
}

}  // namespace

bool IsSoname(absl::string_view name) {
  if (name.empty() || name.size() > 255 || !absl::ascii_isalnum(name[0])) return false;
  if (!std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+';
      })) {
    return false;
  }
  const size_t so = name.find(".so");
  if (so == absl::string_view::npos) return false;
  // After ".so": nothing, or ".N" components ("libcudnn.so.9", "libstdc++.so.6.0.30").
  const absl::string_view version = name.substr(so + 3);
  if (version.empty()) return true;
  if (version[0] != '.') return false;
  for (absl::string_view part : absl::StrSplit(version.substr(1), '.')) {
    uint32_t n = 0;
    if (part.empty() || !absl::SimpleAtoi(part, &n)) return false;
  }
  return true;
}

std::vector<std::string> ParseLdconfigCache(absl::string_view output, absl::string_view cpu_arch) {
  const absl::string_view tag = LdconfigArchTag(cpu_arch);
  std::vector<std::string> names;
  // "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1"; the first line counts them.
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    const size_t open = line.find(" (");
    const size_t close = line.find(") => ");
    if (open == absl::string_view::npos || close == absl::string_view::npos || close < open) {
      continue;
    }
    const absl::string_view name = line.substr(0, open);
    const absl::string_view flags = line.substr(open + 2, close - open - 2);
    if (!tag.empty() && !absl::StrContains(flags, tag)) continue;
    if (IsSoname(name)) names.emplace_back(name);
  }
  return names;
}

std::vector<std::string> SharedLibrariesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (IsSoname(name) && absl::StartsWith(name, "lib")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> DetectSharedLibraries(absl::string_view cpu_arch,
                                               const std::vector<std::string>& toolkit_roots) {
  auto log = ComponentLogger("worker");
  std::set<std::string> names;
  bool listed = false;
  // Not always on an unprivileged PATH (Debian keeps it in /sbin).
  for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"}) {
    if (absl::StartsWith(ldconfig, "/") && !fs::exists(ldconfig)) continue;
    auto r = RunCommand({ldconfig, "-p"}, absl::Seconds(20));
    if (!r.ok() || r->exit_code != 0) continue;
    for (std::string& n : ParseLdconfigCache(r->stdout_text, cpu_arch)) names.insert(std::move(n));
    listed = true;
    break;
  }
  if (!listed) {
    log->warn(
        "cannot list the dynamic loader's libraries (ldconfig -p): recipes' host_library "
        "prerequisites will find none on this worker. Fix: install libc-bin");
  }
  for (const std::string& root : toolkit_roots) {
    for (const char* lib : {"/lib64", "/lib"}) {
      for (std::string& n : SharedLibrariesIn(root + lib)) names.insert(std::move(n));
    }
  }
  std::vector<std::string> out(names.begin(), names.end());
  if (out.size() > kMaxAdvertisedLibraries) {
    log->warn(
        "advertising the first {} of {} shared libraries (sorted by name); the others "
        "cannot satisfy host_library prerequisites",
        kMaxAdvertisedLibraries, out.size());
    out.resize(kMaxAdvertisedLibraries);
  }
  return out;
}

absl::Status ValidateAdvertisedLibraries(const std::vector<std::string>& names) {
  if (names.size() > kMaxAdvertisedLibraries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a worker advertises at most ", kMaxAdvertisedLibraries, " libraries, not ", names.size()));
  }
  for (const std::string& name : names) {
    if (!IsSoname(name)) {
      return absl::InvalidArgumentError(absl::StrCat("advertised library '",
                                                     absl::CEscape(name.substr(0, 80)),
                                                     "' is not a soname such as libcudnn.so.9"));
    }
  }
  return absl::OkStatus();
}

}  // namespace farm
