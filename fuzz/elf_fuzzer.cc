// libFuzzer target: ELF headers, version needs, device-code discovery and ar archives.
#include <cstddef>
#include <cstdint>

#include "libfarm/coverage/binary_inspector.h"
#include "libfarm/elf/ar_archive.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/version_needs.h"
#include "libfarm/fatbin/cubin_info.h"
#include "libfarm/fatbin/device_code.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const farm::ByteSpan bytes(data, size);
  if (auto elf = farm::ElfFile::Parse(bytes); elf.ok()) {
    (void)farm::ReadVersionNeeds(*elf);
    (void)farm::ReadElfDeviceCode(*elf);
    for (const farm::ElfSection& s : elf->sections()) (void)elf->SectionData(s);
    (void)elf->AddressToOffset(0x1000);
  }
  (void)farm::ReadCubinInfo(bytes);
  (void)farm::ReadArArchive(bytes);
  farm::Inspection inspection;
  farm::InspectBinary(bytes, "fuzz", inspection);
  return 0;
}
