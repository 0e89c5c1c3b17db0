#include "worker/python_interpreters.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// Prints: version, release, resolved executable, 1 if a virtualenv, 1 if it can make one.
constexpr char kProbe[] =
    "import os, sys\n"
    "try:\n"
    "    import venv, ensurepip\n"
    "    can = 1\n"
    "except Exception:\n"
    "    can = 0\n"
    "print('%d.%d' % sys.version_info[:2])\n"
    "print('%d.%d.%d' % sys.version_info[:3])\n"
    "print(os.path.realpath(sys.executable))\n"
    "print(int(sys.prefix != getattr(sys, 'base_prefix', sys.prefix)))\n"
    "print(can)\n";

// "3.11" from "python3.11", or "" for any other name.
std::string VersionOfName(const std::string& name) {
  static const std::regex kName("python(3\\.[0-9]+)");
  std::smatch m;
  return std::regex_match(name, m, kName) ? m[1].str() : "";
}

// Minor version for ordering "3.9" before "3.10".
int Minor(const std::string& version) {
  int minor = 0;
  std::vector<std::string> parts = absl::StrSplit(version, '.');
  if (parts.size() >= 2) (void)absl::SimpleAtoi(parts[1], &minor);
  return minor;
}

}  // namespace

bool IsVirtualenvBin(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir).parent_path() / "pyvenv.cfg", ec);
}

std::vector<std::string> PythonSearchDirs(const std::string& path_env, const std::string& home,
                                          const std::string& pyenv_root) {
  std::vector<std::string> dirs = {"/usr/local/bin", "/usr/bin"};
  for (absl::string_view d : absl::StrSplit(path_env, ':', absl::SkipEmpty())) {
    const fs::path dir{std::string(d)};
    if (dir.filename() == "shims" || IsVirtualenvBin(dir.string())) continue;
    dirs.emplace_back(d);
  }
  const std::string root = !pyenv_root.empty() ? pyenv_root
                           : !home.empty()     ? absl::StrCat(home, "/.pyenv")
                                               : "";
  if (!root.empty()) {
    std::vector<std::pair<std::vector<int>, std::string>> versions;
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(root) / "versions", ec), end; !ec && it != end;
         it.increment(ec)) {
      std::vector<int> key;
      for (absl::string_view part : absl::StrSplit(it->path().filename().string(), '.')) {
        int n = 0;
        key.push_back(absl::SimpleAtoi(part, &n) ? n : -1);
      }
      versions.push_back({key, (it->path() / "bin").string()});
    }
    std::sort(versions.rbegin(), versions.rend());
    for (const auto& v : versions) dirs.push_back(v.second);
  }
  std::vector<std::string> unique;
  for (const auto& d : dirs) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  }
  return unique;
}

std::vector<farm::v1::PythonInterpreter> FindPythonInterpreters(
    const std::vector<std::string>& dirs) {
  auto log = ComponentLogger("worker");
  std::map<std::string, farm::v1::PythonInterpreter> found;  // by version
  std::set<std::string> probed;                              // resolved candidate files
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> names;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!VersionOfName(it->path().filename().string()).empty()) names.push_back(it->path());
    }
    std::sort(names.begin(), names.end());
    for (const fs::path& candidate : names) {
      const std::string version = VersionOfName(candidate.filename().string());
      if (found.count(version) > 0) continue;
      const fs::path real = fs::canonical(candidate, ec);
      if (ec || ::access(candidate.c_str(), X_OK) != 0 || probed.count(real.string()) > 0) {
        continue;
      }
      auto r = RunCommand({candidate.string(), "-I", "-c", kProbe}, absl::Seconds(20));
      if (!r.ok() || r->exit_code != 0) continue;
      std::vector<std::string> lines = absl::StrSplit(r->stdout_text, '\n', absl::SkipEmpty());
      // A virtualenv's python is a link to a real one: the real one may still be found.
      if (lines.size() != 5 || lines[0] != version || lines[3] != "0") continue;
      probed.insert(real.string());
      if (lines[4] != "1") {
        log->warn(
            "{} cannot make virtualenvs (no venv/ensurepip module); not offered for builds. "
            "Fix: install python{}-venv",
            candidate.string(), version);
        continue;
      }
      farm::v1::PythonInterpreter p;
      p.set_version(version);
      p.set_release(lines[1]);
      p.set_path(lines[2]);
      found.emplace(version, std::move(p));
    }
  }
  std::vector<farm::v1::PythonInterpreter> out;
  for (auto& [version, p] : found) out.push_back(std::move(p));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return Minor(a.version()) < Minor(b.version()); });
  return out;
}

std::vector<farm::v1::PythonInterpreter> DetectPythonInterpreters() {
  return FindPythonInterpreters(
      PythonSearchDirs(GetEnv("PATH"), GetEnv("HOME"), GetEnv("PYENV_ROOT")));
}

std::vector<std::string> InterpreterPaths(const farm::v1::PythonInterpreter& python) {
  std::vector<std::string> paths = {std::filesystem::path(python.path()).parent_path().string()};
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(python.path(), ec);
  if (!ec) paths.push_back(real.parent_path().parent_path().string());
  return paths;
}

}  // namespace farm::worker
