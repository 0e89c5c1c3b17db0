// The fat-binary containers a host ELF carries, and where each one came from.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/fatbin/fatbin_reader.h"

namespace farm {

enum class ContainerSection {
  kFatbin,       // .nv_fatbin: loaded by the CUDA runtime
  kRelocatable,  // __nv_relfatbin: -rdc/LTO input for a later device link
};

enum class ContainerOrigin {
  kTranslationUnit,  // one .cu file's code (wrapper version 1, or no wrapper seen)
  kDeviceLink,       // output of a device link (wrapper version 2) holding real code
  kDeviceLinkStub,   // device-link output without any kernel: what nvcc -shared adds from
                     // the CUDA runtime (cudadevrt) even when no file uses -rdc
};

std::string ContainerSectionName(ContainerSection section);  // ".nv_fatbin", "__nv_relfatbin"
std::string ContainerOriginName(ContainerOrigin origin);  // "translation-unit", "device-link", ...

struct DeviceCodeContainer {
  ContainerSection section = ContainerSection::kFatbin;
  ContainerOrigin origin = ContainerOrigin::kTranslationUnit;
  FatbinContainer container;  // offsets are relative to the start of the ELF file
};

// Every container in .nv_fatbin and __nv_relfatbin. Telling a device-link stub apart reads
// the (few) device-link cubins; everything else is read from headers only.
absl::StatusOr<std::vector<DeviceCodeContainer>> ReadElfDeviceCode(const ElfFile& elf);

}  // namespace farm
