#include "libfarm/toolkit/toolkit_probe.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace fs = std::filesystem;

absl::StatusOr<std::pair<std::string, std::string>> ParseNvccVersion(const std::string& text) {
  // "Cuda compilation tools, release 13.0, V13.0.88"
  static const std::regex kRelease(R"(release (\d+\.\d+), (V[0-9.]+))");
  std::smatch m;
  if (!std::regex_search(text, m, kRelease)) {
    return absl::InvalidArgumentError(
        absl::StrCat("no 'release X.Y, VX.Y.Z' line in nvcc --version output: ", text));
  }
  return std::make_pair(m[1].str(), m[2].str());
}

std::vector<std::string> ParseGpuCodeList(const std::string& text) {
  static const std::regex kSm(R"(^sm_\d+[af]?$)");
  std::vector<std::string> sms;
  for (absl::string_view line : absl::StrSplit(text, absl::ByAnyChar("\n\r "), absl::SkipEmpty())) {
    std::string s(line);
    if (std::regex_match(s, kSm)) sms.push_back(s);
  }
  return sms;
}

absl::StatusOr<ToolkitInfo> ProbeToolkit(const std::string& root) {
  const std::string nvcc = (fs::path(root) / "bin" / "nvcc").string();
  std::error_code ec;
  if (!fs::is_regular_file(nvcc, ec)) {
    return absl::NotFoundError(absl::StrCat("no nvcc at ", nvcc,
                                            ". Fix: point --cuda-path at a toolkit root such as "
                                            "/usr/local/cuda-13.0"));
  }
  auto version_run = RunCommand({nvcc, "--version"}, absl::Seconds(30));
  if (!version_run.ok()) return version_run.status();
  if (version_run->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        nvcc, " --version exited with ", version_run->exit_code, ": ", version_run->stderr_text));
  }
  auto version = ParseNvccVersion(version_run->stdout_text);
  if (!version.ok()) return version.status();
  auto list_run = RunCommand({nvcc, "--list-gpu-code"}, absl::Seconds(30));
  if (!list_run.ok()) return list_run.status();
  if (list_run->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        nvcc, " --list-gpu-code exited with ", list_run->exit_code, ": ", list_run->stderr_text));
  }
  ToolkitInfo info;
  info.root = fs::weakly_canonical(root, ec).string();
  if (ec) info.root = root;
  info.version = version->first;
  info.release = version->second;
  info.sms = ParseGpuCodeList(list_run->stdout_text);
  if (info.sms.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(nvcc, " --list-gpu-code listed no sm_XX target"));
  }
  return info;
}

namespace {

// A toolkit root holds the real nvcc executable; /usr/local/bin may hold wrapper scripts
// named nvcc and ptxas that exec the toolkit's, which must not count as a second toolkit.
bool IsToolkitRoot(const fs::path& root) {
  std::ifstream nvcc(root / "bin" / "nvcc", std::ios::binary);
  char magic[4] = {};
  nvcc.read(magic, sizeof(magic));
  std::error_code ec;
  return nvcc.gcount() == 4 &&
         std::memcmp(magic,
                     "\x7f"
                     "ELF",
                     4) == 0 &&
         fs::is_regular_file(root / "bin" / "ptxas", ec);
}

}  // namespace

std::vector<std::string> DiscoverToolkitRoots() {
  std::vector<fs::path> candidates;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const std::string v = GetEnv(var); !v.empty()) candidates.emplace_back(v);
  }
  const std::string path = GetEnv("PATH");
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    fs::path nvcc = fs::path(std::string(dir)) / "nvcc";
    std::error_code ec;
    if (fs::is_regular_file(nvcc, ec)) {
      candidates.push_back(fs::canonical(nvcc, ec).parent_path().parent_path());
    }
  }
  std::error_code ec;
  std::vector<fs::path> local;
  for (const auto& entry : fs::directory_iterator("/usr/local", ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "cuda" || name.starts_with("cuda-")) local.push_back(entry.path());
  }
  std::sort(local.begin(), local.end());
  candidates.insert(candidates.end(), local.begin(), local.end());

  std::vector<std::string> roots;
  std::set<std::string> seen;
  for (const auto& c : candidates) {
    if (!IsToolkitRoot(c)) continue;
    std::error_code e;
    std::string canonical = fs::canonical(c, e).string();
    if (e || !seen.insert(canonical).second) continue;
    roots.push_back(canonical);
  }
  return roots;
}

}  // namespace farm
