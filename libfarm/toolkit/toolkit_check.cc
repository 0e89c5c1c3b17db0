#include "libfarm/toolkit/toolkit_check.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

std::string HostCpuArch() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
}

// Fixes for a toolkit built for another CPU than this host's.
std::string NativeToolkitFix(const std::string& host) {
  return absl::StrCat("use a toolkit built for ", host, " (farmctl toolkit install RELEASE --arch ",
                      host, " --prefix DIR)");
}
std::string ForeignToolkitFix(const std::string& arch, const std::string& host) {
  return absl::StrCat("Fix: ", NativeToolkitFix(host),
                      arch == "aarch64"
                          ? ", or let qemu-user run aarch64 programs: apt-get install "
                            "qemu-user-static, then (as root) bash scripts/binfmt-aarch64.sh"
                          : "");
}

bool IsScript(const std::string& path) {
  char head[2] = {};
  std::ifstream(path, std::ios::binary).read(head, sizeof(head));
  return head[0] == '#' && head[1] == '!';
}

// The loader an executable names (PT_INTERP, kept in .interp); empty for a static one.
std::string LoaderOf(const ElfFile& elf) {
  const ElfSection* interp = elf.FindSection(".interp");
  if (interp == nullptr) return "";
  auto data = elf.SectionData(*interp);
  if (!data.ok()) return "";
  std::string path(reinterpret_cast<const char*>(data->data()), data->size());
  return path.substr(0, path.find('\0'));
}

struct BinfmtEntry {
  bool enabled = false;
  std::string interpreter;
  uint64_t offset = 0;
  std::string magic;  // raw bytes
  std::string mask;   // raw bytes, empty: all ones
};

// Debian's Abseil has only the unchecked HexStringToBytes: check the digits first.
bool FromHex(absl::string_view hex, std::string& out) {
  if (hex.size() % 2 != 0 ||
      !std::all_of(hex.begin(), hex.end(), [](char c) { return absl::ascii_isxdigit(c); })) {
    return false;
  }
  out = absl::HexStringToBytes(hex);
  return true;
}

std::optional<BinfmtEntry> ParseBinfmtEntry(const std::string& text) {
  BinfmtEntry e;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    line = absl::StripAsciiWhitespace(line);
    if (line == "enabled") e.enabled = true;
    if (absl::ConsumePrefix(&line, "interpreter ")) e.interpreter = std::string(line);
    if (absl::ConsumePrefix(&line, "offset ") && !absl::SimpleAtoi(line, &e.offset)) {
      return std::nullopt;
    }
    if (absl::ConsumePrefix(&line, "magic ") && !FromHex(line, e.magic)) return std::nullopt;
    if (absl::ConsumePrefix(&line, "mask ") && !FromHex(line, e.mask)) return std::nullopt;
  }
  // Extension entries (no magic) match names, not contents: not what runs an ELF.
  if (e.magic.empty() || (!e.mask.empty() && e.mask.size() != e.magic.size())) {
    return std::nullopt;
  }
  return e;
}

}  // namespace

const std::vector<ToolkitFile>& RequiredToolkitFiles() {
  static const std::vector<ToolkitFile> files = {
      {"bin/nvcc", true},
      {"bin/nvcc.profile", false},
      {"nvvm/bin/cicc", true},
      {"bin/ptxas", true},
      {"bin/fatbinary", true},
      {"bin/cudafe++", true},
      {"nvvm/libdevice/libdevice.10.bc", false},
      {"include/crt/host_config.h", false},
      {"include/crt/host_defines.h", false},
      {"include/cuda_runtime.h", false},
  };
  return files;
}

absl::Status CheckToolkitFiles(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return absl::NotFoundError(absl::StrCat(
        "no CUDA toolkit at ", root,
        ": not a directory. Fix: point at a toolkit root (the directory holding bin/nvcc), "
        "e.g. /usr/local/cuda-13.0, or make one with farmctl toolkit install"));
  }
  std::vector<std::string> missing, not_executable;
  for (const ToolkitFile& f : RequiredToolkitFiles()) {
    const std::string path = (fs::path(root) / f.path).string();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      missing.push_back(path);
    } else if (f.executable && (st.st_mode & 0111) == 0) {
      not_executable.push_back(path);
    }
  }
  if (!missing.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "the CUDA toolkit at ", root, " is incomplete: missing ", absl::StrJoin(missing, ", "),
        ". Fix: reinstall it, or assemble a complete one from PyPI with farmctl toolkit install "
        "RELEASE --prefix DIR"));
  }
  if (!not_executable.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA toolkit at ", root,
                     " has tools that are not executable: ", absl::StrJoin(not_executable, ", "),
                     ". Fix: chmod +x ", absl::StrJoin(not_executable, " ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExecutableCpuArch(const std::string& path) {
  if (IsScript(path)) return std::string("script");
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  auto elf = ElfFile::Parse(mapped->bytes());
  if (!elf.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a 64-bit ELF executable: ", elf.status().message()));
  }
  return ElfMachineName(elf->machine());
}

std::optional<BinfmtHandler> FindBinfmtHandler(const std::string& path,
                                               const std::string& binfmt_dir) {
  std::ifstream file(path, std::ios::binary);
  std::string head(256, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(file.gcount()));
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(binfmt_dir, ec)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& entry : entries) {
    const std::string name = entry.filename().string();
    if (name == "register" || name == "status") continue;
    std::ifstream in(entry);
    std::stringstream text;
    text << in.rdbuf();
    auto e = ParseBinfmtEntry(text.str());
    if (!e || !e->enabled || e->offset + e->magic.size() > head.size()) continue;
    bool match = true;
    for (size_t i = 0; i < e->magic.size() && match; ++i) {
      const char mask = e->mask.empty() ? '\xff' : e->mask[i];
      match = (head[e->offset + i] & mask) == (e->magic[i] & mask);
    }
    if (match) return BinfmtHandler{name, e->interpreter};
  }
  return std::nullopt;
}

absl::Status CheckHostCanRun(const std::string& path) {
  // The kernel runs its interpreter, which is this host's (a wrapper around the real nvcc).
  if (IsScript(path)) return absl::OkStatus();
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  auto elf = ElfFile::Parse(mapped->bytes());
  if (!elf.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a 64-bit ELF executable: ", elf.status().message()));
  }
  const std::string arch = ElfMachineName(elf->machine());
  const std::string host = HostCpuArch();
  if (arch == host) return absl::OkStatus();
  auto handler = FindBinfmtHandler(path);
  if (!handler) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is an ", arch, " executable and this ", host,
                     " host cannot run it: no binfmt_misc handler takes ", arch,
                     " executables (exec fails "
                     "with 'Exec format error'). ",
                     ForeignToolkitFix(arch, host)));
  }
  const std::string loader = LoaderOf(*elf);
  if (loader.empty()) return absl::OkStatus();
  // Where qemu-user looks for the loader: -L / $QEMU_LD_PREFIX, Debian's default prefix,
  // then the path itself.
  std::vector<std::string> places;
  if (const std::string prefix = GetEnv("QEMU_LD_PREFIX"); !prefix.empty()) {
    places.push_back(absl::StrCat(prefix, loader));
  }
  places.push_back(absl::StrCat("/etc/qemu-binfmt/", arch, loader));
  places.push_back(loader);
  std::error_code ec;
  for (const std::string& p : places) {
    if (fs::exists(p, ec)) return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      path, " is an ", arch, " executable; binfmt_misc hands it to ", handler->interpreter, " (",
      handler->name, "), but its loader ", loader, " is in none of ", absl::StrJoin(places, ", "),
      ". Fix: set QEMU_LD_PREFIX to an ", arch, " root",
      arch == "aarch64"
          ? " (apt-get install libc6-arm64-cross; QEMU_LD_PREFIX=/usr/aarch64-linux-gnu)"
          : "",
      ", or ", NativeToolkitFix(host)));
}

absl::StatusOr<ToolkitCheck> CheckToolkit(const std::string& root,
                                          const ToolkitCheckOptions& options) {
  if (absl::Status s = CheckToolkitFiles(root); !s.ok()) return s;
  ToolkitCheck check;
  check.root = root;
  const std::string nvcc = (fs::path(root) / "bin" / "nvcc").string();
  auto arch = ExecutableCpuArch(nvcc);
  if (!arch.ok()) return arch.status();
  check.cpu_arch = *arch;
  if (absl::Status s = CheckHostCanRun(nvcc); !s.ok()) {
    if (options.must_run) return s;
    check.not_run = std::string(s.message());
    return check;
  }
  // Under qemu-user nvcc takes seconds to start; natively it takes milliseconds.
  auto run = RunCommand({nvcc, "--version"}, absl::Seconds(120));
  if (!run.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot run ", nvcc, " (", check.cpu_arch, ") on this ", HostCpuArch(),
        " host: ", run.status().message(), ". ", ForeignToolkitFix(check.cpu_arch, HostCpuArch())));
  }
  if (run->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(nvcc, " --version exited with ", run->exit_code, ": ",
                     absl::StripAsciiWhitespace(run->stderr_text + run->stdout_text),
                     check.cpu_arch == HostCpuArch()
                         ? ""
                         : absl::StrCat(". ", ForeignToolkitFix(check.cpu_arch, HostCpuArch()))));
  }
  auto version = ParseNvccVersion(run->stdout_text);
  if (!version.ok()) return version.status();
  check.ran_nvcc = true;
  check.version = version->first;
  check.release = version->second;
  if (!options.expect_release.empty() && check.release != "V" + options.expect_release) {
    return absl::FailedPreconditionError(absl::StrCat(nvcc, " says ", check.release, ", expected V",
                                                      options.expect_release,
                                                      ". Fix: reinstall the toolkit"));
  }
  return check;
}

absl::StatusOr<ToolkitInfo> ProbeUsableToolkit(const std::string& root) {
  auto check = CheckToolkit(root, {.must_run = true});
  if (!check.ok()) return check.status();
  return ProbeToolkit(root);
}

}  // namespace farm
