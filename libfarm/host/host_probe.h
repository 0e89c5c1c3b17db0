// What the machine a worker runs on is: platform, glibc, size.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace farm {

struct HostInfo {
  std::string os;        // "linux"
  std::string cpu_arch;  // "x86_64", "aarch64"
  std::string glibc;     // "2.36"
  std::string hostname;
  uint32_t cores = 0;
  uint64_t ram_bytes = 0;
};

HostInfo ProbeHost();

// Free bytes for an unprivileged user on the filesystem holding `path`.
absl::StatusOr<uint64_t> FreeDiskBytes(const std::string& path);

// The seeds' rule: one CUDA compile job per ~4 GiB of RAM, never more than the cores.
uint32_t DefaultSlots(uint32_t cores, uint64_t ram_bytes);

}  // namespace farm
