#include "libfarm/host/host_probe.h"

#include <gnu/libc-version.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace farm {
namespace {

constexpr uint64_t kBytesPerCompileJob = 4ULL << 30;

}  // namespace

HostInfo ProbeHost() {
  HostInfo info;
  utsname uts{};
  if (uname(&uts) == 0) {
    info.os = absl::AsciiStrToLower(uts.sysname);
    info.cpu_arch = uts.machine;
    info.hostname = uts.nodename;
  }
  // "arm64" is what some tools say; wheels and manylinux tags say aarch64.
  if (info.cpu_arch == "arm64") info.cpu_arch = "aarch64";
  info.glibc = gnu_get_libc_version();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  info.cores = cores > 0 ? static_cast<uint32_t>(cores) : 1;
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    info.ram_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }
  return info;
}

absl::StatusOr<uint64_t> FreeDiskBytes(const std::string& path) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("statvfs ", path, ": ", std::strerror(errno)));
  }
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

uint32_t DefaultSlots(uint32_t cores, uint64_t ram_bytes) {
  uint64_t by_ram = ram_bytes / kBytesPerCompileJob;
  uint64_t slots = std::min<uint64_t>(std::max<uint32_t>(cores, 1), by_ram);
  return static_cast<uint32_t>(std::max<uint64_t>(slots, 1));
}

}  // namespace farm
