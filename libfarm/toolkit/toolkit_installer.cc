#include "libfarm/toolkit/toolkit_installer.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/algorithm/container.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/file_lock.h"
#include "libfarm/files/json_file.h"
#include "libfarm/wheel/wheel_filename.h"
#include "libfarm/zip/zip_extract.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

std::string HostCpuArch() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
}

// The error for a release with no pin: what farmctl can install, and what PyPI offers.
absl::Status NoPin(const std::string& release, const std::string& platform_tag,
                   WheelSource& source) {
  auto offered = source.VersionsOnOffer("nvidia-cuda-nvcc", platform_tag);
  const bool on_pypi =
      offered.ok() &&
      absl::c_linear_search(std::vector<std::string>(absl::StrSplit(*offered, ", ")), release);
  return absl::NotFoundError(absl::StrCat(
      "no pinned CUDA toolkit ", release, ": farmctl installs ", PinnedReleases(),
      offered.ok() ? absl::StrCat("; nvidia-cuda-nvcc on PyPI for ", platform_tag,
                                  " has versions: ", *offered)
                   : absl::StrCat("; the versions of nvidia-cuda-nvcc on PyPI are unknown (",
                                  offered.status().message(), ")"),
      ". Fix: ",
      on_pypi ? absl::StrCat("pin ", release,
                             " in libfarm/toolkit/toolkit_pins.cc from the cuda-toolkit "
                             "metapackage that requires nvidia-cuda-nvcc==",
                             release, ", or install a pinned release")
              : "install one of the pinned releases"));
}

// Wheels that pip chose must be the ones pinned: name, version and CPU.
absl::Status CheckWheelFile(const std::string& path, const PinnedWheel& wheel,
                            const std::string& cpu_arch) {
  auto name = ParseWheelFilename(path);
  if (!name.ok()) return name.status();
  const bool platform_ok =
      std::any_of(name->platform_tags.begin(), name->platform_tags.end(),
                  [&](const std::string& tag) { return absl::EndsWith(tag, "_" + cpu_arch); });
  if (NormalizeDistributionName(name->distribution) != NormalizeDistributionName(wheel.package) ||
      name->version != wheel.version || !platform_ok) {
    return absl::DataLossError(absl::StrCat("pip returned ", fs::path(path).filename().string(),
                                            " for ", wheel.package, "==", wheel.version, " (",
                                            cpu_arch, ")"));
  }
  return absl::OkStatus();
}

// The zips store no usable modes: programs in bin/ and nvvm/bin/ (ELF or #! scripts) get
// 0755; everything else (headers, libraries, libdevice, nvcc.profile, bin/crt/*.stub)
// stays 0644. Shared libraries need no execute bit to be loaded.
absl::Status MarkPrograms(const std::string& root, const std::vector<std::string>& files) {
  for (const std::string& relative : files) {
    const std::string dir = fs::path(relative).parent_path().string();
    if (dir != "bin" && dir != "nvvm/bin") continue;
    const std::string path = (fs::path(root) / relative).string();
    char head[4] = {};
    std::ifstream(path, std::ios::binary).read(head, sizeof(head));
    const bool program = std::memcmp(head,
                                     "\x7f"
                                     "ELF",
                                     4) == 0 ||
                         std::memcmp(head, "#!", 2) == 0;
    if (program && ::chmod(path.c_str(), 0755) != 0) {
      return absl::InternalError(absl::StrCat("chmod ", path, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

// The layout the runfile toolkit has and builds expect: nvcc.profile links from
// lib$(_TARGET_SIZE_) (lib64), CMake's CUDA support and FindCUDAToolkit look for
// libcudart.so (and a library's libcublas.so); the wheels ship only lib/ and the versioned
// names (libcudart.so.13). Relative links, so the prefix can move (or be mounted elsewhere).
// `linked` names the libraries given a development link: the runtime's and the added
// libraries', never libnvvm's.
absl::Status AddRunfileLinks(const std::string& root, const std::vector<std::string>& linked) {
  std::error_code ec;
  const fs::path lib = fs::path(root) / "lib";
  if (!fs::exists(fs::symlink_status(fs::path(root) / "lib64", ec))) {
    fs::create_directory_symlink("lib", fs::path(root) / "lib64", ec);
    if (ec) return absl::InternalError(absl::StrCat("link lib64 in ", root, ": ", ec.message()));
  }
  for (const auto& entry : fs::directory_iterator(lib, ec)) {
    const std::string name = entry.path().filename().string();
    // libcublasLt.so.13 -> libcublasLt.so: one version number after ".so.".
    const size_t so = name.find(".so.");
    if (so == std::string::npos || name.find('.', so + 4) != std::string::npos ||
        !absl::c_linear_search(linked, name.substr(0, so))) {
      continue;
    }
    const fs::path link = lib / name.substr(0, so + 3);
    if (fs::exists(fs::symlink_status(link, ec))) continue;
    fs::create_symlink(name, link, ec);
    if (ec) return absl::InternalError(absl::StrCat("link ", link.string(), ": ", ec.message()));
  }
  if (ec) return absl::InternalError(absl::StrCat("list ", lib.string(), ": ", ec.message()));
  return absl::OkStatus();
}

// The libraries given development links: the runtime's, and those of the library wheels
// installed ("lib/libcublas.so.13" -> "libcublas").
std::vector<std::string> LinkedLibraries(const std::vector<std::string>& library_files) {
  std::vector<std::string> linked = {"libcudart"};
  for (const std::string& file : library_files) {
    const fs::path path(file);
    const std::string name = path.filename().string();
    if (path.parent_path() != "lib" || name.find(".so.") == std::string::npos) continue;
    linked.push_back(name.substr(0, name.find(".so.")));
  }
  return linked;
}

// A prefix that exists already: ours for this release (checked and returned), an empty
// directory (removed, then made), or anything else (refused).
absl::StatusOr<std::optional<ToolkitInstallResult>> ExistingPrefix(
    const std::string& prefix, const ToolkitInstallRequest& request) {
  std::error_code ec;
  if (!fs::exists(prefix, ec)) return std::nullopt;
  const std::string marker = (fs::path(prefix) / kToolkitMarkerFile).string();
  auto info = ReadJsonFile(marker);
  if (!info.ok()) {
    if (fs::is_directory(prefix, ec) && fs::is_empty(prefix, ec)) {
      fs::remove(prefix, ec);
      return std::nullopt;
    }
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, " exists and is not a toolkit farmctl installed (no ",
                     kToolkitMarkerFile, "). Fix: choose another --prefix, or remove ", prefix));
  }
  const std::string release = info->value("release", "");
  const std::string arch = info->value("cpu_arch", "");
  if (release != request.release || arch != request.cpu_arch) {
    return absl::FailedPreconditionError(absl::StrCat(
        prefix, " holds CUDA toolkit ", release, " for ", arch, ", not ", request.release, " for ",
        request.cpu_arch, ". Fix: choose another --prefix (one per release and CPU), or remove ",
        prefix));
  }
  std::vector<std::string> held;
  for (const auto& name : info->value("libraries", nlohmann::json::array())) {
    if (name.is_string()) held.push_back(name.get<std::string>());
  }
  for (const std::string& library : request.libraries) {
    if (absl::c_linear_search(held, library)) continue;
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, " holds CUDA toolkit ", release, " for ", arch, " without ", library,
                     ". Fix: choose another --prefix for a toolkit with ", library, ", or remove ",
                     prefix, " and install again with --libraries"));
  }
  // Prefixes installed before the runfile links existed get them now (idempotent).
  std::vector<std::string> library_files;
  for (const auto& file : info->value("library_files", nlohmann::json::array())) {
    if (file.is_string()) library_files.push_back(file.get<std::string>());
  }
  if (absl::Status s = AddRunfileLinks(prefix, LinkedLibraries(library_files)); !s.ok()) return s;
  auto check = CheckToolkit(prefix, {.expect_release = request.release});
  if (!check.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        prefix, " holds CUDA toolkit ", release, " for ", arch, " but fails its check (",
        check.status().message(), "). To make it again, remove ", prefix, " and install again"));
  }
  ToolkitInstallResult result;
  result.already_installed = true;
  result.check = *std::move(check);
  if (info->contains("wheels") && (*info)["wheels"].is_array()) {
    for (const auto& w : (*info)["wheels"]) {
      if (w.is_object()) result.wheels.push_back(w.value("file", ""));
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<ToolkitInstallResult> InstallToolkit(
    const ToolkitInstallRequest& original, WheelSource& source,
    const std::function<void(absl::string_view)>& progress) {
  auto say = [&](absl::string_view line) {
    if (progress) progress(line);
  };
  ToolkitInstallRequest request = original;
  if (request.cpu_arch.empty()) request.cpu_arch = HostCpuArch();
  const std::string platform_tag = ToolkitPlatformTag(request.cpu_arch);
  if (platform_tag.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no CUDA toolkit wheels for CPU '",
                                                   request.cpu_arch,
                                                   "'. Fix: pass --arch x86_64 or --arch aarch64"));
  }
  const ToolkitPin* pin = FindToolkitPin(request.release);
  if (pin == nullptr) return NoPin(request.release, platform_tag, source);
  std::vector<PinnedWheel> library_wheels;
  for (const std::string& library : request.libraries) {
    auto it = pin->libraries.find(library);
    if (it == pin->libraries.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no CUDA library '", library, "' for toolkit ", pin->release, ": farmctl adds ",
          ToolkitLibraryNames(), ". Fix: --libraries ", ToolkitLibraryNames()));
    }
    library_wheels.push_back(it->second);
  }
  if (request.prefix.empty()) {
    return absl::InvalidArgumentError("no --prefix: where should the toolkit go?");
  }
  std::error_code ec;
  const std::string prefix = fs::absolute(request.prefix, ec).lexically_normal().string();
  if (ec || prefix.empty() || prefix == "/") {
    return absl::InvalidArgumentError(absl::StrCat("bad --prefix '", request.prefix, "'"));
  }
  // lexically_normal keeps a trailing '/', which would put the lock inside the prefix.
  const std::string base = prefix.back() == '/' ? prefix.substr(0, prefix.size() - 1) : prefix;
  fs::create_directories(fs::path(base).parent_path(), ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", fs::path(base).parent_path().string(), ": ", ec.message()));
  }

  auto lock = FileLock::Acquire(base + ".lock", [&] {
    if (progress) progress(absl::StrCat("waiting for another install (", base, ".lock)"));
  });
  if (!lock.ok()) return lock.status();
  auto existing = ExistingPrefix(base, request);
  if (!existing.ok()) return existing.status();
  if (*existing) return **std::move(existing);

  // Leftovers of an install that died are ours to remove: we hold the lock.
  const std::string partial = base + ".partial";
  const std::string downloads = base + ".download";
  fs::remove_all(partial, ec);
  fs::remove_all(downloads, ec);
  absl::Cleanup cleanup = [&] {
    std::error_code e;
    fs::remove_all(partial, e);
    fs::remove_all(downloads, e);
  };
  fs::create_directories(partial, ec);
  if (ec)
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", partial, ": ", ec.message()));

  const std::string folder = ToolkitWheelFolder(pin->release);
  ToolkitInstallResult result;
  nlohmann::json wheels = nlohmann::json::array();
  std::vector<PinnedWheel> all = pin->wheels;
  all.insert(all.end(), library_wheels.begin(), library_wheels.end());
  std::vector<std::string> library_files;
  for (size_t i = 0; i < all.size(); ++i) {
    const PinnedWheel& wheel = all[i];
    const bool library = i >= pin->wheels.size();
    const std::string tag = WheelPlatformTag(wheel, request.cpu_arch);
    say(absl::StrCat("downloading ", wheel.package, "==", wheel.version, " (", tag, ")"));
    const std::string dir = (fs::path(downloads) / wheel.package).string();
    fs::create_directories(dir, ec);
    auto file = source.Download(wheel, tag, dir);
    if (!file.ok()) return file.status();
    if (absl::Status s = CheckWheelFile(*file, wheel, request.cpu_arch); !s.ok()) return s;
    auto digest = DigestOfFile(*file);
    if (!digest.ok()) return digest.status();
    auto files = ExtractZipFolder(*file, folder, partial);
    if (!files.ok()) return files.status();
    if (files->empty()) {
      return absl::DataLossError(
          absl::StrCat(fs::path(*file).filename().string(), " has nothing under ", folder));
    }
    if (absl::Status s = MarkPrograms(partial, *files); !s.ok()) return s;
    if (library) library_files.insert(library_files.end(), files->begin(), files->end());
    const std::string name = fs::path(*file).filename().string();
    result.wheels.push_back(name);
    wheels.push_back({{"package", wheel.package},
                      {"version", wheel.version},
                      {"file", name},
                      {"sha256", digest->hash()}});
  }

  if (absl::Status s = AddRunfileLinks(partial, LinkedLibraries(library_files)); !s.ok()) {
    return s;
  }
  say(absl::StrCat("checking ", partial));
  auto check = CheckToolkit(partial, {.expect_release = pin->release});
  if (!check.ok()) return check.status();
  if (absl::Status s = WriteJsonFileAtomically((fs::path(partial) / kToolkitMarkerFile).string(),
                                               {{"release", pin->release},
                                                {"cpu_arch", request.cpu_arch},
                                                {"pins_from", pin->source},
                                                {"wheels", wheels},
                                                {"libraries", request.libraries},
                                                {"library_files", library_files}});
      !s.ok()) {
    return s;
  }
  if (::rename(partial.c_str(), base.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", partial, " to ", base, ": ", std::strerror(errno)));
  }
  result.check = *std::move(check);
  result.check.root = base;
  result.check.not_run = absl::StrReplaceAll(result.check.not_run, {{partial, base}});
  return result;
}

}  // namespace farm
